import { Readable } from 'node:stream'
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client'
import type { SiteStates } from '../monitoring/state/site-state.js'
import type { SchedulerStats } from '../monitoring/schedule/site-scheduler.js'
import type { AdmissionStats } from '../probing/admission.js'
import type { LocationHealth } from '../probing/locations/index.js'
import type { CheckResult } from '../probing/supervisor.js'
import type { DeliveryOutcomes } from '../webhooks/dispatcher.js'
import type { AlertOutcomes, ChannelHealth } from '../alerts/dispatcher.js'
import { collectedMetric, type Sample } from './collected.js'
import { SiteSeries } from './site-series.js'

/** Where a check came from, as the `source` label says it. */
type SourceLabel = 'scheduled' | 'on_demand'
const SOURCE: Record<'schedule' | 'demand', SourceLabel> = { schedule: 'scheduled', demand: 'on_demand' }

/** The parts of the service whose own counters the metrics read at scrape time; each optional (tests build servers without them). */
export interface MetricSources {
  states?: SiteStates
  admission?: { stats(): AdmissionStats }
  /** Requests refused for the key's rate limit since start. */
  rateLimitRefusals?: () => number
  webhooks?: { outcomes(): DeliveryOutcomes }
  /** Alert messages sent, and each alert channel's health. */
  alerts?: { outcomes(): AlertOutcomes; channels(): ChannelHealth[] }
  scheduler?: { stats(): SchedulerStats }
  /** Checks waiting to be recorded. */
  recordingBacklog?: () => number
  /** Checks set aside because the database refused a value they hold. */
  setAside?: () => number
  /** The locations: their agents, and agents' answers that came too late. */
  locations?: { health(): LocationHealth[]; lateAnswers(): number }
  /** The heartbeats' series as exposition text, read at scrape time. */
  heartbeats?: () => Promise<string>
}

const CHECK_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
const LAG_BUCKETS = [0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300]

/**
 * The service's metrics in a registry of its own (never prom-client's global one, which a test
 * building several servers would share). Checks and scheduler lag are recorded as they happen, on
 * the main thread from what the location actors returned (prom-client does not see inside worker
 * threads); everything else, the per-site series included, is read from the service's state when
 * scraped, so nothing is updated per check that the state does not already hold. The per-site
 * series are written by {@link SiteSeries} after the registry's (see there why).
 */
export class ServiceMetrics {
  readonly registry = new Registry()
  readonly #checks: Counter<'source' | 'status'>
  readonly #checkSeconds: Histogram<'source'>
  readonly #lag: Histogram
  readonly #sources: MetricSources = {}
  readonly #now: () => Date
  #series: SiteSeries | null = null

  constructor({ now = () => new Date() }: { now?: () => Date } = {}) {
    this.#now = now
    const registers = [this.registry]
    collectDefaultMetrics({ register: this.registry })
    // prom-client's only gauges named like counters (promtool's lint refuses them); the same counts
    // remain by type in nodejs_active_handles, nodejs_active_requests and nodejs_active_resources.
    for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) {
      this.registry.removeSingleMetric(name)
    }
    this.#checks = new Counter({
      name: 'site_status_checks_total',
      help: 'Checks run by this instance, by source (scheduled, on_demand) and site status.',
      labelNames: ['source', 'status'],
      registers
    })
    this.#checkSeconds = new Histogram({
      name: 'site_status_check_duration_seconds',
      help: "A check's duration: its slowest location's probe, in seconds.",
      labelNames: ['source'],
      buckets: CHECK_BUCKETS,
      registers
    })
    this.#lag = new Histogram({
      name: 'site_status_scheduler_lag_seconds',
      help: 'How long after its due time a scheduled check started, in seconds.',
      buckets: LAG_BUCKETS,
      registers
    })
    this.#gauge('site_status_checks_in_flight', 'Checks running now, by source.', () => {
      const stats = this.#sources.admission?.stats()
      if (!stats) return []
      return [
        { labels: { source: 'scheduled' }, value: stats.scheduled },
        { labels: { source: 'on_demand' }, value: stats.demand }
      ]
    })
    this.#counter('site_status_refusals_total', 'Requests refused: over the key rate limit, or checks over the check capacity.', () => {
      const out: Sample[] = []
      const limited = this.#sources.rateLimitRefusals?.()
      if (limited !== undefined) out.push({ labels: { reason: 'rate_limit' }, value: limited })
      const stats = this.#sources.admission?.stats()
      if (stats) out.push({ labels: { reason: 'capacity' }, value: stats.refusedInstance + stats.refusedKey })
      return out
    })
    this.#counter('site_status_webhook_deliveries_total', 'Webhook delivery attempts by outcome (delivered, retry, failed).', () => {
      const outcomes = this.#sources.webhooks?.outcomes()
      return outcomes
        ? (Object.entries(outcomes) as Array<[string, number]>).map(([outcome, value]) => ({ labels: { outcome }, value }))
        : []
    })
    this.#counter('site_status_alert_messages_total', 'Alert message attempts by outcome (delivered, retry, failed).', () => {
      const outcomes = this.#sources.alerts?.outcomes()
      return outcomes
        ? (Object.entries(outcomes) as Array<[string, number]>).map(([outcome, value]) => ({ labels: { outcome }, value }))
        : []
    })
    this.#gauge('site_status_alert_channel_failing', 'Each alert channel: failing (1: its attempts keep failing) or not (0).', () =>
      (this.#sources.alerts?.channels() ?? []).map((c) => ({
        labels: { channel_id: String(c.id), channel: c.name, kind: c.kind },
        value: c.failing ? 1 : 0
      }))
    )
    this.#gauge('site_status_alert_messages_pending', 'Alert messages waiting to be delivered, per channel.', () =>
      (this.#sources.alerts?.channels() ?? []).map((c) => ({
        labels: { channel_id: String(c.id), channel: c.name, kind: c.kind },
        value: c.pending
      }))
    )
    this.#counter(
      'site_status_scheduled_checks_total',
      'Scheduled checks by outcome: started (late ones also counted as late), skipped, shed.',
      () => {
        const stats = this.#sources.scheduler?.stats()
        if (!stats) return []
        return (['started', 'late', 'skipped', 'shed'] as const).map((outcome) => ({ labels: { outcome }, value: stats[outcome] }))
      }
    )
    this.#gauge('site_status_scheduler_behind', 'The scheduler does not keep up with the tracked sites (1) or does (0).', () => {
      const stats = this.#sources.scheduler?.stats()
      return stats ? [{ labels: {}, value: stats.lastMinute.behind ? 1 : 0 }] : []
    })
    this.#gauge('site_status_recording_backlog', 'Checks waiting to be written to the database.', () => {
      const pending = this.#sources.recordingBacklog?.()
      return pending === undefined ? [] : [{ labels: {}, value: pending }]
    })
    this.#counter(
      'site_status_checks_set_aside_total',
      'Checks the database refused for a value they hold, set aside so that the checks behind them are recorded.',
      () => {
        const count = this.#sources.setAside?.()
        return count === undefined ? [] : [{ labels: {}, value: count }]
      }
    )
    const agentLocations = (): LocationHealth[] => this.#sources.locations?.health().filter((l) => l.kind === 'agent') ?? []
    this.#gauge('site_status_location_agents', 'Agents answering for each agent location now (0: its checks go unanswered).', () =>
      agentLocations().map((l) => ({ labels: { location: l.label }, value: l.agents ?? 0 }))
    )
    this.#gauge('site_status_location_agent_last_seen_seconds', 'When an agent of the location last answered, in Unix seconds.', () =>
      agentLocations().flatMap((l) =>
        typeof l.last_seen === 'string' ? [{ labels: { location: l.label }, value: Date.parse(l.last_seen) / 1000 }] : []
      )
    )
    this.#gauge('site_status_location_agent_info', 'The versions the agents of each location run (1 per version).', () =>
      agentLocations().flatMap((l) => (l.versions ?? []).map((version) => ({ labels: { location: l.label, version }, value: 1 })))
    )
    this.#counter(
      'site_status_agent_bad_answers_total',
      "Agents' answers refused as not understood (malformed, inconsistent, or another request's), per location.",
      () => agentLocations().map((l) => ({ labels: { location: l.label }, value: l.bad_answers ?? 0 }))
    )
    this.#counter('site_status_agent_late_answers_total', "Agents' answers that came after the central stopped waiting; dropped.", () => {
      const late = this.#sources.locations?.lateAnswers()
      return late === undefined ? [] : [{ labels: {}, value: late }]
    })
    this.#gauge('site_status_sites', 'Sites tracked.', () => {
      const states = this.#sources.states
      return states ? [{ labels: {}, value: states.size }] : []
    })
  }

  #gauge(name: string, help: string, read: () => Sample[]): void {
    this.registry.registerMetric(collectedMetric(name, help, 'gauge', read))
  }

  #counter(name: string, help: string, read: () => Sample[]): void {
    this.registry.registerMetric(collectedMetric(name, help, 'counter', read))
  }

  /** Tells the metrics where to read; a source given again replaces the earlier one. */
  watch(sources: MetricSources): void {
    for (const [name, source] of Object.entries(sources) as Array<[keyof MetricSources, unknown]>) {
      if (source !== undefined) Object.assign(this.#sources, { [name]: source })
    }
    if (sources.states && this.#series === null) this.#series = new SiteSeries({ states: sources.states, now: this.#now })
  }

  /** A check's result, fresh from the locations (never a cached one). */
  checkDone(result: CheckResult, source: 'schedule' | 'demand'): void {
    const label = SOURCE[source]
    this.#checks.inc({ source: label, status: result.status })
    let slowestMs = 0
    for (const l of result.locations) slowestMs = Math.max(slowestMs, l.response_ms)
    this.#checkSeconds.observe({ source: label }, slowestMs / 1000)
  }

  /** A scheduled check started `lagMs` after it was due. */
  checkStarted(lagMs: number): void {
    this.#lag.observe(Math.max(0, lagMs) / 1000)
  }

  /** The exposition's content type: Prometheus's text format 0.0.4. */
  get contentType(): string {
    return this.registry.contentType
  }

  /** The exposition as a byte stream: the registry's metrics, then the per-site series in chunks. */
  stream(): Readable {
    const { registry } = this
    const series = this.#series
    const heartbeats = this.#sources.heartbeats
    async function* text(): AsyncGenerator<string> {
      yield await registry.metrics()
      if (series !== null) {
        yield '\n'
        yield* series.chunks()
      }
      if (heartbeats !== undefined) {
        const lines = await heartbeats()
        if (lines !== '') yield `\n${lines}`
      }
    }
    return Readable.from(text(), { objectMode: false })
  }

  /** The whole exposition as one string (tests, benchmarks). */
  async render(): Promise<string> {
    let text = ''
    for await (const chunk of this.stream()) text += String(chunk)
    return text
  }
}
