import Boom from '@hapi/boom'
import type { ServerRoute } from '@hapi/hapi'
import { SiteCharts } from '../badge/charts.js'
import { CHART_WINDOWS, DEFAULT_WINDOWS, parseWindow } from '../badge/figures.js'
import { renderedBody, type BadgeRenderer, type RenderedBadge } from '../badge/renderer.js'
import { ResponseHistory } from '../badge/response-history.js'
import { PageFigures, SiteFigures } from '../badge/sources.js'
import { CHART_HEIGHT, CHART_WIDTH, xmlText } from '../badge/sparkline.js'
import type { SiteStates } from '../monitoring/state/site-state.js'
import type { PageDirectory } from '../pages/page-directory.js'
import { parseSlug } from '../rules/status-page-fields.js'
import type { Db } from '../store/db.js'
import { BADGE_ROUTE, badgeDomain, optionFailure, sendBadge, statusBadgeRoutes, SVG } from './badge.js'
import { figureBadgeRoutes } from './badge-figures.js'

export interface BadgeDeps {
  db: Db
  states: SiteStates
  renderer: BadgeRenderer
  now: () => Date
  /** The status pages, for their figure badges. */
  directory: PageDirectory
  /** The sites' hourly response times; tests pass their own. */
  history?: ResponseHistory
}

/** A page's slug from a badge URL; text that cannot be one is a 400. */
function pageSlug(raw: string): string {
  const parsed = parseSlug(raw)
  if (parsed.ok) return parsed.value
  throw Boom.badRequest(parsed.error)
}

/** The chart of a domain nobody tracks: grey words, never kept by anyone. */
const UNTRACKED_CHART: RenderedBadge = renderedBody(
  `<svg xmlns="http://www.w3.org/2000/svg" width="${CHART_WIDTH}" height="${CHART_HEIGHT}" viewBox="0 0 ${CHART_WIDTH} ${CHART_HEIGHT}" role="img" aria-labelledby="chart-title">` +
    `<title id="chart-title">${xmlText('Response time: not tracked')}</title>` +
    `<rect width="${CHART_WIDTH}" height="${CHART_HEIGHT}" rx="3" fill="#fff" stroke="#d0d7de"/>` +
    `<text x="${CHART_WIDTH / 2}" y="${CHART_HEIGHT / 2 + 4}" text-anchor="middle" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11" fill="#57606a">not tracked</text></svg>`
)

/**
 * Every badge route: the status badges, the figure badges of sites (`/api/badge/{domain}/...`) and
 * of status pages (`/api/badge/page/{slug}/...`), and a site's response-time chart. No key; a hit
 * is answered from memory (a first look at a site's response times reads them once). A heartbeat
 * family adds one more {@link figureBadgeRoutes} call here.
 */
export function badgeRoutes({ db, states, renderer, now, directory, history = new ResponseHistory({ db }) }: BadgeDeps): ServerRoute[] {
  const sites = new SiteFigures({ states, history })
  const pages = new PageFigures({ directory, states, sites })
  const charts = new SiteCharts({ states, history })
  const deps = { renderer, now }
  const chart: ServerRoute = {
    method: 'GET',
    path: '/api/badge/{domain}/chart.svg',
    options: BADGE_ROUTE,
    handler: (request, h) => {
      let window
      try {
        window = parseWindow(request.query.window, CHART_WINDOWS, DEFAULT_WINDOWS.chart)
      } catch (err) {
        optionFailure(err)
      }
      const domain = badgeDomain(states, request.params.domain as string)
      const site = states.uptimeSource(domain)
      if (site === null) return sendBadge(request, h, UNTRACKED_CHART, SVG, false)
      const drawn = charts.chart(domain, site, window, now().getTime())
      return drawn instanceof Promise ? drawn.then((c) => sendBadge(request, h, c, SVG)) : sendBadge(request, h, drawn, SVG)
    }
  }
  return [
    ...statusBadgeRoutes({ states, renderer, now }),
    ...figureBadgeRoutes(
      { base: '/api/badge/{domain}', param: 'domain', name: (raw) => badgeDomain(states, raw), source: sites, missing: 'badge' },
      deps
    ),
    chart,
    ...figureBadgeRoutes(
      { base: '/api/badge/page/{slug}', param: 'slug', name: pageSlug, source: pages, missing: { notFound: 'no such status page' } },
      deps
    )
  ]
}
