/* eslint max-lines: ["error", 420] -- the alerting block makes it 404; the openapi-fetch rebuild (client branch) splits this file. */
/**
 * The typed client of the Site Status API (`import { SiteStatusClient } from 'site-status-api/client'`):
 * one method per operation of the OpenAPI document, named by its operationId, typed from the types
 * generated from that document (schema.ts). Rules in docs/decisions.md, "Client".
 */
import { setTimeout as sleepFor } from 'node:timers/promises'
import { tryNormaliseDomain } from '../rules/domain.js'
import type { Sleep } from './budget.js'
import { batchCheck, serviceEvents, statusPageEvents, type BatchCheck } from './streams.js'
import { fillPath, Transport, type Call } from './transport.js'
import type * as T from './types.js'

export { SiteStatusError, type SiteStatusErrorCode } from './errors.js'
export type { BatchCheck } from './streams.js'
export type { Sleep } from './budget.js'
export * from './types.js'
export type { components, operations, paths } from './schema.js'

export interface SiteStatusClientOptions {
  /** Where the service answers, e.g. `https://status.example.net` (a path prefix is kept). */
  baseUrl: string
  /** An API key (`ssk_...`); without one only the open routes (health, badges, pages, the document) answer. */
  key?: string
  /** The fetch to send with (default: the global one). */
  fetch?: typeof fetch
  /** How many times a call is tried again after a 429 or 503 with Retry-After, or a GET with no answer (default 3). */
  retries?: number
  /** The longest the client waits before a retry or for the budget; a longer Retry-After fails the call at once (default 60,000). */
  maxRetryWaitMs?: number
  /** The clock the budget is kept by, in ms (default `Date.now`). */
  now?: () => number
  /** How the client waits (default: a timer); it must reject once its signal aborts. */
  sleep?: Sleep
}

/** Options every call takes. */
export interface CallOptions {
  /** Aborts the call, its waits included; it then rejects with the signal's reason. */
  signal?: AbortSignal
}

/** A check's options: the call's, and the expectations its answers are judged by. */
export interface CheckOptions extends CallOptions {
  expect?: T.CheckExpectations
}

/** The body's `expect`, only when given: a check without one sends what it always did. */
const expectOf = ({ expect }: CheckOptions): { expect?: T.CheckExpectations } => (expect === undefined ? {} : { expect })

/** Units per check (the document's info.description: a check costs 5, `rate_limit` nothing, the rest 1). */
const CHECK_COST = 5

const defaultSleep: Sleep = (ms, signal) =>
  sleepFor(ms, undefined, { signal }).catch((err: unknown) => {
    // Node's timer rejects with an AbortError of its own; the caller's reason is what it aborted with.
    throw signal?.aborted ? signal.reason : err
  })

export class SiteStatusClient {
  readonly #transport: Transport

  constructor(options: SiteStatusClientOptions) {
    const { baseUrl, key, retries = 3, maxRetryWaitMs = 60_000 } = options
    if (typeof baseUrl !== 'string' || !/^https?:\/\/[^/]/.test(baseUrl)) throw new TypeError('baseUrl must be an http:// or https:// URL')
    if (key !== undefined && (typeof key !== 'string' || key === '')) throw new TypeError('key must be a non-empty string')
    if (!Number.isInteger(retries) || retries < 0) throw new TypeError('retries must be an integer of at least 0')
    if (!(maxRetryWaitMs >= 0)) throw new TypeError('maxRetryWaitMs must be a number of at least 0')
    const fetchWith = options.fetch ?? globalThis.fetch
    if (typeof fetchWith !== 'function') throw new TypeError('fetch must be a function (Node 18+ has a global one)')
    this.#transport = new Transport({
      baseUrl,
      key,
      fetch: fetchWith,
      retries,
      maxRetryWaitMs,
      now: options.now ?? Date.now,
      sleep: options.sleep ?? defaultSleep
    })
  }

  /** The key's budget as the client last learnt it, with the units of calls in flight; undefined before any keyed answer. */
  get budget(): { limit: number; remaining: number; resetAt: number; pending: number } | undefined {
    return this.#transport.budget.state
  }

  /** `GET /healthz`: serving, database reachable. Not retried; a degraded instance throws 503 with its `body`. */
  health(options?: CallOptions): Promise<T.Health> {
    return this.#json({ ...get('/healthz', options), keyed: false, retries: 0 })
  }

  /** `GET /metrics`: the Prometheus exposition (text); costs nothing. */
  getMetrics(options?: CallOptions): Promise<string> {
    return this.#text({ ...get('/metrics', options), accept: 'text/plain', cost: 0 })
  }

  /** `GET /api/v1/rate_limit`: the key's budget; costs nothing. */
  getRateLimit(options?: CallOptions): Promise<T.RateLimit> {
    return this.#json({ ...get('/api/v1/rate_limit', options), cost: 0 })
  }

  /**
   * `POST /api/v1/check`: checks a domain now from every location (5 units); `expect`: what a
   * healthy answer is (status codes, a text in the body, the slow threshold), judged at each location.
   */
  checkDomain(domain: string, options: CheckOptions = {}): Promise<T.CheckResult> {
    const body: T.Body<'checkDomain'> = { domain, ...expectOf(options) }
    return this.#json({ ...post('/api/v1/check', body, options), cost: CHECK_COST })
  }

  /** `POST /api/v1/checks`: up to 100 domains, answered once all are done (5 units per distinct domain). */
  checkDomains(domains: string[], options: CheckOptions = {}): Promise<T.BatchCheckResults> {
    const body: T.Body<'checkDomains'> = { domains, ...expectOf(options) }
    return this.#json({ ...post('/api/v1/checks', body, options), cost: batchCost(domains) })
  }

  /**
   * `POST /api/v1/checks` streamed (NDJSON): iterate it with `for await` to get each domain's
   * result or error as it completes (an error line has a `code`: see {@link T.isBatchCheckError}).
   * The summary line is not yielded: it is the iterator's return value and then `summary`. The
   * request goes when the loop starts; leaving the loop early, or aborting `signal`, aborts it,
   * and the server stops the probing only this client waited for. Iterate once.
   */
  checkMany(domains: string[], options: CheckOptions = {}): BatchCheck {
    const body: T.Body<'checkDomains'> = { domains, ...expectOf(options) }
    const call = { ...post('/api/v1/checks', body), accept: 'application/x-ndjson', cost: batchCost(domains) }
    return batchCheck(this.#transport, call, options.signal)
  }

  /** `GET /api/v1/status/{domain}`: a tracked site's stored status. */
  getStatus(domain: string, options?: CallOptions): Promise<T.StatusRecord> {
    return this.#json(get(path('/api/v1/status/{domain}', { domain }), options))
  }

  /** `GET /api/v1/outages`: confirmed outages, newest first, a page at a time (`next_cursor`). */
  listOutages(query: T.Query<'listOutages'> = {}, options?: CallOptions): Promise<T.OutageList> {
    return this.#json({ ...get('/api/v1/outages', options), query })
  }

  /** `GET /api/v1/sites`: tracked sites, by domain, a page at a time. */
  listSites(query: T.Query<'listSites'> = {}, options?: CallOptions): Promise<T.SiteList> {
    return this.#json({ ...get('/api/v1/sites', options), query })
  }

  /** `POST /api/v1/sites`: tracks a site (scope `manage`). */
  addSite(site: T.AddSiteRequest, options?: CallOptions): Promise<T.StatusRecord> {
    return this.#json(post('/api/v1/sites', site, options))
  }

  /** `PATCH /api/v1/sites/{domain}`: changes a tracked site's name or settings (scope `manage`). */
  changeSite(domain: string, change: T.ChangeSiteRequest, options?: CallOptions): Promise<T.StatusRecord> {
    return this.#json({ ...base('PATCH', path('/api/v1/sites/{domain}', { domain }), options?.signal), body: change })
  }

  /** `DELETE /api/v1/sites/{domain}`: stops tracking a site (scope `manage`). */
  removeSite(domain: string, options?: CallOptions): Promise<void> {
    return this.#none(remove(path('/api/v1/sites/{domain}', { domain }), options))
  }

  /** `GET /api/v1/sites/{domain}/sla`: uptime, downtime and outages over [from, to). */
  getSla(domain: string, query: T.Query<'getSla'> = {}, options?: CallOptions): Promise<T.Sla> {
    return this.#json({ ...get(path('/api/v1/sites/{domain}/sla', { domain }), options), query })
  }

  /** `POST /api/v1/sites/{domain}/maintenance`: adds a maintenance window, one-off or weekly (scope `manage`). */
  addMaintenanceWindow(domain: string, window: T.MaintenanceWindowRequest, options?: CallOptions): Promise<T.MaintenanceWindow> {
    return this.#json(post(path('/api/v1/sites/{domain}/maintenance', { domain }), window, options))
  }

  /** `GET /api/v1/sites/{domain}/maintenance`: a tracked site's maintenance windows. */
  listMaintenanceWindows(domain: string, options?: CallOptions): Promise<T.MaintenanceWindowList> {
    return this.#json(get(path('/api/v1/sites/{domain}/maintenance', { domain }), options))
  }

  /** `DELETE /api/v1/sites/{domain}/maintenance/{id}`: removes a maintenance window (scope `manage`). */
  removeMaintenanceWindow(domain: string, id: number, options?: CallOptions): Promise<void> {
    return this.#none(remove(path('/api/v1/sites/{domain}/maintenance/{id}', { domain, id }), options))
  }

  /** `POST /api/v1/pages`: creates a status page listing tracked sites (scope `manage`). */
  createPage(page: T.CreatePageRequest, options?: CallOptions): Promise<T.StatusPageRecord> {
    return this.#json(post('/api/v1/pages', page, options))
  }

  /** `GET /api/v1/pages`: every status page, by slug. */
  listPages(options?: CallOptions): Promise<T.StatusPageList> {
    return this.#json(get('/api/v1/pages', options))
  }

  /** `GET /api/v1/pages/{slug}`: a status page. */
  getPage(slug: string, options?: CallOptions): Promise<T.StatusPageRecord> {
    return this.#json(get(path('/api/v1/pages/{slug}', { slug }), options))
  }

  /** `PATCH /api/v1/pages/{slug}`: changes a page's title, description, logo or sites (scope `manage`). */
  changePage(slug: string, change: T.ChangePageRequest, options?: CallOptions): Promise<T.StatusPageRecord> {
    return this.#json({ ...base('PATCH', path('/api/v1/pages/{slug}', { slug }), options?.signal), body: change })
  }

  /** `DELETE /api/v1/pages/{slug}`: deletes a status page; its sites stay tracked (scope `manage`). */
  deletePage(slug: string, options?: CallOptions): Promise<void> {
    return this.#none(remove(path('/api/v1/pages/{slug}', { slug }), options))
  }

  /** `POST /api/v1/webhooks`: registers a webhook; the answer holds its secret, shown only here. */
  createWebhook(webhook: T.WebhookRequest, options?: CallOptions): Promise<T.WebhookCreated> {
    return this.#json(post('/api/v1/webhooks', webhook, options))
  }

  /** `GET /api/v1/webhooks`: every webhook, without secrets. */
  listWebhooks(options?: CallOptions): Promise<T.WebhookList> {
    return this.#json(get('/api/v1/webhooks', options))
  }

  /** `DELETE /api/v1/webhooks/{id}`: removes a webhook and its delivery log. */
  deleteWebhook(id: number, options?: CallOptions): Promise<void> {
    return this.#none(remove(path('/api/v1/webhooks/{id}', { id }), options))
  }

  /** `GET /api/v1/webhooks/{id}/deliveries`: a webhook's deliveries, newest first. */
  listDeliveries(id: number, query: T.Query<'listDeliveries'> = {}, options?: CallOptions): Promise<T.DeliveryList> {
    return this.#json({ ...get(path('/api/v1/webhooks/{id}/deliveries', { id }), options), query })
  }

  /** `POST /api/v1/webhooks/{id}/deliveries/{delivery_id}/retry`: sends a delivery again now. */
  retryDelivery(id: number, deliveryId: number, options?: CallOptions): Promise<T.Delivery> {
    const template = path('/api/v1/webhooks/{id}/deliveries/{delivery_id}/retry', { id, delivery_id: deliveryId })
    return this.#json(post(template, undefined, options))
  }

  // Alerting (scope `manage`): channels, their tests and delivery logs, policies, and what a site or page uses.
  /** `POST /api/v1/channels`: adds an alert channel; secrets go in and are never shown back. */
  createChannel(channel: T.ChannelRequest, options?: CallOptions): Promise<T.Channel> {
    return this.#json(post('/api/v1/channels', channel, options))
  }
  /** `GET /api/v1/channels`: every alert channel, with its health. */
  listChannels(options?: CallOptions): Promise<T.ChannelList> {
    return this.#json(get('/api/v1/channels', options))
  }
  /** `GET /api/v1/channels/{id}`: an alert channel. */
  getChannel(id: number, options?: CallOptions): Promise<T.Channel> {
    return this.#json(get(path('/api/v1/channels/{id}', { id }), options))
  }
  /** `PATCH /api/v1/channels/{id}`: changes a channel (config keys given replace the stored ones). */
  changeChannel(id: number, change: T.ChannelChange, options?: CallOptions): Promise<T.Channel> {
    return this.#json({ ...base('PATCH', path('/api/v1/channels/{id}', { id }), options?.signal), body: change })
  }
  /** `DELETE /api/v1/channels/{id}`: removes a channel, its queue and its log. */
  deleteChannel(id: number, options?: CallOptions): Promise<void> {
    return this.#none(remove(path('/api/v1/channels/{id}', { id }), options))
  }
  /** `POST /api/v1/channels/{id}/test`: sends a test message now; resolves to what the receiver said. */
  testChannel(id: number, options?: CallOptions): Promise<T.ChannelTest> {
    return this.#json(post(path('/api/v1/channels/{id}/test', { id }), undefined, options))
  }
  /** `GET /api/v1/channels/{id}/deliveries`: a channel's messages, newest first. */
  listChannelDeliveries(id: number, query: T.Query<'listChannelDeliveries'> = {}, options?: CallOptions): Promise<T.AlertMessageList> {
    return this.#json({ ...get(path('/api/v1/channels/{id}/deliveries', { id }), options), query })
  }
  /** `POST /api/v1/alert-policies`: adds an alert policy. */
  createAlertPolicy(policy: T.AlertPolicyRequest, options?: CallOptions): Promise<T.AlertPolicy> {
    return this.#json(post('/api/v1/alert-policies', policy, options))
  }
  /** `GET /api/v1/alert-policies`: every alert policy. */
  listAlertPolicies(options?: CallOptions): Promise<T.AlertPolicyList> {
    return this.#json(get('/api/v1/alert-policies', options))
  }
  /** `GET /api/v1/alert-policies/{id}`: an alert policy. */
  getAlertPolicy(id: number, options?: CallOptions): Promise<T.AlertPolicy> {
    return this.#json(get(path('/api/v1/alert-policies/{id}', { id }), options))
  }
  /** `PATCH /api/v1/alert-policies/{id}`: changes an alert policy. */
  changeAlertPolicy(id: number, change: T.AlertPolicyRequest, options?: CallOptions): Promise<T.AlertPolicy> {
    return this.#json({ ...base('PATCH', path('/api/v1/alert-policies/{id}', { id }), options?.signal), body: change })
  }
  /** `DELETE /api/v1/alert-policies/{id}`: removes an alert policy. */
  deleteAlertPolicy(id: number, options?: CallOptions): Promise<void> {
    return this.#none(remove(path('/api/v1/alert-policies/{id}', { id }), options))
  }
  /** `GET /api/v1/sites/{domain}/alerting`: a site's alert policy and parent. */
  getSiteAlerting(domain: string, options?: CallOptions): Promise<T.SiteAlerting> {
    return this.#json(get(path('/api/v1/sites/{domain}/alerting', { domain }), options))
  }
  /** `PUT /api/v1/sites/{domain}/alerting`: sets a site's alert policy and what it depends on. */
  setSiteAlerting(domain: string, alerting: T.SiteAlertingRequest, options?: CallOptions): Promise<T.SiteAlerting> {
    return this.#json({ ...base('PUT', path('/api/v1/sites/{domain}/alerting', { domain }), options?.signal), body: alerting })
  }
  /** `GET /api/v1/pages/{slug}/alerting`: a status page's alert policy. */
  getPageAlerting(slug: string, options?: CallOptions): Promise<T.PageAlerting> {
    return this.#json(get(path('/api/v1/pages/{slug}/alerting', { slug }), options))
  }
  /** `PUT /api/v1/pages/{slug}/alerting`: sets a status page's alert policy. */
  setPageAlerting(slug: string, policy: number | null, options?: CallOptions): Promise<T.PageAlerting> {
    return this.#json({ ...base('PUT', path('/api/v1/pages/{slug}/alerting', { slug }), options?.signal), body: { alert_policy: policy } })
  }

  /**
   * `GET /api/v1/events`: the events as they commit, for as long as the loop runs (leave it, or
   * abort `signal`, to close the stream). With `lastEventId` (or `since`) the events after it are
   * replayed first; after the server ends the stream, call again with the last event's id.
   */
  streamEvents(options: CallOptions & { since?: number; lastEventId?: number } = {}): AsyncGenerator<T.ServiceEvent, void, undefined> {
    const call: Omit<Call, 'signal'> = {
      ...get('/api/v1/events'),
      accept: 'text/event-stream',
      query: { since: options.since },
      headers: options.lastEventId === undefined ? {} : { 'last-event-id': String(options.lastEventId) }
    }
    return serviceEvents(this.#transport, call, options.signal)
  }

  /** `GET /api/badge/{domain}`: the status badge, SVG text. */
  getBadge(domain: string, query: T.Query<'getBadge'> = {}, options?: CallOptions): Promise<string> {
    return this.#text({ ...get(path('/api/badge/{domain}', { domain }), options), query, accept: 'image/svg+xml', keyed: false })
  }

  /** `GET /api/badge/{domain}/endpoint`: the badge as shields.io endpoint JSON. */
  getEndpointBadge(domain: string, query: T.Query<'getEndpointBadge'> = {}, options?: CallOptions): Promise<T.EndpointBadge> {
    return this.#json({ ...get(path('/api/badge/{domain}/endpoint', { domain }), options), query, keyed: false })
  }

  /** `GET /status/{slug}.json`: a status page's content as JSON. */
  getStatusPage(slug: string, options?: CallOptions): Promise<T.StatusPage> {
    return this.#json({ ...get(path('/status/{slug}.json', { slug }), options), keyed: false })
  }

  /** `GET /status/{slug}/feed.atom`: a status page's incidents, Atom XML text. */
  getStatusPageFeed(slug: string, options?: CallOptions): Promise<string> {
    return this.#text({ ...get(path('/status/{slug}/feed.atom', { slug }), options), accept: 'application/atom+xml', keyed: false })
  }

  /** `GET /api/badge/page/{slug}`: a status page's badge, SVG text. */
  getPageBadge(slug: string, query: T.Query<'getPageBadge'> = {}, options?: CallOptions): Promise<string> {
    return this.#text({ ...get(path('/api/badge/page/{slug}', { slug }), options), query, accept: 'image/svg+xml', keyed: false })
  }

  /** `GET /api/v1/openapi.json`: the OpenAPI document these types come from. */
  getOpenApi(options?: CallOptions): Promise<T.OpenApiDocument> {
    return this.#json({ ...get('/api/v1/openapi.json', options), keyed: false })
  }

  /** `GET /`: the HTML list of tracked sites. */
  siteListPage(query: T.Query<'siteListPage'> = {}, options?: CallOptions): Promise<string> {
    return this.#text({ ...get('/', options), query, accept: 'text/html', keyed: false })
  }

  /** `GET /sites/{domain}`: a site's HTML page. */
  sitePage(domain: string, options?: CallOptions): Promise<string> {
    return this.#text({ ...get(path('/sites/{domain}', { domain }), options), accept: 'text/html', keyed: false })
  }

  /** `GET /status/{slug}`: a status page's HTML. */
  statusPage(slug: string, options?: CallOptions): Promise<string> {
    return this.#text({ ...get(path('/status/{slug}', { slug }), options), accept: 'text/html', keyed: false })
  }

  /** `GET /status/{slug}/events`: the page's sites' events from now on, for as long as the loop runs (or until `signal` aborts). */
  streamStatusPageEvents(slug: string, options: CallOptions = {}): AsyncGenerator<T.StatusPageEvent, void, undefined> {
    const call: Omit<Call, 'signal'> = { ...get(path('/status/{slug}/events', { slug })), accept: 'text/event-stream', keyed: false }
    return statusPageEvents(this.#transport, call, options.signal)
  }

  async #json<R>(call: Call): Promise<R> {
    const res = await this.#transport.send(call)
    return (await res.json()) as R
  }

  async #text(call: Call): Promise<string> {
    return (await this.#transport.send(call)).text()
  }

  async #none(call: Call): Promise<void> {
    const res = await this.#transport.send(call)
    await res.body?.cancel()
  }
}

/** A path of the document with its parameters filled in. */
type FilledPath = string & { readonly filled: true }
/** A path as the document writes it (one without parameters), or one filled in by {@link path}. */
type Target = T.PathTemplate | FilledPath

/** A keyed JSON call costing 1, the usual case; callers override what differs. */
const base = (method: Call['method'], path: Target, signal: AbortSignal | undefined): Call => ({
  method,
  path,
  accept: 'application/json',
  keyed: true,
  cost: 1,
  signal
})
const get = (p: Target, options?: CallOptions): Call => base('GET', p, options?.signal)
const post = (p: Target, body: unknown, options?: CallOptions): Call => ({ ...base('POST', p, options?.signal), body })
const remove = (p: Target, options?: CallOptions): Call => base('DELETE', p, options?.signal)
const path = (template: T.PathTemplate, params: Record<string, string | number>): FilledPath => fillPath(template, params) as FilledPath

/** What a batch costs: 5 per distinct valid domain, as the server normalises them (invalid ones cost nothing). */
function batchCost(domains: readonly string[]): number {
  const distinct = new Set<string>()
  for (const entry of domains) {
    const parsed = tryNormaliseDomain(entry)
    if (parsed.ok) distinct.add(parsed.domain)
  }
  return CHECK_COST * distinct.size
}
