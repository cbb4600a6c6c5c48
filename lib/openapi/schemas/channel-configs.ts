import { NTFY_URL, PAGERDUTY_URL } from '../../rules/alert-channels.js'
import type { Json } from '../parts.js'

/** Each kind's `config`, as docs/decisions.md (Alerts) writes them down. */
const url = (description: string): Json => ({ type: 'string', maxLength: 2048, format: 'uri', description })
const secret = (description: string): Json => ({
  type: 'string',
  description: `${description} Secret: sealed at rest, never shown back.`,
  writeOnly: true
})
const config = (kind: string, description: string, required: string[], properties: Json): Json => ({
  type: 'object',
  title: kind,
  description,
  required,
  properties,
  additionalProperties: false
})

/** Each kind's `config`, as written in docs/decisions.md (Alerts: channel kinds). */
export const channelConfigs: Json = {
  email: config('email', 'SMTP through nodemailer.', ['host', 'from', 'to'], {
    host: { type: 'string', maxLength: 253, description: 'The SMTP server (its addresses must pass the address policy).' },
    port: { type: 'integer', minimum: 1, maximum: 65535, description: 'Default: 587 (starttls), 465 (tls), 25 (none).' },
    security: {
      type: 'string',
      enum: ['starttls', 'tls', 'none'],
      description: 'STARTTLS required (the default), TLS from the start, or none.'
    },
    username: { type: 'string', maxLength: 200 },
    password: secret('With `username`.'),
    from: { type: 'string', format: 'email' },
    to: { type: 'array', minItems: 1, maxItems: 20, uniqueItems: true, items: { type: 'string', format: 'email' } }
  }),
  slack: config('slack', 'A Slack incoming webhook; the same payload serves a Mattermost incoming webhook.', ['url'], {
    url: secret('The incoming webhook URL.')
  }),
  discord: config('discord', 'A Discord channel webhook.', ['url'], { url: secret('The webhook URL.') }),
  teams: config(
    'teams',
    'A Microsoft Teams Workflows webhook ("Post to a channel when a webhook request is received"); an Adaptive Card.',
    ['url'],
    {
      url: secret('The workflow URL.')
    }
  ),
  pagerduty: config('pagerduty', 'PagerDuty Events API v2: a trigger per outage (a group: one), resolved when it ends.', ['routing_key'], {
    routing_key: secret('The integration (routing) key.'),
    url: url(`The Events API endpoint (default ${PAGERDUTY_URL}).`),
    severity: {
      type: 'string',
      enum: ['critical', 'error', 'warning', 'info'],
      description: 'Of outages (default critical); notices are `warning`.'
    }
  }),
  ntfy: config('ntfy', 'ntfy: published as JSON to the server.', ['topic'], {
    url: url(`The ntfy server (default ${NTFY_URL}).`),
    topic: secret('The topic (1 to 64 letters, digits, - or _): on a public server, the topic is the password.'),
    token: secret('An access token, sent as Bearer.'),
    priority: { type: 'integer', minimum: 1, maximum: 5, description: 'Of bad news (default 4); good news at most 3.' }
  }),
  alertmanager: config(
    'alertmanager',
    'Prometheus Alertmanager API v2 (`POST /api/v2/alerts` under each URL), every outage its own alert, resolved by `endsAt`.',
    ['urls'],
    {
      urls: {
        type: 'array',
        minItems: 1,
        maxItems: 5,
        uniqueItems: true,
        items: url('An Alertmanager (base URL); several for an HA pair.')
      }
    }
  ),
  webhook: config(
    'webhook',
    'A signed webhook (Standard Webhooks, type `alert.message`), its secret made and shown once at creation.',
    ['url'],
    {
      url: url('The receiver.')
    }
  )
}
