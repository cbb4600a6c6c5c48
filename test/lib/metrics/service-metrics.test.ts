import t from 'tap'
import { register as globalRegistry } from 'prom-client'
import { ServiceMetrics } from '../../../lib/metrics/service-metrics.js'
import { Admission, isRefusal } from '../../../lib/probing/admission.js'
import type { CheckResult } from '../../../lib/probing/supervisor.js'
import { RateLimiter } from '../../../lib/rate-limit.js'
import { parseExposition, samplesOf } from '../../helpers/exposition.js'

function result(status: CheckResult['status'], responseMs: number[]): CheckResult {
  return {
    domain: 'x.example.com',
    status,
    locations_answered: responseMs.length,
    locations_total: 3,
    response_ms: responseMs[0] ?? null,
    cached: false,
    locations: responseMs.map((ms, i) => ({
      location: `L ${i + 1}, X`,
      status: 'up',
      http_code: 200,
      response_ms: ms,
      error: null,
      final_url: null,
      timings: { dns: 0, connect: 0, tls: 0, first_byte: 0, total: ms }
    })),
    checked_at: new Date(0).toISOString(),
    partial: false,
    blocked: false
  }
}

async function scrape(metrics: ServiceMetrics) {
  return parseExposition(await metrics.render())
}

t.test('checks are counted by source and status, with their duration and the scheduler lag', async (t) => {
  const metrics = new ServiceMetrics()
  metrics.checkDone(result('up', [100, 2400, 300]), 'schedule')
  metrics.checkDone(result('up', [50]), 'schedule')
  metrics.checkDone(result('down', [20]), 'demand')
  metrics.checkStarted(750)
  metrics.checkStarted(-5)
  const samples = await scrape(metrics)
  const value = (name: string, labels: Record<string, string> = {}) => samplesOf(samples, name, labels).map((s) => s.value)
  t.same(value('site_status_checks_total', { source: 'scheduled', status: 'up' }), [2])
  t.same(value('site_status_checks_total', { source: 'on_demand', status: 'down' }), [1])
  t.same(value('site_status_check_duration_seconds_count', { source: 'scheduled' }), [2])
  const sum = value('site_status_check_duration_seconds_sum', { source: 'scheduled' })[0] ?? NaN
  t.ok(Math.abs(sum - 2.45) < 1e-9, `each check's slowest location, in seconds: ${sum}`)
  t.same(value('site_status_check_duration_seconds_bucket', { source: 'scheduled', le: '1' }), [1])
  t.same(value('site_status_scheduler_lag_seconds_count'), [2])
  t.same(value('site_status_scheduler_lag_seconds_sum'), [0.75], 'a check started early counts as no lag')
  t.ok(value('process_cpu_user_seconds_total').length === 1, "the process's default metrics")
  t.same(value('nodejs_active_handles_total'), [], 'but not the gauges prom-client names like counters')
  t.same(globalRegistry.getMetricsAsArray(), [], "prom-client's global registry is left empty")
})

t.test('what other parts count is read from them when scraped', async (t) => {
  const metrics = new ServiceMetrics()
  let samples = await scrape(metrics)
  t.same(samplesOf(samples, 'site_status_refusals_total'), [], 'nothing before the sources are known')

  // One scheduled slot, three on-demand ones, one of them per key.
  const admission = new Admission({ capacity: 4, keyShare: 0.5, maxCheckMs: 1000 })
  const limiter = new RateLimiter({ now: () => 0 })
  const outcomes = { delivered: 4, retry: 2, failed: 1 }
  metrics.watch({
    admission,
    rateLimitRefusals: () => limiter.refused,
    webhooks: { outcomes: () => outcomes },
    recordingBacklog: () => 17
  })
  const scheduled = admission.admitScheduled()
  const held = [admission.admitDemand('k'), admission.admitDemand('k'), admission.admitDemand('j')]
  t.same(
    held.map((h) => isRefusal(h)),
    [false, true, false],
    "the key's second check is over its share"
  )
  limiter.take('k', 1, 1)
  limiter.take('k', 1, 1)
  limiter.take('k', 1, 1)

  samples = await scrape(metrics)
  const value = (name: string, labels: Record<string, string> = {}) => samplesOf(samples, name, labels).map((s) => s.value)
  t.same(value('site_status_checks_in_flight', { source: 'scheduled' }), [1])
  t.same(value('site_status_checks_in_flight', { source: 'on_demand' }), [2])
  t.same(value('site_status_refusals_total', { reason: 'capacity' }), [1])
  t.same(value('site_status_refusals_total', { reason: 'rate_limit' }), [2])
  t.same(value('site_status_webhook_deliveries_total', { outcome: 'delivered' }), [4])
  t.same(value('site_status_webhook_deliveries_total', { outcome: 'failed' }), [1])
  t.same(value('site_status_recording_backlog'), [17])

  scheduled.release()
  outcomes.delivered = 5
  samples = await scrape(metrics)
  t.same(samplesOf(samples, 'site_status_checks_in_flight', { source: 'scheduled' })[0]?.value, 0, 'read anew at every scrape')
  t.same(samplesOf(samples, 'site_status_webhook_deliveries_total', { outcome: 'delivered' })[0]?.value, 5)
})
