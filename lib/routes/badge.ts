import Boom from '@hapi/boom'
import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi'
import { describeBadge, parseBadgeOptions, BadgeOptionError, type BadgeOptions } from '../badge/describe.js'
import type { BadgeRenderer, RenderedBadge } from '../badge/renderer.js'
import { tryNormaliseDomain } from '../rules/domain.js'
import type { SiteStates } from '../monitoring/state/site-state.js'
import type { CurrentStatus } from '../monitoring/state/status-record.js'

/** The badge URL's `style` and `label`; a bad one is a 400. */
export function badgeOptions(request: Request): BadgeOptions {
  try {
    return parseBadgeOptions(request.query)
  } catch (err) {
    if (err instanceof BadgeOptionError) throw Boom.badRequest(err.message)
    throw err
  }
}

/** The site behind a badge URL, or null when nobody tracks it; a name that cannot be a domain is a 400. */
function site(states: SiteStates, raw: string, now: Date): CurrentStatus | null {
  // Embeds almost always use the normalised domain the site page hands out: no parsing needed.
  if (states.has(raw)) return states.current(raw, now)
  const parsed = tryNormaliseDomain(raw)
  if (!parsed.ok) throw Boom.badRequest(parsed.error.message)
  return states.current(parsed.domain, now)
}

const BADGE_HEADERS = Object.freeze({
  'cache-control': 'public, max-age=60',
  'access-control-allow-origin': '*',
  'cross-origin-resource-policy': 'cross-origin',
  'x-content-type-options': 'nosniff',
  vary: 'accept-encoding'
})

/**
 * Sends a cached badge: gzip-accepting clients get the body compressed once at render time, and
 * hapi answers a matching If-None-Match with 304. Every value is computed at render time; a hit
 * only sets headers.
 */
export function sendBadge(request: Request, h: ResponseToolkit, badge: RenderedBadge, type: string) {
  const encoding = request.info.acceptEncoding
  const gzip = encoding === 'gzip'
  const response = h.response(gzip ? badge.gzip : badge.body).type(type)
  // The same headers on every hit: copied in at once rather than one header() call each.
  Object.assign(response.headers, BADGE_HEADERS)
  if (gzip) return response.header('etag', badge.gzipEtagHeader).compressed('gzip')
  // Identity as it is; any other coding hapi applies itself and appends to the strong ETag.
  return encoding === 'identity' ? response.header('etag', badge.etagHeader) : response.etag(badge.etag)
}

/**
 * `GET /api/badge/{domain}` (SVG) and `GET /api/badge/{domain}/endpoint` (shields.io's endpoint
 * JSON). No key and no per-key limit: a hit is a memory lookup and a cached body.
 */
export function badgeRoutes({ states, renderer, now }: { states: SiteStates; renderer: BadgeRenderer; now: () => Date }): ServerRoute[] {
  return [
    {
      method: 'GET',
      path: '/api/badge/{domain}',
      options: { auth: false },
      handler: (request, h) => {
        const { style, label } = badgeOptions(request)
        const badge = renderer.svg(describeBadge(site(states, request.params.domain as string, now()), label), style, label !== undefined)
        return sendBadge(request, h, badge, 'image/svg+xml')
      }
    },
    {
      method: 'GET',
      path: '/api/badge/{domain}/endpoint',
      options: { auth: false },
      handler: (request, h) => {
        const { style, label } = badgeOptions(request)
        // shields.io applies its own default style unless the URL names one.
        const chosen = request.query.style === undefined ? undefined : style
        const badge = renderer.endpoint(
          describeBadge(site(states, request.params.domain as string, now()), label),
          chosen,
          label !== undefined
        )
        return sendBadge(request, h, badge, 'application/json; charset=utf-8')
      }
    }
  ]
}
