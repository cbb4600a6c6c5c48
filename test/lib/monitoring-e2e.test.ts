import t from 'tap'
import { apiClient } from '../helpers/api-client.js'
import { engines } from '../helpers/db.js'
import { until } from '../helpers/poll.js'
import { startTrackedService } from '../helpers/tracked-service.js'

for (const engine of engines()) {
  t.test(`a site going down and coming back while the scheduler runs, on ${engine}`, async (t) => {
    const { service, key, setHealthy } = await startTrackedService(t, {
      engine,
      site: { domain: 'flaky.example.com', name: 'Flaky' },
      env: { CHECK_INTERVAL_S: '1' }
    })
    const client = apiClient(service.server.info.uri, key)
    const status = () => client.getStatus('flaky.example.com')

    const up = await until(status, (s) => s.status === 'up', 15_000)
    t.equal(up.status, 'up', 'the scheduler checked the site and found it up')
    t.equal(up.last_outage, null)

    setHealthy(false)
    const down = await until(status, (s) => s.status === 'down', 15_000)
    t.equal(down.status, 'down', 'a 503 from every location makes it down')
    t.match(down.last_outage, { ended_at: null }, 'with an ongoing outage')
    const ongoing = await client.listOutages({ ongoing: '1' })
    t.match(ongoing.outages, [{ domain: 'flaky.example.com', name: 'Flaky', ended_at: null }], 'listed as ongoing')

    setHealthy(true)
    const back = await until(status, (s) => s.status === 'up', 15_000)
    t.equal(back.status, 'up', 'and up again once it recovers')
    t.equal(back.last_outage!.started_at, down.last_outage!.started_at, 'the same outage')
    t.type(back.last_outage!.ended_at, 'string', 'now ended')
    t.ok(back.uptime_percent.day < 100, `uptime fell to ${back.uptime_percent.day}`)
    const all = await client.listOutages({ domain: 'flaky.example.com' })
    t.equal(all.outages.length, 1, 'exactly one outage was recorded')
    t.same((await client.listOutages({ ongoing: '1' })).outages, [], 'and none is ongoing')
  })
}
