import Boom from '@hapi/boom'
import type { Request, ResponseToolkit, RouteOptions, ServerRoute } from '@hapi/hapi'
import {
  describeBadge,
  parseBadgeOptions,
  BadgeOptionError,
  DEFAULT_OPTIONS,
  type BadgeContent,
  type BadgeOptions
} from '../badge/describe.js'
import { BADGE_CACHE_CONTROL, NO_STORE, type BadgeRenderer, type RenderedBadge } from '../badge/renderer.js'
import { tryNormaliseDomain } from '../rules/domain.js'
import { markSentWhole } from './badge-hits.js'
import type { SiteStates } from '../monitoring/state/site-state.js'

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

const BADGE_HEADERS = Object.freeze({
  'cache-control': BADGE_CACHE_CONTROL,
  'access-control-allow-origin': '*',
  'cross-origin-resource-policy': 'cross-origin',
  'x-content-type-options': 'nosniff',
  vary: 'accept-encoding'
})

export const SVG = 'image/svg+xml'
export const JSON_TYPE = 'application/json; charset=utf-8'

/** The headers a badge's hits send, built once per rendered badge. */
function hitHeaders(badge: RenderedBadge): NonNullable<RenderedBadge['headers']> {
  badge.headers ??= {
    identity: Object.freeze({ ...BADGE_HEADERS, etag: badge.etagHeader }),
    gzip: Object.freeze({ ...BADGE_HEADERS, etag: badge.gzipEtagHeader })
  }
  return badge.headers
}

/**
 * Sends a cached badge: gzip-accepting clients get the body compressed once at render time, and
 * hapi answers a matching If-None-Match with 304. Every value is computed at render time; a hit
 * copies its headers in at once and writes bytes encoded once. `known` false (nothing known of
 * what the URL names): `no-store`. An answer sent as it is may be sent again without hapi for a
 * second while `version` (by default every site's count of changes) stands (lib/routes/badge-hits.ts).
 */
export function sendBadge(request: Request, h: ResponseToolkit, badge: RenderedBadge, type: string, known = true, version?: () => number) {
  const encoding = request.info.acceptEncoding
  const gzip = encoding === 'gzip'
  const response = h.response(gzip ? badge.gzip : badge.bytes).type(type)
  // Identity as it is; any other coding hapi applies itself and appends to the strong ETag.
  const identity = encoding === 'identity'
  Object.assign(response.headers, gzip ? hitHeaders(badge).gzip : identity ? hitHeaders(badge).identity : BADGE_HEADERS)
  if (!known) {
    response.headers['cache-control'] = NO_STORE
  } else if (gzip || identity) {
    markSentWhole(request, gzip ? badge.gzip : badge.bytes, version)
  }
  if (gzip) return response.compressed('gzip')
  if (identity) return response
  return response.etag(badge.etag)
}

/** Sites whose plain badge is kept by domain at most; past it the memo starts over. */
const MAX_PLAIN = 100_000

/**
 * Each tracked site's badge as most embeds ask for it (no style, label or logo), with what it says:
 * a hit whose words are unchanged sends it without building the renderer's key.
 */
class PlainBadges {
  readonly #kept = new Map<string, { content: BadgeContent; badge: RenderedBadge }>()

  /** The badge kept for `domain` if it says `content`'s words. */
  get(domain: string, content: BadgeContent): RenderedBadge | undefined {
    const kept = this.#kept.get(domain)
    if (kept === undefined) return undefined
    const said = kept.content
    return said.label === content.label && said.message === content.message && said.color === content.color ? kept.badge : undefined
  }

  keep(domain: string, content: BadgeContent, badge: RenderedBadge): void {
    if (this.#kept.size >= MAX_PLAIN) this.#kept.clear()
    this.#kept.set(domain, { content, badge })
  }
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
  const route = (
    path: string,
    type: string,
    draw: (content: BadgeContent, options: BadgeOptions, request: Request) => RenderedBadge
  ): ServerRoute => {
    const plain = new PlainBadges()
    return {
      method: 'GET',
      path,
      options: BADGE_ROUTE,
      handler: (request, h) => {
        const options = badgeOptions(request)
        const domain = badgeDomain(states, request.params.domain as string)
        const current = states.current(domain, now())
        const content = describeBadge(current, options.label)
        const usual = options === DEFAULT_OPTIONS && current !== null
        let badge = usual ? plain.get(domain, content) : undefined
        if (badge === undefined) {
          badge = draw(content, options, request)
          if (usual) plain.keep(domain, content, badge)
        }
        return sendBadge(request, h, badge, type, current !== null, () => states.changesOf(domain))
      }
    }
  }
  return [
    route('/api/badge/{domain}', SVG, (content, { style, label, logo }) => renderer.svg(content, style, label !== undefined, logo)),
    route('/api/badge/{domain}/endpoint', JSON_TYPE, (content, { style, label, logo }, request) =>
      // shields.io applies its own default style unless the URL names one.
      renderer.endpoint(content, request.query.style === undefined ? undefined : style, label !== undefined, logo)
    )
  ]
}
