import Boom from '@hapi/boom'
import type { ResponseToolkit, ServerRoute } from '@hapi/hapi'
import { describePageBadge } from '../badge/describe.js'
import type { BadgeRenderer } from '../badge/renderer.js'
import type { SiteStates } from '../monitoring/state/site-state.js'
import type { PageDirectory, PageSites } from '../pages/page-directory.js'
import type { RenderCache, RenderedPage } from '../pages/render-cache.js'
import { statusPageKeys } from '../pages/status-page.js'
import { statusPageFeed } from '../pages/status-page-feed.js'
import { loadStatusPageView } from '../pages/status-page-model.js'
import { heartbeatPageState } from '../pages/status-page-heartbeats.js'
import type { StatusPageView } from '../pages/status-page-view.js'
import { pageState, type PageSiteState, type PageState } from '../rules/page-state.js'
import { parseSlug } from '../rules/status-page-fields.js'
import type { Db } from '../store/db.js'
import { listHeartbeatStates } from '../store/heartbeats.js'
import { BADGE_ROUTE, badgeOptions, JSON_TYPE, sendBadge, SVG } from './badge.js'

/** How long a page badge's state is reused: the badge is cached a minute by anyone anyway. */
const BADGE_STATE_MS = 1000

const NO_SUCH_PAGE = 'no such status page'

function slugOf(raw: unknown): string {
  const parsed = parseSlug(raw)
  if (parsed.ok) return parsed.value
  throw Boom.badRequest(parsed.error)
}

/** Public answers: any origin may read them (widgets), and a reader may keep them for a few seconds. */
function reply(h: ResponseToolkit, rendered: RenderedPage, type: string) {
  return h
    .response(rendered.html)
    .type(type)
    .header('access-control-allow-origin', '*')
    .header('cache-control', 'public, max-age=5')
    .header('x-content-type-options', 'nosniff')
}

export interface StatusPageDataDeps {
  db: Db
  states: SiteStates
  now: () => Date
  publicUrl: string
  badges: BadgeRenderer
  /** Renders of the public status pages, shared with the HTML page, keyed by request path. */
  renders: RenderCache
  /** The stored pages' slugs and sites, held in memory. */
  directory: PageDirectory
}

/**
 * A status page's data for machines: `GET /status/{slug}.json` (the page's view), `GET
 * /status/{slug}/feed.atom` (its incidents) and `GET /api/badge/page/{slug}` (its state; with
 * `/endpoint`, as shields.io's JSON). No key: they show only what the page lists. JSON and feed come from renders kept for a second (see
 * {@link RenderCache}); the badge is drawn from memory alone. A slug that is no page is a 404
 * known from memory, and never kept.
 */
export function statusPageDataRoutes({ db, states, now, publicUrl, badges, renders, directory }: StatusPageDataDeps): ServerRoute[] {
  /** The page, or a 404 when there is none: from memory, but for the first look. */
  const known = async (slug: string): Promise<PageSites> => {
    const found = directory.get(slug, now().getTime())
    const page = found instanceof Promise ? await found : found
    if (page === null) throw Boom.notFound(NO_SUCH_PAGE)
    return page
  }
  const render = (slug: string, key: string, body: (view: StatusPageView) => string) =>
    renders.get(key, async () => {
      const view = await loadStatusPageView({ db, states, slug, now: now() })
      // Deleted since the directory's last look: thrown, so that nothing is kept.
      if (view === null) throw Boom.notFound(NO_SUCH_PAGE)
      return { status: 200, html: Buffer.from(body(view)) }
    })

  const badgeStates = new WeakMap<PageSites, { at: number; state: PageState }>()
  /** The page's state: its sites' and monitors' from memory; its heartbeats' (if any) read, at most once a second per page. */
  const stateOf = (page: PageSites, at: Date): PageState | Promise<PageState> => {
    const kept = badgeStates.get(page)
    if (kept !== undefined && at.getTime() - kept.at < BADGE_STATE_MS && at.getTime() >= kept.at) return kept.state
    const sites: PageSiteState[] = []
    for (const domain of [...page.domains, ...page.monitorDomains]) {
      const site = states.current(domain, at)
      sites.push(
        site === null
          ? { status: 'pending', partial: false, slow: false, maintenance: false }
          : { status: site.status, partial: site.partial, slow: site.slow, maintenance: site.maintenance === true }
      )
    }
    const settle = (): PageState => {
      const state = pageState(sites)
      badgeStates.set(page, { at: at.getTime(), state })
      return state
    }
    if (page.heartbeatSiteIds.length === 0) return settle()
    return listHeartbeatStates({ db, siteIds: page.heartbeatSiteIds }).then((read) => {
      for (const id of page.heartbeatSiteIds) {
        const counted = heartbeatPageState(read.get(id) ?? 'new')
        if (counted !== null) sites.push(counted)
      }
      return settle()
    })
  }

  return [
    {
      method: 'GET',
      path: '/status/{slug}.json',
      options: { auth: false },
      handler: async (request, h) => {
        const slug = slugOf(request.params.slug)
        await known(slug)
        const rendered = await render(slug, statusPageKeys(slug).json, (view) => JSON.stringify(view))
        return reply(h, rendered, 'application/json; charset=utf-8')
      }
    },
    {
      method: 'GET',
      path: '/status/{slug}/feed.atom',
      options: { auth: false },
      handler: async (request, h) => {
        const slug = slugOf(request.params.slug)
        await known(slug)
        const rendered = await render(slug, statusPageKeys(slug).feed, (view) => statusPageFeed(view, publicUrl))
        return reply(h, rendered, 'application/atom+xml; charset=utf-8')
      }
    },
    ...(['svg', 'endpoint'] as const).map((format): ServerRoute => ({
      method: 'GET',
      path: format === 'svg' ? '/api/badge/page/{slug}' : '/api/badge/page/{slug}/endpoint',
      options: BADGE_ROUTE,
      handler: (request, h) => {
        const slug = slugOf(request.params.slug)
        const { style, label, logo } = badgeOptions(request)
        const at = now()
        const answer = (page: PageSites | null) => {
          if (page === null) throw Boom.notFound(NO_SUCH_PAGE)
          const draw = (pageState: PageState) => {
            const content = describePageBadge(page.title, pageState, label)
            const custom = label !== undefined
            if (format === 'svg') return sendBadge(request, h, badges.svg(content, style, custom, logo), SVG)
            // shields.io applies its own default style unless the URL names one.
            const chosen = request.query.style === undefined ? undefined : style
            return sendBadge(request, h, badges.endpoint(content, chosen, custom, logo), JSON_TYPE)
          }
          const state = stateOf(page, at)
          return state instanceof Promise ? state.then(draw) : draw(state)
        }
        // Answered synchronously from memory, as the site badge is; only a first look waits for a read.
        const found = directory.get(slug, at.getTime())
        return found instanceof Promise ? found.then(answer) : answer(found)
      }
    }))
  ]
}
