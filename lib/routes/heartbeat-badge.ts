import Boom from '@hapi/boom'
import type { ServerRoute } from '@hapi/hapi'
import { GENERIC_LABEL, MAX_LABEL_LENGTH, type BadgeContent } from '../badge/describe.js'
import type { BadgeRenderer } from '../badge/renderer.js'
import type { HeartbeatState } from '../rules/heartbeat.js'
import type { HeartbeatFigures, HeartbeatSubject } from '../badge/heartbeat-figures.js'
import { BADGE_ROUTE, badgeOptions, JSON_TYPE, sendBadge, SVG } from './badge.js'
import { figureBadgeRoutes } from './badge-figures.js'

const COLORS: Readonly<Record<HeartbeatState, BadgeContent['color']>> = {
  new: 'lightgrey',
  up: 'green',
  late: 'yellow',
  down: 'red',
  paused: 'lightgrey'
}

/** A heartbeat's badge: its name (unless `label` replaces it) and its state in its colour. */
export function describeHeartbeatBadge(name: string, state: HeartbeatState, override?: string): BadgeContent {
  const label = override ?? (name.length > MAX_LABEL_LENGTH ? GENERIC_LABEL : name)
  return { label, message: state, color: COLORS[state] }
}

const SLUG = /^[a-z0-9-]{1,64}$/

/** A heartbeat's slug from a badge URL; text that cannot be one is a 400. */
function heartbeatSlug(raw: string): string {
  if (!SLUG.test(raw)) throw Boom.badRequest('heartbeat slug must be 1 to 64 lower-case letters, digits and hyphens')
  return raw
}

const NO_HEARTBEAT = 'no heartbeat has this slug'

/**
 * `GET /api/badge/heartbeat/{slug}` (SVG) and `/endpoint` (shields.io JSON), its state; and its
 * uptime badges, `/uptime` and `/uptime/endpoint` (a heartbeat has no response time). No key, the
 * site badges' headers and caching (ETag, 304, the same Cache-Control). A slug that is no heartbeat
 * is a 404. Answered from `figures`, which reads a heartbeat at most once a second.
 */
export function heartbeatBadgeRoutes({
  figures,
  renderer,
  now
}: {
  figures: HeartbeatFigures
  renderer: BadgeRenderer
  now: () => Date
}): ServerRoute[] {
  const heartbeat = async (raw: string): Promise<HeartbeatSubject> => {
    const found = await figures.find(heartbeatSlug(raw), now().getTime())
    if (found === null) throw Boom.notFound(NO_HEARTBEAT)
    return found
  }
  return [
    {
      method: 'GET',
      path: '/api/badge/heartbeat/{slug}',
      options: BADGE_ROUTE,
      handler: async (request, h) => {
        const { style, label, logo } = badgeOptions(request)
        const found = await heartbeat(request.params.slug as string)
        const badge = renderer.svg(describeHeartbeatBadge(found.name, found.state, label), style, label !== undefined, logo)
        return sendBadge(request, h, badge, SVG)
      }
    },
    {
      method: 'GET',
      path: '/api/badge/heartbeat/{slug}/endpoint',
      options: BADGE_ROUTE,
      handler: async (request, h) => {
        const { style, label, logo } = badgeOptions(request)
        const chosen = request.query.style === undefined ? undefined : style
        const found = await heartbeat(request.params.slug as string)
        const badge = renderer.endpoint(describeHeartbeatBadge(found.name, found.state, label), chosen, label !== undefined, logo)
        return sendBadge(request, h, badge, JSON_TYPE)
      }
    },
    ...figureBadgeRoutes(
      { base: '/api/badge/heartbeat/{slug}', param: 'slug', name: heartbeatSlug, source: figures, missing: { notFound: NO_HEARTBEAT } },
      { renderer, now }
    )
  ]
}
