import { errors, noKey } from './operations.js'
import { ref, type Json } from './parts.js'

const html = (description: string): Json => ({ description, content: { 'text/html': { schema: { type: 'string' } } } })
const slug = ref('parameters', 'PageSlug')
const streamRefused = (description: string): Json => ({
  description,
  headers: { 'Retry-After': ref('headers', 'Retry-After') },
  content: { 'application/json': { schema: ref('schemas', 'Error') } }
})

/** A status page for people, and the events that keep it current. */
export const statusHtmlPaths: Json = {
  '/status/{slug}': {
    get: {
      operationId: 'statusPage',
      tags: ['pages'],
      summary: "HTML: a status page, its sites' states, 90 daily uptime bars and incidents (no key)",
      description:
        "Server-rendered and complete without JavaScript; its script keeps it current from `/status/{slug}/events`. Its Content-Security-Policy allows images from the page's logo origin besides its own.",
      security: noKey,
      parameters: [slug],
      responses: {
        200: html('The status page.'),
        400: html('Not a valid slug.'),
        404: html('No such status page.'),
        500: html('An unexpected fault.'),
        503: html('The database is unreachable.'),
        ...errors('MethodNotAllowed')
      }
    }
  },
  '/status/{slug}/events': {
    get: {
      operationId: 'streamStatusPageEvents',
      tags: ['pages'],
      summary: "Server-Sent Events of a status page's sites only (no key)",
      description:
        'A `text/event-stream` that stays open, live from now on (no replay: a page that reconnects fetches itself again). Each event is `event: <type>` (StatusPageEventType: `outage.opened`, `outage.closed`, `site.slow`, `site.slow_ended`, `maintenance.started`, `maintenance.ended`, `heartbeat.late`, `heartbeat.late_ended`) and `data: {"name", "domain", "at"}` (StatusPageEventData: the site as the page names it, `domain` null behind a display name and for a heartbeat or a monitor), for the sites, monitors and heartbeats the page lists when the event is delivered. Comments (`:`) at least every 15 s. One client address may hold 50 streams, the server 5,000.',
      security: noKey,
      parameters: [slug],
      responses: {
        200: {
          description: 'The stream.',
          headers: {
            'Cache-Control': { description: 'Never cached.', required: true, schema: { const: 'no-cache' } },
            'X-Accel-Buffering': { description: 'Tells nginx not to buffer the stream.', required: true, schema: { const: 'no' } }
          },
          content: { 'text/event-stream': { schema: { type: 'string' } } }
        },
        429: streamRefused('This client address holds the most page streams it may.'),
        503: streamRefused('The server holds the most page streams it may, or the database is unreachable.'),
        ...errors('BadRequest', 'NotFound', 'MethodNotAllowed', 'InternalError')
      }
    }
  }
}
