/**
 * The reusable parts of the OpenAPI document: the schemas (by what they describe, in schemas/),
 * headers, parameters and the error responses.
 */
import { BADGE_STYLES, MAX_LABEL_LENGTH } from '../badge/describe.js'
import { LOGO_NAMES } from '../badge/logos.js'
import { BADGE_CACHE_CONTROL, NO_STORE } from '../badge/renderer.js'
import { MAX_SLUG_LENGTH } from '../rules/status-page-fields.js'
import { ref, type Json } from './parts.js'
import { badgeSchemas } from './schemas/badges.js'
import { checkSchemas } from './schemas/checks.js'
import { checkSpecSchemas } from './schemas/check-spec.js'
import { maintenanceSchemas } from './schemas/maintenance.js'
import { pageRecordSchemas } from './schemas/page-records.js'
import { serviceSchemas } from './schemas/service.js'
import { settingsSchemas } from './schemas/settings.js'
import { siteSchemas } from './schemas/sites.js'
import { statusPageViewSchemas } from './schemas/status-page-view.js'
import { webhookSchemas } from './schemas/webhooks.js'
import { alertSchemas } from './schemas/alerts.js'
import { heartbeatSchemas } from './schemas/heartbeats.js'
import { monitorSchemas } from './schemas/monitors.js'
import { configSchemas } from './schemas/config.js'

const schemas: Json = {
  ...serviceSchemas,
  ...checkSchemas,
  ...checkSpecSchemas,
  ...siteSchemas,
  ...settingsSchemas,
  ...maintenanceSchemas,
  ...pageRecordSchemas,
  ...configSchemas,
  ...webhookSchemas,
  ...alertSchemas,
  ...heartbeatSchemas,
  ...monitorSchemas,
  ...badgeSchemas,
  ...statusPageViewSchemas
}

const integerHeader = (description: string): Json => ({ description, schema: { type: 'integer', minimum: 0 } })

const headers: Json = {
  'RateLimit-Limit': integerHeader("The key's limit of request units per minute."),
  'RateLimit-Remaining': integerHeader('Units left in the current 60-second window.'),
  'RateLimit-Reset': integerHeader('Seconds until the full limit is back.'),
  'Retry-After': { description: 'Whole seconds to wait before retrying.', required: true, schema: { type: 'integer', minimum: 1 } },
  'WWW-Authenticate': {
    description: 'Bearer, with the reason as error="...".',
    required: true,
    schema: { type: 'string', pattern: '^Bearer' }
  },
  Allow: { description: 'The methods this path accepts.', required: true, schema: { type: 'string' } },
  ETag: {
    description: 'A strong validator; send it back in If-None-Match.',
    required: true,
    schema: { type: 'string', pattern: '^"[^"]+"$' }
  },
  'Cache-Control': {
    description:
      'A badge is fresh for 20 s, then served for up to 30 s more while a cache asks again, so that behind an image proxy it follows a change within a minute; a badge of nothing known (an untracked domain) is `no-store`, as is every error.',
    required: true,
    schema: { enum: [BADGE_CACHE_CONTROL, NO_STORE] }
  },
  'Access-Control-Allow-Origin': { description: 'Any origin may load a badge.', required: true, schema: { const: '*' } }
}

/** The budget headers: on every keyed response once the key is known. */
export const budgetHeaders = (required: boolean): Json =>
  Object.fromEntries(
    ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'].map((name) => [
      name,
      required ? { ...(headers[name] as Json), required: true } : ref('headers', name)
    ])
  )

const error = (description: string, extra: Json = {}): Json => ({
  description,
  ...(Object.keys(extra).length > 0 ? { headers: extra } : {}),
  content: { 'application/json': { schema: ref('schemas', 'Error') } }
})

const responses: Json = {
  BadRequest: error('Invalid input: a bad domain, parameter or body. The text says what is wrong.'),
  Unauthorized: error('Missing, malformed, unknown or revoked key.', { 'WWW-Authenticate': ref('headers', 'WWW-Authenticate') }),
  Forbidden: error(
    'The key lacks the scope this operation needs (its `security` names it); the text names the scope. The request consumed nothing.',
    budgetHeaders(true)
  ),
  NotFound: error('The site is not tracked, no status page has the slug, or no such route.'),
  MethodNotAllowed: error('The path exists but not with this method.', { Allow: ref('headers', 'Allow') }),
  PayloadTooLarge: error('The request body is over 4 KiB.'),
  UnsupportedMediaType: error('The request body is not application/json.'),
  TooManyRequests: error("The key's per-minute limit is reached; the request was refused whole and consumed nothing.", {
    'Retry-After': ref('headers', 'Retry-After'),
    ...budgetHeaders(true)
  }),
  Conflict: error(
    "The request conflicts with what is stored: the site is already tracked or has all the maintenance windows it may, a status page's slug is taken, the webhook is disabled, or the delivery's event was pruned. The text says why."
  ),
  BatchOverBudget: {
    description:
      "The key's remaining budget does not cover the whole batch (5 units per distinct domain); nothing was charged. `fits` says how many domains it covers now. Retry-After says when it will; a batch over the key's whole per-minute limit never fits, and has none. Also: the key's limit is reached.",
    headers: {
      'Retry-After': {
        description: 'Whole seconds until the batch fits; absent when it never will (over the whole limit).',
        required: false,
        schema: { type: 'integer', minimum: 1 }
      },
      ...budgetHeaders(true)
    },
    content: { 'application/json': { schema: ref('schemas', 'BatchOverBudget') } }
  },
  BatchPayloadTooLarge: error('The request body is over 32 KiB.'),
  InternalError: error('An unexpected fault; the body says only "internal server error".'),
  ServiceUnavailable: error('The database is unreachable.', { 'Retry-After': ref('headers', 'Retry-After') }),
  OverCapacity: error(
    'Too many checks in flight, in the instance or for this key; nothing was checked and the request consumed nothing. Retry-After says when a slot is free at the latest. Also: the database is unreachable.',
    {
      'Retry-After': ref('headers', 'Retry-After'),
      ...budgetHeaders(true)
    }
  )
}

const idParameter = (name: string, description: string): Json => ({
  name,
  in: 'path',
  required: true,
  description,
  schema: { type: 'integer', minimum: 1 }
})

const parameters: Json = {
  WebhookId: idParameter('id', "The webhook's id."),
  DeliveryId: idParameter('delivery_id', "The delivery's id (from the webhook's deliveries)."),
  Domain: {
    name: 'domain',
    in: 'path',
    required: true,
    description:
      'A hostname (`example.com`, `bücher.de`); normalised to lower-case punycode. IP literals, ports and single-label names are refused with 400.',
    schema: { type: 'string', minLength: 1, maxLength: 2048 }
  },
  PageSlug: {
    name: 'slug',
    in: 'path',
    required: true,
    description: "The page's slug.",
    schema: { type: 'string', pattern: `^[a-z0-9-]{1,${MAX_SLUG_LENGTH}}$` }
  },
  BadgeStyle: {
    name: 'style',
    in: 'query',
    required: false,
    description: "The badge's look, as on shields.io.",
    schema: { type: 'string', enum: [...BADGE_STYLES], default: 'flat' }
  },
  BadgeLabel: {
    name: 'label',
    in: 'query',
    required: false,
    description: "Replaces the label (the site's name, or `status`); empty draws the message alone.",
    schema: { type: 'string', maxLength: MAX_LABEL_LENGTH }
  },
  BadgeLogo: {
    name: 'logo',
    in: 'query',
    required: false,
    description: 'A logo left of the label, from a built-in list (white line drawings; nothing is fetched).',
    schema: { type: 'string', enum: [...LOGO_NAMES] }
  }
}

export const components: Json = {
  schemas,
  headers,
  responses,
  parameters,
  securitySchemes: {
    metricsToken: {
      type: 'http',
      scheme: 'bearer',
      description:
        'METRICS_TOKEN, when the operator set it: `Authorization: Bearer <METRICS_TOKEN>` reads `GET /metrics` and nothing else, with no key and no budget.'
    },
    bearerAuth: {
      type: 'http',
      scheme: 'bearer',
      description:
        'An API key issued by the operator (`site-status keys create --scopes LIST`): `ssk_` followed by 43 base64url characters. Each key holds scopes, and each operation names the one it needs in its `security` requirement: `read` (status, outages, the sites list), `check` (on-demand checks), `manage` (adding and removing sites). Keys hold `read` and `check` unless issued otherwise. A key without the scope gets 403. `GET /api/v1/rate_limit` is open to any valid key.'
    }
  }
}
