import Boom from '@hapi/boom'
import type { Request, ResponseToolkit, RouteOptions, ServerRoute } from '@hapi/hapi'
import { describeBadge, parseBadgeOptions, BadgeOptionError, type BadgeOptions } from '../badge/describe.js'
import { BADGE_CACHE_CONTROL, NO_STORE, type BadgeRenderer, type RenderedBadge } from '../badge/renderer.js'
import { tryNormaliseDomain } from '../rules/domain.js'
import type { SiteStates } from '../monitoring/state/site-state.js'
import type { CurrentStatus } from '../monitoring/state/status-record.js'

/** A bad badge option is a 400 saying which. */
export function optionFailure(err: unknown): never {
  if (err instanceof BadgeOptionError) throw Boom.badRequest(err.message)
  throw err
}

/** The badge URL's `style`, `label` and `logo`; a bad one is a 400. */
export function badgeOptions(request: Request): BadgeOptions {
  try {
    return parseBadgeOptions(request.query)
  } catch (err) {
    return optionFailure(err)
  }
}

/**
 * Every badge route's options: no key, and `no-store` on any answer that sets no Cache-Control of
 * its own, which is every error (an image proxy must never keep one).
 */
export const BADGE_ROUTE: RouteOptions = { auth: false, cache: { otherwise: NO_STORE } }

/** The normalised domain a badge URL names; text that cannot be a domain is a 400. */
export function badgeDomain(states: SiteStates, raw: string): string {
  // Embeds almost always use the normalised domain the site page hands out: no parsing needed.
  if (states.has(raw)) return raw
  const parsed = tryNormaliseDomain(raw)
  if (!parsed.ok) throw Boom.badRequest(parsed.error.message)
  return parsed.domain
}

/** The site behind a badge URL, or null when nobody tracks it; a name that cannot be a domain is a 400. */
function site(states: SiteStates, raw: string, now: Date): CurrentStatus | null {
  return states.current(badgeDomain(states, raw), now)
}

const BADGE_HEADERS = Object.freeze({
  'cache-control': BADGE_CACHE_CONTROL,
  'access-control-allow-origin': '*',
  'cross-origin-resource-policy': 'cross-origin',
  'x-content-type-options': 'nosniff',
  vary: 'accept-encoding'
})

export const SVG = 'image/svg+xml'
export const JSON_TYPE = 'application/json; charset=utf-8'

/**
 * Sends a cached badge: gzip-accepting clients get the body compressed once at render time, and
 * hapi answers a matching If-None-Match with 304. Every value is computed at render time; a hit
 * only sets headers. `known` false (nothing known of what the URL names): `no-store`.
 */
export function sendBadge(request: Request, h: ResponseToolkit, badge: RenderedBadge, type: string, known = true) {
  const encoding = request.info.acceptEncoding
  const gzip = encoding === 'gzip'
  const response = h.response(gzip ? badge.gzip : badge.body).type(type)
  // The same headers on every hit: copied in at once rather than one header() call each.
  Object.assign(response.headers, BADGE_HEADERS)
  if (!known) response.headers['cache-control'] = NO_STORE
  if (gzip) return response.header('etag', badge.gzipEtagHeader).compressed('gzip')
  // Identity as it is; any other coding hapi applies itself and appends to the strong ETag.
  return encoding === 'identity' ? response.header('etag', badge.etagHeader) : response.etag(badge.etag)
}

/**
 * `GET /api/badge/{domain}` (SVG) and `GET /api/badge/{domain}/endpoint` (shields.io's endpoint
 * JSON). No key and no per-key limit: a hit is a memory lookup and a cached body.
 */
export function statusBadgeRoutes({
  states,
  renderer,
  now
}: {
  states: SiteStates
  renderer: BadgeRenderer
  now: () => Date
}): ServerRoute[] {
  return [
    {
      method: 'GET',
      path: '/api/badge/{domain}',
      options: BADGE_ROUTE,
      handler: (request, h) => {
        const { style, label, logo } = badgeOptions(request)
        const current = site(states, request.params.domain as string, now())
        const badge = renderer.svg(describeBadge(current, label), style, label !== undefined, logo)
        return sendBadge(request, h, badge, SVG, current !== null)
      }
    },
    {
      method: 'GET',
      path: '/api/badge/{domain}/endpoint',
      options: BADGE_ROUTE,
      handler: (request, h) => {
        const { style, label, logo } = badgeOptions(request)
        // shields.io applies its own default style unless the URL names one.
        const chosen = request.query.style === undefined ? undefined : style
        const current = site(states, request.params.domain as string, now())
        const badge = renderer.endpoint(describeBadge(current, label), chosen, label !== undefined, logo)
        return sendBadge(request, h, badge, JSON_TYPE, current !== null)
      }
    }
  ]
}
