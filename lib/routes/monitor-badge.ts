import Boom from '@hapi/boom'
import type { ServerRoute } from '@hapi/hapi'
import { describeBadge } from '../badge/describe.js'
import type { BadgeRenderer } from '../badge/renderer.js'
import type { SiteStates } from '../monitoring/state/site-state.js'
import { monitorDomain } from '../rules/monitor.js'
import { badgeOptions, BADGE_ROUTE, JSON_TYPE, sendBadge, SVG } from './badge.js'

const SLUG = /^[a-z0-9-]{1,64}$/

/**
 * `GET /api/badge/monitor/{slug}` (SVG) and `/endpoint` (shields.io JSON): a tcp, tls or dns
 * monitor's status badge, as a site's (the same words, colours, headers and caching), answered from
 * memory. A slug that is no monitor is a 404.
 */
export function monitorBadgeRoutes({
  states,
  renderer,
  now
}: {
  states: SiteStates
  renderer: BadgeRenderer
  now: () => Date
}): ServerRoute[] {
  const current = (raw: string) => {
    if (!SLUG.test(raw)) throw Boom.badRequest('monitor slug must be 1 to 64 lower-case letters, digits and hyphens')
    const held = states.current(monitorDomain(raw), now())
    if (held === null) throw Boom.notFound('no monitor has this slug')
    return held
  }
  return [
    {
      method: 'GET',
      path: '/api/badge/monitor/{slug}',
      options: BADGE_ROUTE,
      handler: (request, h) => {
        const { style, label, logo } = badgeOptions(request)
        const slug = request.params.slug as string
        const badge = renderer.svg(describeBadge(current(slug), label), style, label !== undefined, logo)
        return sendBadge(request, h, badge, SVG, true, () => states.changesOf(monitorDomain(slug)))
      }
    },
    {
      method: 'GET',
      path: '/api/badge/monitor/{slug}/endpoint',
      options: BADGE_ROUTE,
      handler: (request, h) => {
        const { style, label, logo } = badgeOptions(request)
        const chosen = request.query.style === undefined ? undefined : style
        const slug = request.params.slug as string
        const badge = renderer.endpoint(describeBadge(current(slug), label), chosen, label !== undefined, logo)
        return sendBadge(request, h, badge, JSON_TYPE, true, () => states.changesOf(monitorDomain(slug)))
      }
    }
  ]
}
