import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi'
import { tryNormaliseDomain } from '../rules/domain.js'
import type { SiteStates } from '../monitoring/state/site-state.js'
import {
  CHART_BUCKET_MS,
  CHART_PERIOD_MS,
  PAGE_EVENTS,
  PAGE_OUTAGES,
  SITES_PER_PAGE,
  siteListContext,
  sitePageContext
} from '../pages/site-page.js'
import { RenderCache, type RenderedPage } from '../pages/render-cache.js'
import { PAGES_DIR, pageView, securePage } from '../pages/views.js'
import type { Db } from '../store/db.js'
import { listSiteEvents } from '../store/events.js'
import { listOutages } from '../store/outages.js'
import { listResponseTimes } from '../store/response-times.js'

/** Static files change only with a release; a short max-age keeps a deploy visible within minutes. */
const STATIC_MAX_AGE_MS = 10 * 60_000

/** A page rendered through the layout, as bytes to keep. */
async function render(request: Request, template: string, context: Record<string, unknown>, status = 200): Promise<RenderedPage> {
  return { status, html: Buffer.from(await request.render(template, context)) }
}

function reply(h: ResponseToolkit, page: RenderedPage) {
  return securePage(h.response(page.html).type('text/html; charset=utf-8').code(page.status))
}

/**
 * The public HTML pages: `/` lists the tracked sites, `/sites/{domain}` is the page a status
 * record's `url` points at. No key. Their errors are pages too (`plugins.page`). Both are served
 * from renders kept for up to a second (see {@link RenderCache}), so that their cost does not grow
 * with the request rate; what is cheap to answer (bad input, an untracked domain) is not kept.
 */
export function pageRoutes({
  db,
  states,
  now,
  publicUrl,
  renders = new RenderCache()
}: {
  db: Db
  states: SiteStates
  now: () => Date
  publicUrl: string
  renders?: RenderCache
}): ServerRoute[] {
  return [
    {
      method: 'GET',
      path: '/',
      options: { auth: false, plugins: { page: true } },
      handler: async (request, h) => {
        const raw = request.query.page
        const page = raw === undefined ? 1 : typeof raw === 'string' && /^[1-9]\d{0,5}$/.test(raw) ? Number(raw) : NaN
        if (Number.isNaN(page)) return pageView(h, 'error', { title: 'Bad request', message: 'page must be a whole number from 1' }, 400)
        if (page > 1 && (page - 1) * SITES_PER_PAGE >= states.size) {
          return pageView(h, 'error', { title: 'Not found', message: 'there is no such page of sites' }, 404)
        }
        return reply(
          h,
          await renders.get(`/?page=${page}`, async () =>
            render(request, 'index', siteListContext({ ...(await states.listPage(now(), page, SITES_PER_PAGE)), page }))
          )
        )
      }
    },
    {
      method: 'GET',
      path: '/sites/{domain}',
      options: { auth: false, plugins: { page: true } },
      handler: async (request, h) => {
        const parsed = tryNormaliseDomain(request.params.domain)
        if (!parsed.ok) return pageView(h, 'error', { title: 'Bad request', message: parsed.error.message }, 400)
        const domain = parsed.domain
        if (!states.has(domain)) return pageView(h, 'error', { title: 'Not found', message: 'this site is not tracked here' }, 404)
        return reply(
          h,
          await renders.get(`/sites/${domain}`, async () => {
            const at = now()
            const record = states.statusRecord(domain, at)
            const siteId = states.siteId(domain)
            // Removed while the render waited its turn: as if it had been asked a moment later.
            if (record === null || siteId === undefined)
              return render(request, 'error', { title: 'Not found', message: 'this site is not tracked here' }, 404)
            const [page, buckets, events] = await Promise.all([
              listOutages({ db, domain, ongoing: false, limit: PAGE_OUTAGES }),
              listResponseTimes({ db, siteId, from: new Date(at.getTime() - CHART_PERIOD_MS), to: at, bucketMs: CHART_BUCKET_MS }),
              listSiteEvents({ db, siteId, limit: PAGE_EVENTS })
            ])
            return render(request, 'site', sitePageContext({ record, outages: page.outages, buckets, events, publicUrl, now: at }))
          })
        )
      }
    },
    {
      method: 'GET',
      path: '/static/{file}',
      options: {
        auth: false,
        files: { relativeTo: PAGES_DIR },
        cache: { expiresIn: STATIC_MAX_AGE_MS, privacy: 'public' },
        security: { hsts: false, xframe: 'deny', xss: false, noOpen: false, noSniff: true, referrer: false }
      },
      handler: { directory: { path: 'static', listing: false, index: false, redirectToSlash: false } }
    }
  ]
}
