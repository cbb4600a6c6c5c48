import { budgetHeaders } from './components.js'
import { checkPaths } from './check-paths.js'
import { maintenancePaths } from './maintenance-paths.js'
import { pagePaths } from './page-paths.js'
import { statusPagePaths } from './status-page-paths.js'
import { eventsPath } from './events.js'
import { statusHtmlPaths } from './status-html-paths.js'
import { alertPaths } from './alert-paths.js'
import { configPaths } from './config-paths.js'
import { figureBadgePaths } from './badge-paths.js'
import { heartbeatPaths } from './heartbeat-paths.js'
import { monitorPaths } from './monitor-paths.js'
import { ref, type Json } from './parts.js'

import { created, errors, json, keyedErrors, noContent, noKey, ok, scope, scopedErrors } from './operations.js'
const limit: Json = { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 200, default: 50 } }
const cursor: Json = {
  name: 'cursor',
  in: 'query',
  required: false,
  description: 'The `next_cursor` of the previous page, as given.',
  schema: { type: 'string', maxLength: 100 }
}

const badgeHeaders = {
  ETag: ref('headers', 'ETag'),
  'Cache-Control': ref('headers', 'Cache-Control'),
  'Access-Control-Allow-Origin': ref('headers', 'Access-Control-Allow-Origin')
}
const notModified: Json = { description: 'Not modified: the If-None-Match ETag is still current.', headers: badgeHeaders }
const html = (description: string): Json => ({ description, content: { 'text/html': { schema: { type: 'string' } } } })

/** Every route the service answers, one entry per path. */
export const paths: Json = {
  '/healthz': {
    get: {
      operationId: 'health',
      tags: ['operations'],
      summary: 'Liveness, the instance, and database and Redis reachability',
      security: noKey,
      responses: {
        200: {
          description: 'Serving, database reachable; `schedule` says whether the scheduled checks keep up.',
          content: json(ref('schemas', 'Health'))
        },
        405: ref('responses', 'MethodNotAllowed'),
        503: { description: 'Serving, but the database is unreachable.', content: json(ref('schemas', 'HealthDegraded')) }
      }
    }
  },
  '/metrics': {
    get: {
      operationId: 'getMetrics',
      tags: ['operations'],
      summary: 'Prometheus metrics in the text exposition format (costs nothing)',
      description:
        "For Prometheus to scrape, with a key holding `read` or with METRICS_TOKEN. Per tracked site and location, blackbox_exporter's `probe_success`, `probe_duration_seconds`, `probe_http_status_code` and `probe_ssl_earliest_cert_expiry` (labels `domain`, `location`) from the site's newest check while it is fresh, and the same for each tcp, tls and dns monitor (labels `monitor`, `kind`, `location`; no `probe_http_status_code`; `probe_dns_lookup_time_seconds` for dns monitors); per site `site_status_up` (1 up, 0 down, absent otherwise), `site_status_outage_ongoing` and `site_status_maintenance` (1 during a maintenance window); per heartbeat `site_status_heartbeat_state` (labels `slug`, `state`) and `site_status_heartbeat_last_ping_age_seconds`; the service's own `site_status_*` counters, gauges and histograms, and Node's process metrics. Series: at most 4 per site and location plus 3 per site.",
      security: [...scope('read'), { metricsToken: [] }],
      responses: {
        200: {
          description: 'The exposition (Prometheus text format 0.0.4). The budget headers come with a key, not with METRICS_TOKEN.',
          headers: budgetHeaders(false),
          content: { 'text/plain': { schema: { type: 'string' } } }
        },
        ...scopedErrors()
      }
    }
  },
  '/api/v1/rate_limit': {
    get: {
      operationId: 'getRateLimit',
      tags: ['api'],
      summary: "The key's current budget (costs nothing)",
      responses: { 200: ok('The budget.', ref('schemas', 'RateLimit')), ...keyedErrors() }
    }
  },
  ...checkPaths,
  ...heartbeatPaths,
  ...monitorPaths,
  '/api/v1/status/{domain}': {
    get: {
      operationId: 'getStatus',
      tags: ['api'],
      summary: "A tracked site's stored status, uptime and last outage (costs 1)",
      security: scope('read'),
      parameters: [ref('parameters', 'Domain')],
      responses: { 200: ok('The status record.', ref('schemas', 'StatusRecord')), ...scopedErrors('BadRequest', 'NotFound') }
    }
  },
  '/api/v1/outages': {
    get: {
      operationId: 'listOutages',
      tags: ['api'],
      summary: 'Confirmed outages, newest first (costs 1)',
      security: scope('read'),
      description:
        'Ordered by start, newest first, ties by id. To page past `limit`, repeat the query with `cursor` set to `next_cursor` until it is null. Any parameter not listed here is refused with 400.',
      parameters: [
        {
          name: 'domain',
          in: 'query',
          required: false,
          description: 'Only this domain (normalised); an untracked one gives an empty list.',
          schema: { type: 'string', maxLength: 2048 }
        },
        {
          name: 'monitor',
          in: 'query',
          required: false,
          description: 'Only this monitor (tcp, tls, dns) by slug; not with `domain`. An unknown one gives an empty list.',
          schema: { type: 'string', pattern: '^[a-z0-9-]{1,64}$' }
        },
        {
          name: 'ongoing',
          in: 'query',
          required: false,
          description: '1: only outages still ongoing; 0: all.',
          schema: { type: 'string', enum: ['0', '1'] }
        },
        limit,
        cursor
      ],
      responses: { 200: ok('A page of outages.', ref('schemas', 'OutageList')), ...scopedErrors('BadRequest') }
    }
  },
  '/api/v1/sites': {
    get: {
      operationId: 'listSites',
      tags: ['api'],
      summary: 'Tracked sites with their status records, by domain (costs 1)',
      description:
        'Ordered by domain. To page past `limit`, repeat the query with `cursor` set to `next_cursor` until it is null; sites added or removed meanwhile never shift the ones not yet listed. Any parameter not listed here is refused with 400.',
      security: scope('read'),
      parameters: [limit, { ...cursor, schema: { type: 'string', maxLength: 400 } }],
      responses: { 200: ok('A page of sites.', ref('schemas', 'SiteList')), ...scopedErrors('BadRequest') }
    },
    post: {
      operationId: 'addSite',
      tags: ['api'],
      summary: 'Track a site (costs 1)',
      description:
        'The domain is normalised and judged by the same rules as `site-status sites add`, with optional settings (`interval_s`, `expect`, `check`: the request sent and its assertions). A site removed earlier is tracked again (its history kept, a new tracking period; settings given replace its old ones). The scheduler takes it at once; its first check comes within one check interval.',
      security: scope('manage'),
      requestBody: { required: true, content: json(ref('schemas', 'AddSiteRequest')) },
      responses: {
        201: created(
          'Now tracked: its status record (`pending` until its first check).',
          "The site's status endpoint.",
          ref('schemas', 'StatusRecord')
        ),
        ...scopedErrors('BadRequest', 'Conflict', 'PayloadTooLarge', 'UnsupportedMediaType')
      }
    }
  },
  '/api/v1/sites/{domain}': {
    patch: {
      operationId: 'changeSite',
      tags: ['api'],
      summary: "Change a tracked site's name or settings (costs 1)",
      description:
        'Keys absent are kept; in `expect`, a key set to null is cleared, and `expect: null` clears every expectation. A new interval or expectation applies from the next check (the scheduler takes it at once); clearing `max_response_ms` ends a slow spell at the next check. Answers the status record with its new `settings`.',
      security: scope('manage'),
      parameters: [ref('parameters', 'Domain')],
      requestBody: { required: true, content: json(ref('schemas', 'ChangeSiteRequest')) },
      responses: {
        200: ok('The status record, settings changed.', ref('schemas', 'StatusRecord')),
        ...scopedErrors('BadRequest', 'NotFound', 'PayloadTooLarge', 'UnsupportedMediaType')
      }
    },
    delete: {
      operationId: 'removeSite',
      tags: ['api'],
      summary: 'Stop tracking a site (costs 1)',
      description: 'Its checks and outages are kept; an ongoing outage ends now. The scheduler drops it at once.',
      security: scope('manage'),
      parameters: [ref('parameters', 'Domain')],
      responses: {
        204: { description: 'No longer tracked.', headers: budgetHeaders(true) },
        ...scopedErrors('BadRequest', 'NotFound')
      }
    }
  },
  '/api/v1/sites/{domain}/sla': {
    get: {
      operationId: 'getSla',
      tags: ['api'],
      summary: "A site's uptime, downtime and outages over any window (costs 1)",
      description:
        "Over [from, to), at most 400 days; `to` defaults to now and `from` to 30 days before `to`. Computed from the site's outages and its first recorded check: monitored time starts at that check (time before it is unknown, not up) and ends now, or when the site was removed (a removed site keeps its history). Any parameter not listed here is refused with 400.",
      security: scope('read'),
      parameters: [
        ref('parameters', 'Domain'),
        {
          name: 'from',
          in: 'query',
          required: false,
          description: 'Start of the window, inclusive: an ISO 8601 date (midnight UTC) or date-time with `Z` or an offset.',
          schema: { type: 'string', maxLength: 64, examples: ['2026-08-01', '2026-08-01T00:00:00Z'] }
        },
        {
          name: 'to',
          in: 'query',
          required: false,
          description: 'End of the window, exclusive, in the same forms; after `from`.',
          schema: { type: 'string', maxLength: 64, examples: ['2026-11-01T00:00:00+01:00'] }
        }
      ],
      responses: { 200: ok('The SLA figures of the window.', ref('schemas', 'Sla')), ...scopedErrors('BadRequest', 'NotFound') }
    }
  },
  ...maintenancePaths,
  ...pagePaths,
  '/api/v1/webhooks': {
    post: {
      operationId: 'createWebhook',
      tags: ['webhooks'],
      security: scope('manage'),
      summary: 'Register a webhook (costs 1)',
      description:
        'Events committed from now on that match `events` and `domains` are POSTed to `url` as Standard Webhooks: body `{"type", "timestamp", "data"}`, headers `webhook-id` (the event id, the same on every retry), `webhook-timestamp` (Unix seconds of the attempt) and `webhook-signature` (`v1,` + base64 HMAC-SHA256 of `{id}.{timestamp}.{body}` keyed with the base64-decoded part of the secret after `whsec_`). A 2xx within 15 s delivers; anything else is retried after about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, then daily while three days have not passed, then the delivery is `failed`; a 410 disables the webhook. Redirects are not followed. A URL whose host resolves to a non-public address is refused with 400.',
      requestBody: { required: true, content: json(ref('schemas', 'WebhookRequest')) },
      responses: {
        201: ok('The webhook, with its secret: the only time the secret is shown.', ref('schemas', 'WebhookCreated')),
        ...scopedErrors('BadRequest', 'PayloadTooLarge', 'UnsupportedMediaType')
      }
    },
    get: {
      operationId: 'listWebhooks',
      tags: ['webhooks'],
      security: scope('manage'),
      summary: 'Every webhook, oldest first, without secrets (costs 1)',
      responses: { 200: ok('The webhooks.', ref('schemas', 'WebhookList')), ...scopedErrors() }
    }
  },
  '/api/v1/webhooks/{id}': {
    delete: {
      operationId: 'deleteWebhook',
      tags: ['webhooks'],
      security: scope('manage'),
      summary: 'Remove a webhook and its delivery log (costs 1)',
      parameters: [ref('parameters', 'WebhookId')],
      responses: { 204: noContent('Removed; nothing more is sent.'), ...scopedErrors('BadRequest', 'NotFound') }
    }
  },
  '/api/v1/webhooks/{id}/deliveries': {
    get: {
      operationId: 'listDeliveries',
      tags: ['webhooks'],
      security: scope('manage'),
      summary: "A webhook's deliveries, newest first (costs 1)",
      description:
        'Ordered by id, newest first. To page past `limit`, repeat the query with `cursor` set to `next_cursor` until it is null. Deliveries are kept 30 days.',
      parameters: [
        ref('parameters', 'WebhookId'),
        { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 200, default: 50 } },
        {
          name: 'cursor',
          in: 'query',
          required: false,
          description: 'The `next_cursor` of the previous page, as given.',
          schema: { type: 'string', maxLength: 100 }
        }
      ],
      responses: { 200: ok('A page of deliveries.', ref('schemas', 'DeliveryList')), ...scopedErrors('BadRequest', 'NotFound') }
    }
  },
  '/api/v1/webhooks/{id}/deliveries/{delivery_id}/retry': {
    post: {
      operationId: 'retryDelivery',
      tags: ['webhooks'],
      security: scope('manage'),
      summary: 'Send a delivery again now (costs 1)',
      description:
        'Whatever its status, the delivery goes back to `pending`, due now, with its retry schedule started over; the same `webhook-id` is sent. A disabled webhook (its receiver answered 410) is refused with 409, and so is a delivery whose event is no longer stored (events are kept 7 days).',
      parameters: [ref('parameters', 'WebhookId'), ref('parameters', 'DeliveryId')],
      responses: {
        202: ok('Queued: the delivery as it now stands.', ref('schemas', 'Delivery')),
        ...scopedErrors('BadRequest', 'NotFound', 'Conflict')
      }
    }
  },
  ...alertPaths,
  ...configPaths,
  '/api/v1/events': eventsPath,
  '/api/badge/{domain}': {
    get: {
      operationId: 'getBadge',
      tags: ['badge'],
      summary: 'The status badge as SVG (no key)',
      description:
        "Drawn with shields.io's renderer. Label: the site's name (`status` for a name over 64 characters or an untracked domain); message: the status, with blocked and partial noted; colour: up green, down red, unconfirmed yellow, unavailable and pending grey; during a maintenance window `maintenance` in blue, whatever the status. An untracked domain gets a grey `not tracked` badge with status 200 and `Cache-Control: no-store`, so image proxies show it and keep nothing. Parameters other than `style`, `label` and `logo` are ignored (cache busters).",
      security: noKey,
      parameters: [
        ref('parameters', 'Domain'),
        ref('parameters', 'BadgeStyle'),
        ref('parameters', 'BadgeLabel'),
        ref('parameters', 'BadgeLogo')
      ],
      responses: {
        200: { description: 'The badge.', headers: badgeHeaders, content: { 'image/svg+xml': { schema: { type: 'string' } } } },
        304: notModified,
        ...errors('BadRequest', 'MethodNotAllowed', 'InternalError')
      }
    }
  },
  '/api/badge/{domain}/endpoint': {
    get: {
      operationId: 'getEndpointBadge',
      tags: ['badge'],
      summary: 'The badge as shields.io endpoint JSON (no key)',
      description:
        'For routing the badge through shields.io: `https://img.shields.io/endpoint?url=<this URL>`. Same label, message and colour as the SVG badge; `style` is passed on when given.',
      security: noKey,
      parameters: [
        ref('parameters', 'Domain'),
        ref('parameters', 'BadgeStyle'),
        ref('parameters', 'BadgeLabel'),
        ref('parameters', 'BadgeLogo')
      ],
      responses: {
        200: { description: 'The endpoint badge.', headers: badgeHeaders, content: json(ref('schemas', 'EndpointBadge')) },
        304: notModified,
        ...errors('BadRequest', 'MethodNotAllowed', 'InternalError')
      }
    }
  },
  ...figureBadgePaths.sites,
  ...figureBadgePaths.pages,
  '/api/v1/openapi.json': {
    get: {
      operationId: 'getOpenApi',
      tags: ['operations'],
      summary: 'This document (no key)',
      security: noKey,
      responses: {
        200: {
          description: 'The OpenAPI 3.1 description of the service.',
          content: json({
            type: 'object',
            required: ['openapi', 'info', 'paths', 'components'],
            properties: { openapi: { const: '3.1.0' }, info: { type: 'object' }, paths: { type: 'object' }, components: { type: 'object' } }
          })
        },
        ...errors('MethodNotAllowed')
      }
    }
  },
  '/': {
    get: {
      operationId: 'siteListPage',
      tags: ['pages'],
      summary: 'HTML: the tracked sites and their status (no key)',
      security: noKey,
      parameters: [
        { name: 'page', in: 'query', required: false, description: '500 sites a page.', schema: { type: 'integer', minimum: 1 } }
      ],
      responses: {
        200: html('The site list.'),
        400: html('A page number that is not a whole number.'),
        404: html('No such page.'),
        ...errors('MethodNotAllowed')
      }
    }
  },
  '/sites/{domain}': {
    get: {
      operationId: 'sitePage',
      tags: ['pages'],
      summary: "HTML: a site's status, uptime, response times, outages and badge embed code (no key)",
      description: "The page a status record's `url` points at.",
      security: noKey,
      parameters: [ref('parameters', 'Domain')],
      responses: {
        200: html('The site page.'),
        400: html('Not a valid domain.'),
        404: html('The site is not tracked.'),
        500: html('An unexpected fault.'),
        503: html('The database is unreachable.'),
        ...errors('MethodNotAllowed')
      }
    }
  },
  ...statusPagePaths,
  ...statusHtmlPaths
}
