import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'

/*
 * What each service accepts, as JSON Schemas written from its documentation (the limits are the
 * documented ones): receivers in the tests check every payload against them.
 * - Slack: "Sending messages using incoming webhooks" (a JSON body with `text`, optional `blocks`)
 *   and the Block Kit reference (header: plain_text up to 150; section: text up to 3,000;
 *   context: up to 10 elements). Mattermost's incoming webhooks read the same `text`.
 * - Discord: "Execute Webhook" (content up to 2,000; up to 10 embeds; title 256, description
 *   4,096, footer text 2,048; color an integer; timestamp ISO 8601; allowed_mentions.parse).
 * - Microsoft Teams Workflows: "Post to a channel when a webhook request is received": a message
 *   with `attachments`, each `contentType` application/vnd.microsoft.card.adaptive and an
 *   Adaptive Card (`type` AdaptiveCard, `version`, `body` of elements; TextBlock needs `text`).
 * - PagerDuty Events API v2 "Send an Alert Event": routing_key (32 characters), event_action
 *   trigger/acknowledge/resolve, dedup_key up to 255; a trigger's payload needs summary (up to
 *   1,024), source and severity (critical, error, warning, info).
 * - ntfy "Publish as JSON": topic required; message, title, tags, priority 1-5, click a URL.
 */

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv2020) => unknown
const ajv = new Ajv2020({ strict: true, strictRequired: false, allErrors: true })
addFormats(ajv)

const plainText = (max: number) => ({
  type: 'object',
  required: ['type', 'text'],
  properties: { type: { const: 'plain_text' }, text: { type: 'string', minLength: 1, maxLength: max }, emoji: { type: 'boolean' } },
  additionalProperties: false
})
const mrkdwn = (max: number) => ({
  type: 'object',
  required: ['type', 'text'],
  properties: { type: { const: 'mrkdwn' }, text: { type: 'string', minLength: 1, maxLength: max } },
  additionalProperties: false
})

export const SLACK = {
  type: 'object',
  required: ['text'],
  properties: {
    text: { type: 'string', minLength: 1, maxLength: 40_000 },
    blocks: {
      type: 'array',
      maxItems: 50,
      items: {
        oneOf: [
          {
            type: 'object',
            required: ['type', 'text'],
            properties: { type: { const: 'header' }, text: plainText(150) },
            additionalProperties: false
          },
          {
            type: 'object',
            required: ['type', 'text'],
            properties: { type: { const: 'section' }, text: mrkdwn(3000) },
            additionalProperties: false
          },
          {
            type: 'object',
            required: ['type', 'elements'],
            properties: { type: { const: 'context' }, elements: { type: 'array', minItems: 1, maxItems: 10, items: mrkdwn(3000) } },
            additionalProperties: false
          }
        ]
      }
    }
  },
  additionalProperties: false
}

export const DISCORD = {
  type: 'object',
  anyOf: [{ required: ['content'] }, { required: ['embeds'] }],
  properties: {
    content: { type: 'string', maxLength: 2000 },
    allowed_mentions: {
      type: 'object',
      properties: { parse: { type: 'array', items: { enum: ['roles', 'users', 'everyone'] } } },
      additionalProperties: false
    },
    embeds: {
      type: 'array',
      maxItems: 10,
      items: {
        type: 'object',
        properties: {
          title: { type: 'string', maxLength: 256 },
          description: { type: 'string', maxLength: 4096 },
          url: { type: 'string', format: 'uri' },
          color: { type: 'integer', minimum: 0, maximum: 0xffffff },
          timestamp: { type: 'string', format: 'date-time' },
          footer: {
            type: 'object',
            required: ['text'],
            properties: { text: { type: 'string', maxLength: 2048 } },
            additionalProperties: false
          }
        },
        additionalProperties: false
      }
    }
  },
  additionalProperties: false
}

export const TEAMS = {
  type: 'object',
  required: ['type', 'attachments'],
  properties: {
    type: { const: 'message' },
    attachments: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['contentType', 'content'],
        properties: {
          contentType: { const: 'application/vnd.microsoft.card.adaptive' },
          contentUrl: { type: 'null' },
          content: {
            type: 'object',
            required: ['type', 'version', 'body'],
            properties: {
              $schema: { const: 'http://adaptivecards.io/schemas/adaptive-card.json' },
              type: { const: 'AdaptiveCard' },
              version: { type: 'string', pattern: '^1\\.[0-6]$' },
              body: {
                type: 'array',
                minItems: 1,
                items: {
                  type: 'object',
                  required: ['type', 'text'],
                  properties: {
                    type: { const: 'TextBlock' },
                    text: { type: 'string', minLength: 1 },
                    wrap: { type: 'boolean' },
                    weight: { enum: ['Default', 'Lighter', 'Bolder'] },
                    size: { enum: ['Default', 'Small', 'Medium', 'Large', 'ExtraLarge'] },
                    color: { enum: ['Default', 'Dark', 'Light', 'Accent', 'Good', 'Warning', 'Attention'] },
                    isSubtle: { type: 'boolean' },
                    spacing: { enum: ['None', 'Small', 'Default', 'Medium', 'Large', 'ExtraLarge', 'Padding'] }
                  },
                  additionalProperties: false
                }
              },
              actions: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['type', 'url'],
                  properties: { type: { const: 'Action.OpenUrl' }, title: { type: 'string' }, url: { type: 'string', format: 'uri' } },
                  additionalProperties: false
                }
              }
            },
            additionalProperties: false
          }
        },
        additionalProperties: false
      }
    }
  },
  additionalProperties: false
}

export const PAGERDUTY = {
  type: 'object',
  required: ['routing_key', 'event_action'],
  properties: {
    routing_key: { type: 'string', minLength: 32, maxLength: 32 },
    event_action: { enum: ['trigger', 'acknowledge', 'resolve'] },
    dedup_key: { type: 'string', minLength: 1, maxLength: 255 },
    payload: {
      type: 'object',
      required: ['summary', 'source', 'severity'],
      properties: {
        summary: { type: 'string', minLength: 1, maxLength: 1024 },
        source: { type: 'string', minLength: 1 },
        severity: { enum: ['critical', 'error', 'warning', 'info'] },
        timestamp: { type: 'string', format: 'date-time' },
        component: { type: 'string' },
        group: { type: 'string' },
        class: { type: 'string' },
        custom_details: { type: 'object' }
      },
      additionalProperties: false
    },
    images: { type: 'array', items: { type: 'object', required: ['src'] } },
    links: {
      type: 'array',
      items: {
        type: 'object',
        required: ['href'],
        properties: { href: { type: 'string', format: 'uri' }, text: { type: 'string' } },
        additionalProperties: false
      }
    },
    client: { type: 'string' },
    client_url: { type: 'string', format: 'uri' }
  },
  if: { properties: { event_action: { const: 'trigger' } } },
  then: { required: ['payload'] },
  additionalProperties: false
}

export const NTFY = {
  type: 'object',
  required: ['topic'],
  properties: {
    topic: { type: 'string', pattern: '^[-_A-Za-z0-9]{1,64}$' },
    message: { type: 'string', minLength: 1, maxLength: 4096 },
    title: { type: 'string', maxLength: 250 },
    tags: { type: 'array', items: { type: 'string' } },
    priority: { type: 'integer', minimum: 1, maximum: 5 },
    click: { type: 'string', format: 'uri' },
    markdown: { type: 'boolean' }
  },
  additionalProperties: false
}

export const receiverSchemas: Record<'slack' | 'discord' | 'teams' | 'pagerduty' | 'ntfy', ValidateFunction> = {
  slack: ajv.compile(SLACK),
  discord: ajv.compile(DISCORD),
  teams: ajv.compile(TEAMS),
  pagerduty: ajv.compile(PAGERDUTY),
  ntfy: ajv.compile(NTFY)
}

/** The schema's complaints about `payload`, as text (empty when it passes). */
export function problems(validate: ValidateFunction, payload: unknown): string[] {
  return validate(payload) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''}`)
}
