import t from 'tap'
import { engines } from '../helpers/db.js'
import { until } from '../helpers/poll.js'
import { startTrackedService } from '../helpers/tracked-service.js'

for (const engine of engines()) {
  t.test(`an on-demand check of a tracked domain is recorded like a scheduled one, on ${engine}`, async (t) => {
    const { service, config, key, setHealthy, userAgents } = await startTrackedService(t, {
      engine,
      site: { domain: 'tracked.example.com', name: 'Tracked' },
      // An hour: the scheduler's own checks do not get in the way (only 'demand' rows are counted).
      env: { CHECK_INTERVAL_S: '3600', CACHE_TTL_S: '0' }
    })
    const headers = { authorization: `Bearer ${key}` }
    const api = async (url: string) => JSON.parse((await service.server.inject({ url, headers })).payload)
    const check = async (domain: string) => {
      const res = await service.server.inject({
        method: 'POST',
        url: '/api/v1/check',
        headers: { ...headers, 'content-type': 'application/json' },
        payload: JSON.stringify({ domain })
      })
      t.equal(res.statusCode, 200, `checked ${domain}`)
      return JSON.parse(res.payload)
    }
    const demandChecks = () =>
      service.db('checks').where({ source: 'demand' }).orderBy('checked_at').select('status', 'checked_at', 'locations_answered')
    const status = () => api('/api/v1/status/tracked.example.com')

    t.equal((await status()).status, 'pending', 'never checked yet: pending')

    const first = await check('TRACKED.example.com')
    t.equal(first.status, 'up')
    t.same([...userAgents], [`SiteStatusAPI/0.1 (+${config.publicUrl})`], 'every probe names the service and where to find it')
    const up = await until(status, (s) => s.checked_at === first.checked_at, 10_000)
    t.match(up, { status: 'up', checked_at: first.checked_at, last_outage: null }, 'the status endpoint shows the on-demand result')
    const stored = await demandChecks()
    t.equal(stored.length, 1, 'one check stored with source demand')
    t.match(stored[0], { status: 'up', locations_answered: 3 })
    t.equal(new Date(stored[0].checked_at).toISOString(), first.checked_at, 'at the time the check answered with')

    setHealthy(false)
    const second = await check('tracked.example.com')
    t.match(second, { status: 'down', cached: false })
    const down = await until(status, (s) => s.checked_at === second.checked_at, 10_000)
    t.match(down, { status: 'down', last_outage: { started_at: second.checked_at, ended_at: null } }, 'a down result opens an outage')
    t.equal((await demandChecks()).length, 2, 'the second check is stored too')
    const open = await service.db('outages').whereNotNull('open_site_id').select('started_at')
    t.equal(open.length, 1, 'one open outage in the database')
    t.equal(new Date(open[0].started_at).toISOString(), second.checked_at, 'started at the down check')
    t.match(
      (await api('/api/v1/outages?ongoing=1')).outages,
      [{ domain: 'tracked.example.com', started_at: second.checked_at, ended_at: null }],
      'listed as ongoing'
    )

    setHealthy(true)
    const third = await check('tracked.example.com')
    const back = await until(status, (s) => s.checked_at === third.checked_at, 10_000)
    t.match(back, { status: 'up', last_outage: { started_at: second.checked_at, ended_at: third.checked_at } }, 'an up result closes it')

    t.equal((await check('untracked.example.com')).status, 'up')
    t.ok(await service.recorder.flush(10_000), 'every check handed to the recorder is written')
    t.equal((await demandChecks()).length, 3, 'a check of an untracked domain is not stored')
  })
}
