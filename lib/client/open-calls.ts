/**
 * The client's calls of the open routes (no key): badges, status pages, the HTML pages and the
 * OpenAPI document. SiteStatusClient adds the keyed ones on top.
 */
import { accept, init, json, text, type Api, type CallOptions } from './api.js'
import { statusPageEvents } from './streams.js'
import type * as T from './types.js'

const SVG = accept('image/svg+xml')
const EVENT_STREAM = accept('text/event-stream')

export class OpenCalls {
  /** The openapi-fetch client every call goes through (typed by the generated `paths`). */
  protected readonly api: Api

  constructor(api: Api) {
    this.api = api
  }

  /** `GET /api/badge/{domain}`: the status badge, SVG text. */
  getBadge(domain: string, query: T.Query<'getBadge'> = {}, options?: CallOptions): Promise<string> {
    const params = { path: { domain }, query }
    return text(this.api.GET('/api/badge/{domain}', { params, ...init(options), ...accept('image/svg+xml'), parseAs: 'text' }))
  }

  /** `GET /api/badge/{domain}/endpoint`: the badge as shields.io endpoint JSON. */
  getEndpointBadge(domain: string, query: T.Query<'getEndpointBadge'> = {}, options?: CallOptions): Promise<T.EndpointBadge> {
    return json(this.api.GET('/api/badge/{domain}/endpoint', { params: { path: { domain }, query }, ...init(options) }))
  }

  /** `GET /status/{slug}.json`: a status page's content as JSON. */
  getStatusPage(slug: string, options?: CallOptions): Promise<T.StatusPage> {
    return json(this.api.GET('/status/{slug}.json', { params: { path: { slug } }, ...init(options) }))
  }

  /** `GET /status/{slug}/feed.atom`: a status page's incidents, Atom XML text. */
  getStatusPageFeed(slug: string, options?: CallOptions): Promise<string> {
    const params = { path: { slug } }
    return text(this.api.GET('/status/{slug}/feed.atom', { params, ...init(options), ...accept('application/atom+xml'), parseAs: 'text' }))
  }

  /** `GET /api/badge/page/{slug}`: a status page's badge, SVG text. */
  getPageBadge(slug: string, query: T.Query<'getPageBadge'> = {}, options?: CallOptions): Promise<string> {
    const params = { path: { slug }, query }
    return text(this.api.GET('/api/badge/page/{slug}', { params, ...init(options), ...accept('image/svg+xml'), parseAs: 'text' }))
  }

  // Figure badges of sites (`/api/badge/{domain}/...`) and status pages (`/api/badge/page/{slug}/...`): SVG text or endpoint JSON.
  /** `GET /api/badge/{domain}/uptime`: SVG text. */
  getUptimeBadge(domain: string, query: T.Query<'getUptimeBadge'> = {}, options?: CallOptions): Promise<string> {
    return text(
      this.api.GET('/api/badge/{domain}/uptime', { params: { path: { domain }, query }, ...init(options), ...SVG, parseAs: 'text' })
    )
  }
  /** `GET /api/badge/{domain}/response-time`: SVG text. */
  getResponseTimeBadge(domain: string, query: T.Query<'getResponseTimeBadge'> = {}, options?: CallOptions): Promise<string> {
    return text(
      this.api.GET('/api/badge/{domain}/response-time', { params: { path: { domain }, query }, ...init(options), ...SVG, parseAs: 'text' })
    )
  }
  /** `GET /api/badge/{domain}/chart.svg`: SVG text. */
  getChartBadge(domain: string, query: T.Query<'getChartBadge'> = {}, options?: CallOptions): Promise<string> {
    return text(
      this.api.GET('/api/badge/{domain}/chart.svg', { params: { path: { domain }, query }, ...init(options), ...SVG, parseAs: 'text' })
    )
  }
  /** `GET /api/badge/page/{slug}/uptime`: SVG text. */
  getPageUptimeBadge(slug: string, query: T.Query<'getPageUptimeBadge'> = {}, options?: CallOptions): Promise<string> {
    return text(
      this.api.GET('/api/badge/page/{slug}/uptime', { params: { path: { slug }, query }, ...init(options), ...SVG, parseAs: 'text' })
    )
  }
  /** `GET /api/badge/page/{slug}/response-time`: SVG text. */
  getPageResponseTimeBadge(slug: string, query: T.Query<'getPageResponseTimeBadge'> = {}, options?: CallOptions): Promise<string> {
    return text(
      this.api.GET('/api/badge/page/{slug}/response-time', { params: { path: { slug }, query }, ...init(options), ...SVG, parseAs: 'text' })
    )
  }
  /** `GET /api/badge/{domain}/uptime/endpoint`: shields.io endpoint JSON. */
  getUptimeEndpointBadge(domain: string, query: T.Query<'getUptimeEndpointBadge'> = {}, options?: CallOptions): Promise<T.EndpointBadge> {
    return json(this.api.GET('/api/badge/{domain}/uptime/endpoint', { params: { path: { domain }, query }, ...init(options) }))
  }
  /** `GET /api/badge/{domain}/response-time/endpoint`: shields.io endpoint JSON. */
  getResponseTimeEndpointBadge(
    domain: string,
    query: T.Query<'getResponseTimeEndpointBadge'> = {},
    options?: CallOptions
  ): Promise<T.EndpointBadge> {
    return json(this.api.GET('/api/badge/{domain}/response-time/endpoint', { params: { path: { domain }, query }, ...init(options) }))
  }
  /** `GET /api/badge/page/{slug}/endpoint`: shields.io endpoint JSON. */
  getPageEndpointBadge(slug: string, query: T.Query<'getPageEndpointBadge'> = {}, options?: CallOptions): Promise<T.EndpointBadge> {
    return json(this.api.GET('/api/badge/page/{slug}/endpoint', { params: { path: { slug }, query }, ...init(options) }))
  }
  /** `GET /api/badge/page/{slug}/uptime/endpoint`: shields.io endpoint JSON. */
  getPageUptimeEndpointBadge(
    slug: string,
    query: T.Query<'getPageUptimeEndpointBadge'> = {},
    options?: CallOptions
  ): Promise<T.EndpointBadge> {
    return json(this.api.GET('/api/badge/page/{slug}/uptime/endpoint', { params: { path: { slug }, query }, ...init(options) }))
  }
  /** `GET /api/badge/page/{slug}/response-time/endpoint`: shields.io endpoint JSON. */
  getPageResponseTimeEndpointBadge(
    slug: string,
    query: T.Query<'getPageResponseTimeEndpointBadge'> = {},
    options?: CallOptions
  ): Promise<T.EndpointBadge> {
    return json(this.api.GET('/api/badge/page/{slug}/response-time/endpoint', { params: { path: { slug }, query }, ...init(options) }))
  }

  /** `GET /api/v1/openapi.json`: the OpenAPI document these types come from. */
  getOpenApi(options?: CallOptions): Promise<T.OpenApiDocument> {
    return json(this.api.GET('/api/v1/openapi.json', init(options)))
  }

  /** `GET /api/v1/config.schema.json`: the configuration file's JSON Schema (monitoring as code). */
  getConfigSchema(options?: CallOptions): Promise<Record<string, unknown>> {
    return json(this.api.GET('/api/v1/config.schema.json', init(options)))
  }

  /** `GET /`: the HTML list of tracked sites. */
  siteListPage(query: T.Query<'siteListPage'> = {}, options?: CallOptions): Promise<string> {
    return text(this.api.GET('/', { params: { query }, ...init(options), ...accept('text/html'), parseAs: 'text' }))
  }

  /** `GET /sites/{domain}`: a site's HTML page. */
  sitePage(domain: string, options?: CallOptions): Promise<string> {
    return text(
      this.api.GET('/sites/{domain}', { params: { path: { domain } }, ...init(options), ...accept('text/html'), parseAs: 'text' })
    )
  }

  /** `GET /status/{slug}`: a status page's HTML. */
  statusPage(slug: string, options?: CallOptions): Promise<string> {
    return text(this.api.GET('/status/{slug}', { params: { path: { slug } }, ...init(options), ...accept('text/html'), parseAs: 'text' }))
  }

  /** `GET /status/{slug}/events`: the page's sites' events from now on, for as long as the loop runs (or until `signal` aborts). */
  streamStatusPageEvents(slug: string, options: CallOptions = {}): AsyncGenerator<T.StatusPageEvent, void, undefined> {
    const params = { path: { slug } }
    return statusPageEvents(
      (signal) => this.api.GET('/status/{slug}/events', { params, signal, ...EVENT_STREAM, parseAs: 'stream' }),
      options.signal
    )
  }
}
