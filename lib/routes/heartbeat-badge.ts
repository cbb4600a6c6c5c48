import Boom from '@hapi/boom'
import type { ServerRoute } from '@hapi/hapi'
import { GENERIC_LABEL, MAX_LABEL_LENGTH, type BadgeContent } from '../badge/describe.js'
import type { BadgeRenderer } from '../badge/renderer.js'
import type { HeartbeatState } from '../rules/heartbeat.js'
import type { Db } from '../store/db.js'
import { findHeartbeat } from '../store/heartbeats.js'
import { BADGE_ROUTE, badgeOptions, JSON_TYPE, sendBadge, SVG } from './badge.js'

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

/**
 * `GET /api/badge/heartbeat/{slug}` (SVG) and `/endpoint` (shields.io JSON): no key, the site
 * badges' headers and caching (ETag, 304, the same Cache-Control). A slug that is no heartbeat is a 404.
 */
export function heartbeatBadgeRoutes({ db, renderer }: { db: Db; renderer: BadgeRenderer }): ServerRoute[] {
  const heartbeat = async (raw: string) => {
    if (!SLUG.test(raw)) throw Boom.badRequest('heartbeat slug must be 1 to 64 lower-case letters, digits and hyphens')
    const row = await findHeartbeat({ db, slug: raw })
    if (row === null) throw Boom.notFound('no heartbeat has this slug')
    return row
  }
  return [
    {
      method: 'GET',
      path: '/api/badge/heartbeat/{slug}',
      options: BADGE_ROUTE,
      handler: async (request, h) => {
        const { style, label, logo } = badgeOptions(request)
        const row = await heartbeat(request.params.slug as string)
        const badge = renderer.svg(describeHeartbeatBadge(row.name, row.state, label), style, label !== undefined, logo)
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
        const row = await heartbeat(request.params.slug as string)
        const badge = renderer.endpoint(describeHeartbeatBadge(row.name, row.state, label), chosen, label !== undefined, logo)
        return sendBadge(request, h, badge, JSON_TYPE)
      }
    }
  ]
}
