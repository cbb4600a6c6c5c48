import t from 'tap'
import { until } from '../helpers/poll.js'
import { prometheusMissing, startPrometheus } from '../helpers/prometheus.js'
import { startTrackedService } from '../helpers/tracked-service.js'

const TOKEN = 'prometheus-scrapes-with-this-0c1d'
const missing = prometheusMissing()

t.test('Prometheus scrapes /metrics and answers PromQL about a tracked site', { skip: missing ?? false }, async (t) => {
  const { service, setHealthy } = await startTrackedService(t, {
    engine: 'sqlite',
    site: { domain: 'scraped.example.com', name: 'Scraped' },
    env: { CHECK_INTERVAL_S: '1', METRICS_TOKEN: TOKEN }
  })
  const prometheus = await startPrometheus(t, { target: `127.0.0.1:${service.server.info.port}`, bearerToken: TOKEN })

  const scrapeUp = await until(
    () => prometheus.query('up{job="site-status"}'),
    (r) => r[0]?.value[1] === '1',
    60_000
  )
  t.same(
    scrapeUp.map((r) => r.value[1]),
    ['1'],
    `Prometheus scrapes the service with the token ${scrapeUp.length === 0 ? prometheus.log().slice(-1000) : ''}`
  )

  const success = await until(
    () => prometheus.query('probe_success{domain="scraped.example.com"}'),
    (r) => r.length === 3 && r.every((s) => s.value[1] === '1'),
    60_000
  )
  t.same(
    success.map((r) => [r.metric.location, r.value[1]]).sort(),
    [
      ['Local 1, Local', '1'],
      ['Local 2, Local', '1'],
      ['Local 3, Local', '1']
    ],
    'probe_success is 1 from every location'
  )
  t.match(success[0]?.metric, { job: 'site-status', domain: 'scraped.example.com' })

  setHealthy(false)
  const down = await until(
    () => prometheus.query('site_status_up{domain="scraped.example.com"}'),
    (r) => r[0]?.value[1] === '0',
    60_000
  )
  t.same(
    down.map((r) => r.value[1]),
    ['0'],
    'site_status_up follows the site down'
  )
  const codes = await until(
    () => prometheus.query('probe_http_status_code{domain="scraped.example.com"}'),
    (r) => r.length === 3 && r.every((s) => s.value[1] === '503'),
    60_000
  )
  t.same(
    codes.map((r) => r.value[1]),
    ['503', '503', '503'],
    'and the locations saw 503'
  )
  const checks = await prometheus.query('sum(site_status_checks_total{source="scheduled"})')
  t.ok(Number(checks[0]?.value[1]) >= 2, 'the scheduled checks are counted')
  const lag = await prometheus.query('site_status_scheduler_lag_seconds_count')
  t.ok(Number(lag[0]?.value[1]) >= 2, 'and their lag observed as they started')
})
