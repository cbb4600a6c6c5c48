import { bodyLines, isBad, type MessageBody } from '../message.js'

/*
 * Chat channels: one POST of JSON per message, shaped as each service documents it. Text that the
 * service would read as markup or a mention is neutralised: a monitor's name is the operator's, but
 * it must not ping @channel or render links the operator did not write.
 */

/** Slack's mrkdwn control characters, escaped as Slack documents (&, <, >). */
const slackEscape = (s: string): string => s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;')

/** Slack incoming webhook (also Mattermost): `text` for notifications and Mattermost, `blocks` for Slack's layout. */
export function slackPayload(body: MessageBody, at: Date, link: string): Record<string, unknown> {
  const title = slackEscape(body.title)
  const lines = bodyLines(body, at).map(slackEscape)
  const text = [`*${title}*`, ...(lines.length > 1 || lines[0] !== body.title ? lines : [])].join('\n')
  return {
    text,
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: body.title.slice(0, 150), emoji: false } },
      ...(lines.length > 0 ? [{ type: 'section', text: { type: 'mrkdwn', text: lines.join('\n').slice(0, 3000) } }] : []),
      { type: 'context', elements: [{ type: 'mrkdwn', text: slackEscape(`Site Status API · ${link}`).slice(0, 3000) }] }
    ]
  }
}

const RED = 0xd93f0b
const GREEN = 0x2da44e

/** Discord webhook: plain `content` for notifications, one embed with the lines; no mention is ever parsed. */
export function discordPayload(body: MessageBody, at: Date, link: string): Record<string, unknown> {
  const lines = bodyLines(body, at)
  return {
    content: body.title.slice(0, 2000),
    allowed_mentions: { parse: [] },
    embeds: [
      {
        title: body.title.slice(0, 256),
        description: lines.join('\n').slice(0, 4096) || body.title.slice(0, 4096),
        color: isBad(body) ? RED : GREEN,
        timestamp: body.at,
        footer: { text: `Site Status API · ${link}`.slice(0, 2048) }
      }
    ]
  }
}

/** Teams Workflows webhook: a message with one Adaptive Card attachment. */
export function teamsPayload(body: MessageBody, at: Date, link: string): Record<string, unknown> {
  const lines = bodyLines(body, at)
  return {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        contentUrl: null,
        content: {
          $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
          type: 'AdaptiveCard',
          version: '1.4',
          body: [
            {
              type: 'TextBlock',
              text: body.title,
              weight: 'Bolder',
              size: 'Medium',
              wrap: true,
              color: isBad(body) ? 'Attention' : 'Good'
            },
            ...lines.map((text) => ({ type: 'TextBlock', text, wrap: true, spacing: 'Small' })),
            { type: 'TextBlock', text: `Site Status API · ${body.at}`, isSubtle: true, size: 'Small', wrap: true }
          ],
          actions: [{ type: 'Action.OpenUrl', title: 'Open', url: link }]
        }
      }
    ]
  }
}

/** ntfy: publish as JSON to the server's root URL. */
export function ntfyPayload(body: MessageBody, at: Date, link: string, topic: string, priority: number): Record<string, unknown> {
  const bad = isBad(body)
  return {
    topic,
    title: body.title.slice(0, 250),
    message: bodyLines(body, at).join('\n') || body.title,
    priority: bad ? priority : Math.min(priority, 3),
    tags: [bad ? 'rotating_light' : 'white_check_mark'],
    click: link
  }
}
