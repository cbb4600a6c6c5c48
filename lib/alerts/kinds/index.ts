import { deliveryBody, signDelivery } from '../../rules/webhooks.js'
import { alertmanagerUrl, type ChannelKind } from '../../rules/alert-channels.js'
import { bodyLines, isBad, type MessageBody } from '../message.js'
import type { PostRequest } from '../../webhooks/post.js'
import { discordPayload, ntfyPayload, slackPayload, teamsPayload } from './chat.js'
import { alertmanagerPayload, ALERTMANAGER_FIRING_MS, pagerdutyEvents } from './incident.js'

/** An e-mail as its channel sends it. */
export interface Email {
  subject: string
  text: string
  html: string
}

/**
 * What a message becomes for a channel: HTTP requests (all must be accepted, or, for the several
 * Alertmanagers of an HA pair, `any` one) or an e-mail.
 */
export type Outbound = { http: PostRequest[]; need: 'all' | 'any' } | { email: Email }

/** What rendering needs besides the message: the channel, the message's id, the clock, where links point. */
export interface RenderContext {
  kind: ChannelKind
  config: Record<string, unknown>
  secrets: Record<string, unknown>
  messageId: number
  now: Date
  publicUrl: string
}

const json = (url: string, payload: unknown, headers: Record<string, string> = {}): PostRequest => ({
  url,
  headers,
  body: JSON.stringify(payload)
})

export function render(body: MessageBody, ctx: RenderContext): Outbound {
  const at = new Date(body.at)
  const link = ctx.publicUrl
  const all = { ...ctx.config, ...ctx.secrets }
  switch (ctx.kind) {
    case 'email':
      return { email: email(body, at, link) }
    case 'slack':
      return { http: [json(String(all.url), slackPayload(body, at, link))], need: 'all' }
    case 'discord':
      return { http: [json(String(all.url), discordPayload(body, at, link))], need: 'all' }
    case 'teams':
      return { http: [json(String(all.url), teamsPayload(body, at, link))], need: 'all' }
    case 'ntfy': {
      const headers: Record<string, string> = typeof all.token === 'string' ? { authorization: `Bearer ${all.token}` } : {}
      return {
        http: [json(String(all.url), ntfyPayload(body, at, link, String(all.topic), Number(all.priority ?? 4)), headers)],
        need: 'all'
      }
    }
    case 'pagerduty': {
      const events =
        body.items.length > 0
          ? pagerdutyEvents(body, at, link, String(all.routing_key), String(all.severity))
          : plainEvents(body, ctx, link)
      return { http: events.map((e) => json(String(all.url), e)), need: 'all' }
    }
    case 'alertmanager': {
      const alerts = body.items.length > 0 ? alertmanagerPayload(body.items, ctx.now, link) : plainAlert(body, ctx, link)
      return { http: (all.urls as string[]).map((u) => json(alertmanagerUrl(u), alerts)), need: 'any' }
    }
    case 'webhook': {
      // Standard Webhooks, as the service's own webhooks: the message id is the same on every attempt.
      const id = `alert-message-${ctx.messageId}`
      const text = deliveryBody({ type: 'alert.message', at, data: JSON.stringify(body) })
      const timestamp = Math.floor(ctx.now.getTime() / 1000)
      const signature = signDelivery({ secret: String(all.secret), id, timestamp, body: text })
      return {
        http: [
          {
            url: String(all.url),
            body: text,
            headers: { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signature }
          }
        ],
        need: 'all'
      }
    }
  }
}

/** A test or a channel's failing as a PagerDuty event: a test triggers and resolves at once. */
function plainEvents(body: MessageBody, ctx: RenderContext, link: string): Array<Record<string, unknown>> {
  const key = String(ctx.secrets.routing_key)
  const dedup = body.kind === 'test' ? `site-status/test-${ctx.messageId}` : `site-status/channel-failing/${body.policy ?? body.title}`
  const trigger = {
    routing_key: key,
    event_action: 'trigger',
    dedup_key: dedup.slice(0, 255),
    payload: {
      summary: body.title.slice(0, 1024),
      source: 'site-status',
      severity: body.kind === 'test' ? 'info' : 'warning',
      timestamp: body.at
    },
    client: 'Site Status API',
    client_url: link
  }
  const resolve = { routing_key: key, event_action: 'resolve', dedup_key: dedup.slice(0, 255) }
  if (body.kind === 'test') return [trigger, resolve]
  return [isBad(body) ? trigger : resolve]
}

/** A test or a channel's failing as one Alertmanager alert (a test ends a minute later). */
function plainAlert(body: MessageBody, ctx: RenderContext, link: string): Array<Record<string, unknown>> {
  const test = body.kind === 'test'
  const ends =
    test || !isBad(body) ? new Date(ctx.now.getTime() + (test ? 60_000 : 0)) : new Date(ctx.now.getTime() + ALERTMANAGER_FIRING_MS)
  return [
    {
      labels: {
        alertname: test ? 'SiteStatusTest' : 'AlertChannelFailing',
        source: 'site-status',
        ...(body.policy === null ? {} : { channel: body.policy })
      },
      annotations: { summary: body.title },
      startsAt: body.at,
      endsAt: ends.toISOString(),
      generatorURL: link
    }
  ]
}

const escapeHtml = (s: string): string =>
  s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;').replaceAll("'", '&#39;')

function email(body: MessageBody, at: Date, link: string): Email {
  const lines = bodyLines(body, at)
  const subject = `[Site Status] ${body.title}`.replace(/[\r\n]+/g, ' ').slice(0, 250)
  const text = [body.title, '', ...lines, '', `Site Status API: ${link}`, ''].join('\n')
  const colour = isBad(body) ? '#d93f0b' : '#2da44e'
  const html = [
    '<!doctype html><html><body style="font-family: sans-serif">',
    `<h2 style="color: ${colour}">${escapeHtml(body.title)}</h2>`,
    lines.length > 0 ? `<ul>${lines.map((l) => `<li>${escapeHtml(l)}</li>`).join('')}</ul>` : '',
    `<p><a href="${escapeHtml(link)}">Site Status API</a></p>`,
    '</body></html>'
  ].join('\n')
  return { subject, text, html }
}
