import { setTimeout as sleep } from 'node:timers/promises'
import FakeTimers from '@sinonjs/fake-timers'
import t from 'tap'
import { generateKey, hashKey } from '../../lib/keys.js'
import { WEEKDAYS } from '../../lib/rules/maintenance.js'
import { wallClock, zonedInstant } from '../../lib/rules/zoned-time.js'
import { createKey } from '../../lib/store/keys.js'
import { apiClient } from '../helpers/api-client.js'
import { engines } from '../helpers/db.js'
import { bearer } from '../helpers/server.js'
import { SseClient } from '../helpers/sse.js'
import { startTrackedService } from '../helpers/tracked-service.js'
import { receiver } from '../helpers/webhooks.js'

/*
 * The real service (location actors probing a loopback target, the scheduler checking every
 * second, the recorder, event stream and webhooks) through a maintenance window and two weeks of a
 * weekly one. Days pass on a fake Date that otherwise runs with the real clock: the test moves it
 * into and out of the windows, and waits for what the checks then announce.
 */

const MIN = 60_000
const DAY = 24 * 60 * MIN
const iso = (ms: number): string => new Date(ms).toISOString()

/** Waits, by the real clock, until `cond` holds. */
async function eventually(cond: () => Promise<boolean>, what: string, ms = 15_000): Promise<void> {
  const end = performance.now() + ms
  while (!(await cond())) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`)
    await sleep(25)
  }
}

for (const engine of engines()) {
  t.test(`maintenance windows through the real service, one-off and weekly, on ${engine}`, async (t) => {
    // The next whole hour, two hours from now: the windows are laid out from there.
    const start = Math.ceil((Date.now() + 2 * 60 * MIN) / (60 * MIN)) * 60 * MIN
    const clock = FakeTimers.install({ now: Date.now(), toFake: ['Date'], shouldAdvanceTime: true, advanceTimeDelta: 5 })
    t.teardown(() => {
      clock.uninstall()
    })
    const tracked = await startTrackedService(t, {
      engine,
      site: { domain: 'deploy.example.com', name: 'Deploy' },
      env: { CHECK_INTERVAL_S: '1' }
    })
    const { service, setHealthy } = tracked
    const base = `http://127.0.0.1:${service.server.info.port}`
    const key = generateKey()
    await createKey({ db: service.db, name: 'e2e', keyHash: hashKey(key), rateLimit: 1_000_000, scopes: 'read,manage', now: new Date() })
    const client = apiClient(base, key)
    const stream = await SseClient.connect(`${base}/api/v1/events?since=0`, bearer(key))
    t.teardown(() => {
      stream.close()
    })
    const hook = await receiver(t)
    await client.createWebhook({ url: hook.url, events: ['maintenance.started', 'maintenance.ended', 'outage.opened', 'outage.closed'] })
    // A jump of days makes the SQLite scheduler walk every cycle in between first (seconds alone, three
    // or four times that beside the suite's other files on 2 cores): a generous bound to wait for.
    const seen = (type: string, n: number) =>
      stream.waitFor((c) => c.events.filter((e) => e.type === type).length >= n, 60_000, `${type} x${n}`)
    const checksSince = async (at: number, status: string): Promise<number> => {
      const row = await service.db('checks').where('checked_at', '>=', new Date(at)).where({ status }).count({ n: '*' }).first()
      return Number(row?.n ?? 0)
    }
    await eventually(async () => (await client.getStatus('deploy.example.com')).checked_at !== null, 'the first check')

    // A one-off hour of maintenance: the site goes down inside it and no outage opens.
    const from = start
    const to = start + 60 * MIN
    await client.addMaintenanceWindow('deploy.example.com', { from: iso(from), to: iso(to), reason: 'upgrade' })
    clock.setSystemTime(from + 1000)
    setHealthy(false)
    await seen('maintenance.started', 1)
    await eventually(async () => (await checksSince(from, 'down')) >= 2, 'two down checks inside the window')
    const during = await client.getStatus('deploy.example.com')
    t.match(during, { status: 'down', last_outage: null, maintenance: { until: iso(to), reason: 'upgrade' } })
    t.same((await client.listOutages({ domain: 'deploy.example.com' })).outages, [], 'no outage while down in maintenance')
    t.match(await client.getEndpointBadge('deploy.example.com'), { message: 'maintenance', color: 'blue' })

    // Still down when the window ends: the next check ends the maintenance and opens an outage.
    clock.setSystemTime(to + 1000)
    await seen('outage.opened', 1)
    setHealthy(true)
    await seen('outage.closed', 1)
    const sla = await client.getSla('deploy.example.com', { from: iso(from), to: iso(to) })
    t.match(
      sla,
      { uptime_percent: 100, maintenance_seconds: 3600, monitored_seconds: 0, downtime_seconds: 0, incidents: 0, outages: [] },
      "the window's SLA: 100%, its hour reported as maintenance"
    )

    // Weekly, Berlin time, a day after the one-off window: seen twice, a week apart (in Berlin).
    const first = to + DAY
    const wall = new Date(wallClock(first, 'Europe/Berlin'))
    const second = zonedInstant(wall.getTime() + 7 * DAY, 'Europe/Berlin')
    const time = `${String(wall.getUTCHours()).padStart(2, '0')}:${String(wall.getUTCMinutes()).padStart(2, '0')}`
    const weekly = { day: WEEKDAYS[wall.getUTCDay()] as (typeof WEEKDAYS)[number], time, duration_minutes: 30, zone: 'Europe/Berlin' }
    await client.addMaintenanceWindow('deploy.example.com', { weekly, reason: 'weekly deploy' })
    for (const [i, occurrence] of [first, second].entries()) {
      clock.setSystemTime(occurrence + 1000)
      await seen('maintenance.started', 2 + i)
      clock.setSystemTime(occurrence + 31 * MIN)
      await seen('maintenance.ended', 2 + i)
    }

    const maintenance = stream.events.filter((e) => e.type.startsWith('maintenance.'))
    t.same(
      maintenance.map((e) => [e.type, e.data.until, e.data.reason]),
      [
        ['maintenance.started', iso(to), 'upgrade'],
        ['maintenance.ended', iso(to), 'upgrade'],
        ['maintenance.started', iso(first + 30 * MIN), 'weekly deploy'],
        ['maintenance.ended', iso(first + 30 * MIN), 'weekly deploy'],
        ['maintenance.started', iso(second + 30 * MIN), 'weekly deploy'],
        ['maintenance.ended', iso(second + 30 * MIN), 'weekly deploy']
      ],
      'each start and end once, the weekly window twice'
    )
    t.match(maintenance[0]?.data, { site: { domain: 'deploy.example.com', name: 'Deploy' } })
    t.equal(stream.events.filter((e) => e.type === 'outage.opened').length, 1, 'one outage, after the one-off window')
    const wanted = stream.events.filter((e) => e.type.startsWith('maintenance.') || e.type.startsWith('outage.'))
    await eventually(async () => hook.got.length >= wanted.length, 'the deliveries')
    t.same(
      hook.got
        .map((r) => [Number(r.headers['webhook-id']), (JSON.parse(r.body) as { type: string }).type])
        .sort((a, b) => Number(a[0]) - Number(b[0])),
      wanted.map((e) => [e.id, e.type]),
      'the webhook got the same events, once each'
    )
  })
}
