import { components } from './components.js'
import { eventSchemas, eventWebhooks } from './events.js'
import { paths } from './paths.js'

/**
 * The OpenAPI 3.1 description of the whole service, with `publicUrl` as its server. Kept true by
 * the tests: a third-party validator checks the document, and the API tests validate real
 * responses against it.
 */
/** The version of the API this document describes (the path says v1). */
export const API_VERSION = '1.0.0'

export function openApiDocument({ publicUrl }: { publicUrl: string }): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Site Status API',
      version: API_VERSION,
      summary: 'Website status from several locations: current status, uptime, outages, on-demand checks and badges.',
      description:
        'Every endpoint under /api/v1/ needs `Authorization: Bearer <key>` and carries RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset once the key is known. A check costs 5 units, a batch 5 per distinct domain, `rate_limit` nothing, everything else under /api/v1/ 1. Each operation names the key scope it needs (`read`, `check` or `manage`) in its security requirement; a key without it gets 403 and spends nothing. Errors are always JSON `{"error": "..."}` on API routes (a batch refused for its budget adds `fits`) and HTML pages on the HTML routes. All timestamps are ISO 8601 UTC with milliseconds and Z.',
      license: { name: 'MIT', identifier: 'MIT' }
    },
    servers: [{ url: publicUrl }],
    security: [{ bearerAuth: [] }],
    tags: [
      { name: 'api', description: 'Keyed JSON endpoints.' },
      { name: 'webhooks', description: 'Webhooks: events pushed to your URL, signed (Standard Webhooks), with a delivery log.' },
      { name: 'alerts', description: 'Alerts for people: channels (e-mail, chat, pagers, Alertmanager), policies, delivery logs.' },
      { name: 'heartbeats', description: 'Ping URLs of heartbeats: no key, answered `OK` once recorded.' },
      { name: 'badge', description: 'Status badges: no key, cacheable, embeddable anywhere.' },
      { name: 'pages', description: 'Server-rendered HTML pages.' },
      { name: 'operations', description: 'Health and this document.' }
    ],
    paths,
    webhooks: eventWebhooks,
    components: { ...components, schemas: { ...(components.schemas as Record<string, unknown>), ...eventSchemas } }
  }
}
