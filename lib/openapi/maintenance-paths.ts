import { MAX_WINDOWS_PER_SITE } from '../rules/maintenance.js'
import { json, noContent, ok, scope, scopedErrors } from './operations.js'
import { ref, type Json } from './parts.js'

const windowId: Json = {
  name: 'id',
  in: 'path',
  required: true,
  description: "The window's id (from its creation or the list).",
  schema: { type: 'integer', minimum: 1 }
}

const slug: Json = {
  name: 'slug',
  in: 'path',
  required: true,
  description: "The monitor's slug.",
  schema: { type: 'string', pattern: '^[a-z0-9-]{1,64}$' }
}

/** A tracked site's maintenance windows, and a monitor's (tcp, tls, dns). */
export const maintenancePaths: Json = {
  '/api/v1/sites/{domain}/maintenance': {
    get: {
      operationId: 'listMaintenanceWindows',
      tags: ['api'],
      summary: "A tracked site's maintenance windows, in the order they were added (costs 1)",
      security: scope('read'),
      parameters: [ref('parameters', 'Domain')],
      responses: { 200: ok('The windows.', ref('schemas', 'MaintenanceWindowList')), ...scopedErrors('BadRequest', 'NotFound') }
    },
    post: {
      operationId: 'addMaintenanceWindow',
      tags: ['api'],
      summary: 'Add a maintenance window to a tracked site (costs 1)',
      description: `One-off [from, to) of at most 31 days, or weekly at a local time in an IANA zone (kept at that local time across DST changes). During a window checks run and are recorded, but no outage opens (one already open closes as usual); the time is left out of uptime and SLA; the status record and sites list carry \`maintenance\`; \`maintenance.started\` and \`maintenance.ended\` are announced by the site's first check inside and after it. A site has at most ${MAX_WINDOWS_PER_SITE} windows (409 beyond).`,
      security: scope('manage'),
      parameters: [ref('parameters', 'Domain')],
      requestBody: { required: true, content: json(ref('schemas', 'MaintenanceWindowRequest')) },
      responses: {
        201: ok(
          'Added: the window in its normal form (times in UTC, the zone by its canonical name), with its id.',
          ref('schemas', 'MaintenanceWindow')
        ),
        ...scopedErrors('BadRequest', 'NotFound', 'Conflict', 'PayloadTooLarge', 'UnsupportedMediaType')
      }
    }
  },
  '/api/v1/sites/{domain}/maintenance/{id}': {
    delete: {
      operationId: 'removeMaintenanceWindow',
      tags: ['api'],
      summary: 'Remove a maintenance window (costs 1)',
      description: "A maintenance in force ends at the site's next check; the window's time counts again in SLA answers.",
      security: scope('manage'),
      parameters: [ref('parameters', 'Domain'), windowId],
      responses: { 204: noContent('Removed.'), ...scopedErrors('BadRequest', 'NotFound') }
    }
  },
  '/api/v1/monitors/{slug}/maintenance': {
    get: {
      operationId: 'listMonitorMaintenanceWindows',
      tags: ['api'],
      summary: "A monitor's maintenance windows, in the order they were added (costs 1)",
      security: scope('read'),
      parameters: [slug],
      responses: { 200: ok('The windows.', ref('schemas', 'MaintenanceWindowList')), ...scopedErrors('BadRequest', 'NotFound') }
    },
    post: {
      operationId: 'addMonitorMaintenanceWindow',
      tags: ['api'],
      summary: 'Add a maintenance window to a monitor (costs 1)',
      description: "As a site's (`addMaintenanceWindow`): no outage opens inside it, and its time is left out of uptime.",
      security: scope('manage'),
      parameters: [slug],
      requestBody: { required: true, content: json(ref('schemas', 'MaintenanceWindowRequest')) },
      responses: {
        201: ok('Added: the window in its normal form, with its id.', ref('schemas', 'MaintenanceWindow')),
        ...scopedErrors('BadRequest', 'NotFound', 'Conflict', 'PayloadTooLarge', 'UnsupportedMediaType')
      }
    }
  },
  '/api/v1/monitors/{slug}/maintenance/{id}': {
    delete: {
      operationId: 'removeMonitorMaintenanceWindow',
      tags: ['api'],
      summary: "Remove a monitor's maintenance window (costs 1)",
      security: scope('manage'),
      parameters: [slug, windowId],
      responses: { 204: noContent('Removed.'), ...scopedErrors('BadRequest', 'NotFound') }
    }
  }
}
