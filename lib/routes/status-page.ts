import { promisify } from 'node:util'
import { gzip as gzipCallback } from 'node:zlib'
import Boom from '@hapi/boom'
import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi'
import { StreamRefusedError } from '../events/streams.js'
import { eventStreamResponse } from './events.js'
import type { PageStreams } from '../events/page-streams.js'
import type { RenderCache, RenderedPage } from '../pages/render-cache.js'
import { logoOrigin, statusPageContext, statusPageKeys } from '../pages/status-page.js'
import { loadStatusPageView } from '../pages/status-page-model.js'
import type { SiteStates } from '../monitoring/state/site-state.js'
import { pageCsp, pageView, securePage } from '../pages/views.js'
import { clientAddress } from '../rules/client-address.js'
import { parseSlug } from '../rules/status-page-fields.js'
import type { Db } from '../store/db.js'
import { findStatusPage } from '../store/status-pages.js'

/** Why `slug` is no slug, in the pages API's words; null for a slug. */
function badSlug(slug: string): string | null {
  const parsed = parseSlug(slug)
  return parsed.ok ? null : parsed.error
}
const RETRY_AFTER_S = 5
const NOT_FOUND = { title: 'Not found', message: 'there is no status page here' }

/**
 * `GET /status/{slug}`: a status page as HTML, for people, and `GET /status/{slug}/events`, the
 * Server-Sent Events its script listens to. No key. The HTML is served from the render cache the
 * page's JSON and feed share (key `/status/{slug}`), forgotten when one of its sites changes
 * (see {@link PageStreams}). Its CSP allows images from the logo's own origin, and no other.
 */
export function statusPageHtmlRoutes({
  db,
  states,
  now,
  renders,
  publicUrl,
  streams,
  trustedProxies = []
}: {
  db: Db
  states: SiteStates
  now: () => Date
  renders: RenderCache
  publicUrl: string
  /** The page streams; without them (some tests) there is no events route. */
  streams?: PageStreams
  /** TRUSTED_PROXIES: whose `X-Forwarded-For` names the client the streams are counted for. */
  trustedProxies?: readonly string[]
}): ServerRoute[] {
  const html: ServerRoute = {
    method: 'GET',
    path: '/status/{slug}',
    options: { auth: false, plugins: { page: true } },
    handler: async (request, h) => {
      const slug = request.params.slug as string
      const bad = badSlug(slug)
      if (bad !== null) return pageView(h, 'error', { title: 'Bad request', message: bad }, 400)
      // A missing page is not kept: one created a moment later must be served at once.
      const page = await renders
        .get(statusPageKeys(slug).html, async () => {
          const view = await loadStatusPageView({ db, states, slug, now: now() })
          if (view === null) throw new NoSuchPage()
          const origin = logoOrigin(view.logo_url)
          const csp = pageCsp({ images: origin === null ? [] : [origin], connect: true })
          return { ...(await render(request, 'status-page', statusPageContext({ view, publicUrl }))), csp }
        })
        .catch((err: unknown) => {
          if (err instanceof NoSuchPage) return null
          throw err
        })
      return page === null ? pageView(h, 'error', NOT_FOUND, 404) : reply(request, h, page)
    }
  }
  if (streams === undefined) return [html]
  const events: ServerRoute = {
    method: 'GET',
    path: '/status/{slug}/events',
    options: { auth: false },
    handler: async (request, h) => {
      const slug = request.params.slug as string
      const bad = badSlug(slug)
      if (bad !== null) throw Boom.badRequest(bad)
      if ((await findStatusPage({ db, slug })) === null) throw Boom.notFound('no such status page')
      let stream
      try {
        const client = clientAddress(request.info.remoteAddress, request.raw.req.headers['x-forwarded-for'], trustedProxies)
        stream = streams.open({ slug, client })
      } catch (err) {
        if (!(err instanceof StreamRefusedError)) throw err
        const boom = err.code === 'STREAMS_PER_CLIENT' ? Boom.tooManyRequests(err.message) : Boom.serverUnavailable(err.message)
        boom.output.headers['Retry-After'] = String(RETRY_AFTER_S)
        throw boom
      }
      return eventStreamResponse(request, h, stream)
    }
  }
  return [html, events]
}

const gzip = promisify(gzipCallback)

class NoSuchPage extends Error {}

async function render(request: Request, template: string, context: Record<string, unknown>, status = 200): Promise<RenderedPage> {
  return { status, html: Buffer.from(await request.render(template, context)) }
}

/**
 * Each render gzipped once, for the clients that take gzip (browsers): hapi would otherwise compress
 * a page of 50 sites (340 KB, 3-5 ms of the main thread) on every answer, and every open page
 * fetches itself again on each of its events.
 */
const gzipped = new WeakMap<RenderedPage, Promise<Buffer>>()

async function reply(request: Request, h: ResponseToolkit, page: RenderedPage) {
  let body = page.html
  const zipped = request.info.acceptEncoding === 'gzip'
  if (zipped) {
    let pending = gzipped.get(page)
    if (pending === undefined) {
      pending = gzip(page.html)
      gzipped.set(page, pending)
    }
    body = await pending
  }
  const response = h.response(body).type('text/html; charset=utf-8').code(page.status).vary('accept-encoding')
  if (zipped) response.compressed('gzip')
  return securePage(response, page.csp)
}
