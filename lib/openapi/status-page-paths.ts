import { errors, noKey } from './operations.js'
import { ref, type Json } from './parts.js'

const slug = ref('parameters', 'PageSlug')
const cors = { 'Access-Control-Allow-Origin': ref('headers', 'Access-Control-Allow-Origin') }
const badgeHeaders = { ETag: ref('headers', 'ETag'), 'Cache-Control': ref('headers', 'Cache-Control'), ...cors }
const failures = errors('BadRequest', 'NotFound', 'MethodNotAllowed', 'InternalError', 'ServiceUnavailable')

/** A public status page's data for machines: no key, only what the page lists. */
export const statusPagePaths: Json = {
  '/status/{slug}.json': {
    get: {
      operationId: 'getStatusPage',
      tags: ['pages'],
      summary: "A status page as JSON: its state, its sites' states and 90 days of daily uptime, its incidents (no key)",
      description:
        'The same content as the HTML page, for widgets; any origin may read it. Answers are made at most once a second per page, so `generated_at` may be up to a few seconds old.',
      security: noKey,
      parameters: [slug],
      responses: {
        200: { description: 'The page.', headers: cors, content: { 'application/json': { schema: ref('schemas', 'StatusPage') } } },
        ...failures
      }
    }
  },
  '/status/{slug}/feed.atom': {
    get: {
      operationId: 'getStatusPageFeed',
      tags: ['pages'],
      summary: "A status page's incidents as an Atom 1.0 feed (no key)",
      description:
        'One entry per incident of the JSON answer, with a stable id (a tag URI of the outage), titled "<name> is down" while ongoing and "<name> was down for <duration>" once over, updated when it started or ended.',
      security: noKey,
      parameters: [slug],
      responses: {
        200: { description: 'The feed.', headers: cors, content: { 'application/atom+xml': { schema: { type: 'string' } } } },
        ...failures
      }
    }
  },
  '/api/badge/page/{slug}': {
    get: {
      operationId: 'getPageBadge',
      tags: ['badge'],
      summary: "A status page's state as an SVG badge (no key)",
      description:
        "Label: the page's title (`status` for a title over 64 characters) unless `label` replaces it; message: the page state, `operational` green, `degraded` yellow, `partial outage` orange, `major outage` red, `maintenance` blue. Unlike a site badge, a slug that is no page is a 404.",
      security: noKey,
      parameters: [slug, ref('parameters', 'BadgeStyle'), ref('parameters', 'BadgeLabel'), ref('parameters', 'BadgeLogo')],
      responses: {
        200: { description: 'The badge.', headers: badgeHeaders, content: { 'image/svg+xml': { schema: { type: 'string' } } } },
        304: { description: 'Not modified: the If-None-Match ETag is still current.', headers: badgeHeaders },
        ...failures
      }
    }
  }
}
