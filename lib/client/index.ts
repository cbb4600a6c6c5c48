/**
 * The typed client of the Site Status API (`import { SiteStatusClient } from 'site-status-api/client'`):
 * one method per operation of the OpenAPI document, named by its operationId, each a call of
 * openapi-fetch typed by the generated `paths` (schema.ts), so a route renamed in the document
 * breaks this file's compile. The open routes' calls (badges, pages) are in open-calls.ts. The key, budget, retries and errors are middleware (flow.ts). Runs
 * wherever fetch does: no Node module, no server module. Rules in docs/decisions.md, "Client".
 */
import { accept, connect, init, json, none, text, type CallOptions } from './api.js'
import { MonitorCalls } from './monitor-calls.js'
import { defaultSleep, type Budget, type Sleep } from './budget.js'
import { batchCheck, serviceEvents, type BatchCheck } from './streams.js'
import type * as T from './types.js'

export { SiteStatusError, type SiteStatusErrorCode } from './errors.js'
export type { BatchCheck } from './streams.js'
export type { Sleep } from './budget.js'
export type { CallOptions } from './api.js'
export type { PingOptions, PingSignal } from './heartbeat-calls.js'
export * from './types.js'
export type { components, operations, paths, webhooks } from './schema.js'

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
  /** The clock the budget and a Retry-After date are read by, in ms (default `Date.now`). */
  now?: () => number
  /** How the client waits (default: a timer); it must reject once its signal aborts. */
  sleep?: Sleep
}

/**
 * A check's options: the call's, the expectations its answers are judged by, and what each location
 * does (`check`: an http request with assertions, a tcp port, a tls handshake, a dns record).
 */
export interface CheckOptions extends CallOptions {
  expect?: T.CheckExpectations
  check?: T.Check
}

/** The body's `expect` and `check`, only when given: a check without them sends what it always did. */
const expectOf = ({ expect, check }: CheckOptions): { expect?: T.CheckExpectations; check?: T.Check } => ({
  ...(expect === undefined ? {} : { expect }),
  ...(check === undefined ? {} : { check })
})

const NDJSON = accept('application/x-ndjson')
const EVENT_STREAM = accept('text/event-stream')

/** A configuration file sent as it is written: its text, not JSON of it. */
const yamlBody = (file: string) => ({
  body: file,
  bodySerializer: (b: unknown) => (typeof b === 'string' ? b : JSON.stringify(b)),
  headers: { 'content-type': 'application/yaml' }
})

export class SiteStatusClient extends MonitorCalls {
  readonly #budget: Budget

  constructor(options: SiteStatusClientOptions) {
    const { baseUrl, key, retries = 3, maxRetryWaitMs = 60_000 } = options
    if (typeof baseUrl !== 'string' || !/^https?:\/\/[^/]/.test(baseUrl)) throw new TypeError('baseUrl must be an http:// or https:// URL')
    if (key !== undefined && (typeof key !== 'string' || key === '')) throw new TypeError('key must be a non-empty string')
    if (!Number.isInteger(retries) || retries < 0) throw new TypeError('retries must be an integer of at least 0')
    if (!(maxRetryWaitMs >= 0)) throw new TypeError('maxRetryWaitMs must be a number of at least 0')
    const fetchWith = options.fetch ?? globalThis.fetch
    if (typeof fetchWith !== 'function') throw new TypeError('fetch must be a function (Node 18+ and browsers have a global one)')
    const now = options.now ?? Date.now
    const sleep = options.sleep ?? defaultSleep
    const { api, budget } = connect({ baseUrl, key, fetch: fetchWith, retries, maxRetryWaitMs, now, sleep })
    super(api)
    this.#budget = budget
  }

  /** The key's budget as the client last learnt it, with the units of calls in flight; undefined before any keyed answer. */
  get budget(): { limit: number; remaining: number; resetAt: number; pending: number } | undefined {
    return this.#budget.state
  }

  /** `GET /healthz`: serving, database reachable. Not retried; a degraded instance throws 503 with its `body`. */
  health(options?: CallOptions): Promise<T.Health> {
    return json(this.api.GET('/healthz', init(options)))
  }

  /** `GET /metrics`: the Prometheus exposition (text); costs nothing. */
  getMetrics(options?: CallOptions): Promise<string> {
    return text(this.api.GET('/metrics', { ...init(options), ...accept('text/plain'), parseAs: 'text' }))
  }

  /** `GET /api/v1/rate_limit`: the key's budget; costs nothing. */
  getRateLimit(options?: CallOptions): Promise<T.RateLimit> {
    return json(this.api.GET('/api/v1/rate_limit', init(options)))
  }

  /**
   * `POST /api/v1/check`: checks a domain now from every location (5 units); `expect`: what a
   * healthy answer is (status codes, a text in the body, the slow threshold), judged at each location.
   */
  checkDomain(domain: string, options: CheckOptions = {}): Promise<T.CheckResult> {
    return json(this.api.POST('/api/v1/check', { body: { domain, ...expectOf(options) }, ...init(options) }))
  }

  /** `POST /api/v1/checks`: up to 100 domains, answered once all are done (5 units per distinct domain). */
  checkDomains(domains: T.BatchEntry[], options: CheckOptions = {}): Promise<T.BatchCheckResults> {
    return json(this.api.POST('/api/v1/checks', { body: { domains, ...expectOf(options) }, ...init(options) }))
  }

  /**
   * `POST /api/v1/checks` streamed (NDJSON): iterate it with `for await` to get each domain's
   * result or error as it completes (an error line has a `code`: see {@link T.isBatchCheckError}).
   * The summary line is not yielded: it is the iterator's return value and then `summary`. The
   * request goes when the loop starts; leaving the loop early, or aborting `signal`, aborts it,
   * and the server stops the probing only this client waited for. Iterate once.
   */
  checkMany(domains: T.BatchEntry[], options: CheckOptions = {}): BatchCheck {
    const body = { domains, ...expectOf(options) }
    return batchCheck((signal) => this.api.POST('/api/v1/checks', { body, signal, ...NDJSON, parseAs: 'stream' }), options.signal)
  }

  /** `GET /api/v1/status/{domain}`: a tracked site's stored status. */
  getStatus(domain: string, options?: CallOptions): Promise<T.StatusRecord> {
    return json(this.api.GET('/api/v1/status/{domain}', { params: { path: { domain } }, ...init(options) }))
  }

  /** `GET /api/v1/outages`: confirmed outages, newest first, a page at a time (`next_cursor`). */
  listOutages(query: T.Query<'listOutages'> = {}, options?: CallOptions): Promise<T.OutageList> {
    return json(this.api.GET('/api/v1/outages', { params: { query }, ...init(options) }))
  }

  /** `GET /api/v1/sites`: tracked sites, by domain, a page at a time. */
  listSites(query: T.Query<'listSites'> = {}, options?: CallOptions): Promise<T.SiteList> {
    return json(this.api.GET('/api/v1/sites', { params: { query }, ...init(options) }))
  }

  /** `POST /api/v1/sites`: tracks a site (scope `manage`). */
  addSite(site: T.AddSiteRequest, options?: CallOptions): Promise<T.StatusRecord> {
    return json(this.api.POST('/api/v1/sites', { body: site, ...init(options) }))
  }

  /** `PATCH /api/v1/sites/{domain}`: changes a tracked site's name or settings (scope `manage`). */
  changeSite(domain: string, change: T.ChangeSiteRequest, options?: CallOptions): Promise<T.StatusRecord> {
    return json(this.api.PATCH('/api/v1/sites/{domain}', { params: { path: { domain } }, body: change, ...init(options) }))
  }

  /** `DELETE /api/v1/sites/{domain}`: stops tracking a site (scope `manage`). */
  removeSite(domain: string, options?: CallOptions): Promise<void> {
    return none(this.api.DELETE('/api/v1/sites/{domain}', { params: { path: { domain } }, ...init(options) }))
  }

  /** `GET /api/v1/sites/{domain}/sla`: uptime, downtime and outages over [from, to). */
  getSla(domain: string, query: T.Query<'getSla'> = {}, options?: CallOptions): Promise<T.Sla> {
    return json(this.api.GET('/api/v1/sites/{domain}/sla', { params: { path: { domain }, query }, ...init(options) }))
  }

  /** `POST /api/v1/sites/{domain}/maintenance`: adds a maintenance window, one-off or weekly (scope `manage`). */
  addMaintenanceWindow(domain: string, window: T.MaintenanceWindowRequest, options?: CallOptions): Promise<T.MaintenanceWindow> {
    return json(this.api.POST('/api/v1/sites/{domain}/maintenance', { params: { path: { domain } }, body: window, ...init(options) }))
  }

  /** `GET /api/v1/sites/{domain}/maintenance`: a tracked site's maintenance windows. */
  listMaintenanceWindows(domain: string, options?: CallOptions): Promise<T.MaintenanceWindowList> {
    return json(this.api.GET('/api/v1/sites/{domain}/maintenance', { params: { path: { domain } }, ...init(options) }))
  }

  /** `DELETE /api/v1/sites/{domain}/maintenance/{id}`: removes a maintenance window (scope `manage`). */
  removeMaintenanceWindow(domain: string, id: number, options?: CallOptions): Promise<void> {
    return none(this.api.DELETE('/api/v1/sites/{domain}/maintenance/{id}', { params: { path: { domain, id } }, ...init(options) }))
  }

  /** `POST /api/v1/pages`: creates a status page listing tracked sites (scope `manage`). */
  createPage(page: T.CreatePageRequest, options?: CallOptions): Promise<T.StatusPageRecord> {
    return json(this.api.POST('/api/v1/pages', { body: page, ...init(options) }))
  }

  /** `GET /api/v1/pages`: every status page, by slug. */
  listPages(options?: CallOptions): Promise<T.StatusPageList> {
    return json(this.api.GET('/api/v1/pages', init(options)))
  }

  /** `GET /api/v1/pages/{slug}`: a status page. */
  getPage(slug: string, options?: CallOptions): Promise<T.StatusPageRecord> {
    return json(this.api.GET('/api/v1/pages/{slug}', { params: { path: { slug } }, ...init(options) }))
  }

  /** `PATCH /api/v1/pages/{slug}`: changes a page's title, description, logo or sites (scope `manage`). */
  changePage(slug: string, change: T.ChangePageRequest, options?: CallOptions): Promise<T.StatusPageRecord> {
    return json(this.api.PATCH('/api/v1/pages/{slug}', { params: { path: { slug } }, body: change, ...init(options) }))
  }

  /** `DELETE /api/v1/pages/{slug}`: deletes a status page; its sites stay tracked (scope `manage`). */
  deletePage(slug: string, options?: CallOptions): Promise<void> {
    return none(this.api.DELETE('/api/v1/pages/{slug}', { params: { path: { slug } }, ...init(options) }))
  }

  /** `POST /api/v1/config/plan`: what applying a configuration file's text (YAML or JSON) would do, field by field (scope `manage`). */
  plan(file: string, query: T.Query<'plan'> = {}, options?: CallOptions): Promise<T.ConfigPlan> {
    return json(this.api.POST('/api/v1/config/plan', { params: { query }, ...yamlBody(file), ...init(options) }))
  }

  /** `POST /api/v1/config/apply`: applies a configuration file in one transaction; 409 while another apply runs (scope `manage`). */
  apply(file: string, query: T.Query<'apply'> = {}, options?: CallOptions): Promise<T.ConfigPlan> {
    return json(this.api.POST('/api/v1/config/apply', { params: { query }, ...yamlBody(file), ...init(options) }))
  }

  /** `POST /api/v1/webhooks`: registers a webhook; the answer holds its secret, shown only here. */
  createWebhook(webhook: T.WebhookRequest, options?: CallOptions): Promise<T.WebhookCreated> {
    return json(this.api.POST('/api/v1/webhooks', { body: webhook, ...init(options) }))
  }

  /** `GET /api/v1/webhooks`: every webhook, without secrets. */
  listWebhooks(options?: CallOptions): Promise<T.WebhookList> {
    return json(this.api.GET('/api/v1/webhooks', init(options)))
  }

  /** `DELETE /api/v1/webhooks/{id}`: removes a webhook and its delivery log. */
  deleteWebhook(id: number, options?: CallOptions): Promise<void> {
    return none(this.api.DELETE('/api/v1/webhooks/{id}', { params: { path: { id } }, ...init(options) }))
  }

  /** `GET /api/v1/webhooks/{id}/deliveries`: a webhook's deliveries, newest first. */
  listDeliveries(id: number, query: T.Query<'listDeliveries'> = {}, options?: CallOptions): Promise<T.DeliveryList> {
    return json(this.api.GET('/api/v1/webhooks/{id}/deliveries', { params: { path: { id }, query }, ...init(options) }))
  }

  /** `POST /api/v1/webhooks/{id}/deliveries/{delivery_id}/retry`: sends a delivery again now. */
  retryDelivery(id: number, deliveryId: number, options?: CallOptions): Promise<T.Delivery> {
    const path = { id, delivery_id: deliveryId }
    return json(this.api.POST('/api/v1/webhooks/{id}/deliveries/{delivery_id}/retry', { params: { path }, ...init(options) }))
  }

  // Alerting (scope `manage`): channels, their tests and delivery logs, policies, and what a site or page uses.
  /** `POST /api/v1/channels`: adds an alert channel; secrets go in and are never shown back. */
  createChannel(channel: T.ChannelRequest, options?: CallOptions): Promise<T.Channel> {
    return json(this.api.POST('/api/v1/channels', { body: channel, ...init(options) }))
  }
  /** `GET /api/v1/channels`: every alert channel, with its health. */
  listChannels(options?: CallOptions): Promise<T.ChannelList> {
    return json(this.api.GET('/api/v1/channels', init(options)))
  }
  /** `GET /api/v1/channels/{id}`: an alert channel. */
  getChannel(id: number, options?: CallOptions): Promise<T.Channel> {
    return json(this.api.GET('/api/v1/channels/{id}', { params: { path: { id } }, ...init(options) }))
  }
  /** `PATCH /api/v1/channels/{id}`: changes a channel (config keys given replace the stored ones). */
  changeChannel(id: number, change: T.ChannelChange, options?: CallOptions): Promise<T.Channel> {
    return json(this.api.PATCH('/api/v1/channels/{id}', { params: { path: { id } }, body: change, ...init(options) }))
  }
  /** `DELETE /api/v1/channels/{id}`: removes a channel, its queue and its log. */
  deleteChannel(id: number, options?: CallOptions): Promise<void> {
    return none(this.api.DELETE('/api/v1/channels/{id}', { params: { path: { id } }, ...init(options) }))
  }
  /** `POST /api/v1/channels/{id}/test`: sends a test message now; resolves to what the receiver said. */
  testChannel(id: number, options?: CallOptions): Promise<T.ChannelTest> {
    return json(this.api.POST('/api/v1/channels/{id}/test', { params: { path: { id } }, ...init(options) }))
  }
  /** `GET /api/v1/channels/{id}/deliveries`: a channel's messages, newest first. */
  listChannelDeliveries(id: number, query: T.Query<'listChannelDeliveries'> = {}, options?: CallOptions): Promise<T.AlertMessageList> {
    return json(this.api.GET('/api/v1/channels/{id}/deliveries', { params: { path: { id }, query }, ...init(options) }))
  }
  /** `POST /api/v1/alert-policies`: adds an alert policy. */
  createAlertPolicy(policy: T.AlertPolicyRequest, options?: CallOptions): Promise<T.AlertPolicy> {
    return json(this.api.POST('/api/v1/alert-policies', { body: policy, ...init(options) }))
  }
  /** `GET /api/v1/alert-policies`: every alert policy. */
  listAlertPolicies(options?: CallOptions): Promise<T.AlertPolicyList> {
    return json(this.api.GET('/api/v1/alert-policies', init(options)))
  }
  /** `GET /api/v1/alert-policies/{id}`: an alert policy. */
  getAlertPolicy(id: number, options?: CallOptions): Promise<T.AlertPolicy> {
    return json(this.api.GET('/api/v1/alert-policies/{id}', { params: { path: { id } }, ...init(options) }))
  }
  /** `PATCH /api/v1/alert-policies/{id}`: changes an alert policy. */
  changeAlertPolicy(id: number, change: T.AlertPolicyRequest, options?: CallOptions): Promise<T.AlertPolicy> {
    return json(this.api.PATCH('/api/v1/alert-policies/{id}', { params: { path: { id } }, body: change, ...init(options) }))
  }
  /** `DELETE /api/v1/alert-policies/{id}`: removes an alert policy. */
  deleteAlertPolicy(id: number, options?: CallOptions): Promise<void> {
    return none(this.api.DELETE('/api/v1/alert-policies/{id}', { params: { path: { id } }, ...init(options) }))
  }
  /** `GET /api/v1/sites/{domain}/alerting`: a site's alert policy and parent. */
  getSiteAlerting(domain: string, options?: CallOptions): Promise<T.SiteAlerting> {
    return json(this.api.GET('/api/v1/sites/{domain}/alerting', { params: { path: { domain } }, ...init(options) }))
  }
  /** `PUT /api/v1/sites/{domain}/alerting`: sets a site's alert policy and what it depends on. */
  setSiteAlerting(domain: string, alerting: T.SiteAlertingRequest, options?: CallOptions): Promise<T.SiteAlerting> {
    return json(this.api.PUT('/api/v1/sites/{domain}/alerting', { params: { path: { domain } }, body: alerting, ...init(options) }))
  }
  /** `GET /api/v1/pages/{slug}/alerting`: a status page's alert policy. */
  getPageAlerting(slug: string, options?: CallOptions): Promise<T.PageAlerting> {
    return json(this.api.GET('/api/v1/pages/{slug}/alerting', { params: { path: { slug } }, ...init(options) }))
  }
  /** `PUT /api/v1/pages/{slug}/alerting`: sets a status page's alert policy. */
  setPageAlerting(slug: string, policy: number | null, options?: CallOptions): Promise<T.PageAlerting> {
    const body = { alert_policy: policy }
    return json(this.api.PUT('/api/v1/pages/{slug}/alerting', { params: { path: { slug } }, body, ...init(options) }))
  }

  /**
   * `GET /api/v1/events`: the events as they commit, for as long as the loop runs (leave it, or
   * abort `signal`, to close the stream). With `lastEventId` (or `since`) the events after it are
   * replayed first; after the server ends the stream, call again with the last event's id.
   */
  streamEvents(options: CallOptions & { since?: number; lastEventId?: number } = {}): AsyncGenerator<T.ServiceEvent, void, undefined> {
    const { since, lastEventId } = options
    const params = {
      query: { since: since === undefined ? undefined : String(since) },
      header: { 'Last-Event-ID': lastEventId === undefined ? undefined : String(lastEventId) }
    }
    return serviceEvents((signal) => this.api.GET('/api/v1/events', { params, signal, ...EVENT_STREAM, parseAs: 'stream' }), options.signal)
  }
}
