import t from 'tap'
import { recordCheck } from '../../../lib/monitoring/record/record-check.js'
import { removeSite } from '../../../lib/monitoring/remove-site.js'
import { SiteStates } from '../../../lib/monitoring/state/site-state.js'
import type { Db } from '../../../lib/store/db.js'
import { addSite } from '../../../lib/monitoring/add-sites.js'
import { scheduledCheck } from '../../helpers/checks.js'
import { engines, migratedDb } from '../../helpers/db.js'
import { matchesOpenApi } from '../../helpers/openapi.js'
import { bearer, testServer } from '../../helpers/server.js'

const T0 = Date.parse('2026-11-01T00:00:00.000Z')
const MIN = 60_000
const HOUR = 60 * MIN
const DAY = 24 * HOUR
const iso = (ms: number) => new Date(ms).toISOString()

async function site(db: Db, domain: string, addedAt: number): Promise<number> {
  await addSite({ db, entry: { domain, name: domain.split('.')[0] ?? domain }, now: new Date(addedAt) })
  return Number((await db('sites').where({ domain }).first('id')).id)
}

/** Records checks at the given times (ms) with the given statuses, as the recorder would. */
async function checks(db: Db, siteId: number, feed: Array<[number, 'up' | 'down']>): Promise<void> {
  for (const [at, status] of feed) await recordCheck({ db, check: scheduledCheck(siteId, status, at) })
}

for (const engine of engines()) {
  t.test(`the SLA of a site over a window, on ${engine}`, async (t) => {
    const { db, url } = await migratedDb(engine, t)
    let now = T0 + 40 * DAY
    const { server, issueKey } = await testServer({ db, env: { DATABASE_URL: url }, now: () => new Date(now) })
    const key = await issueKey({ limit: 10_000 })
    const sla = async (domain: string, query = '') => {
      const res = await server.inject({ url: `/api/v1/sites/${domain}/sla${query}`, headers: bearer(key) })
      matchesOpenApi(t, res)
      return { code: res.statusCode, body: JSON.parse(res.payload) }
    }

    // shop: checked from T0, down [1 d, 1 d + 2 h), down [20 d, 20 d + 1 h), down from 39 d on.
    const shop = await site(db, 'shop.example.com', T0 - 5 * MIN)
    await checks(db, shop, [
      [T0, 'up'],
      [T0 + DAY, 'down'],
      [T0 + DAY + 2 * HOUR, 'up'],
      [T0 + 20 * DAY, 'down'],
      [T0 + 20 * DAY + HOUR, 'up'],
      [T0 + 39 * DAY, 'down']
    ])
    const outage = (start: number, end: number | null) => ({
      domain: 'shop.example.com',
      name: 'shop',
      started_at: iso(start),
      ended_at: end === null ? null : iso(end),
      duration_seconds: Math.floor(((end ?? now) - start) / 1000)
    })

    t.same(
      await sla('shop.example.com'),
      {
        code: 200,
        body: {
          domain: 'shop.example.com',
          name: 'shop',
          from: iso(now - 30 * DAY),
          to: iso(now),
          uptime_percent: Math.round(100 * (1 - 25 / 720) * 1000) / 1000,
          monitored_seconds: 30 * 86_400,
          maintenance_seconds: 0,
          downtime_seconds: 25 * 3600,
          incidents: 2,
          longest_outage_seconds: 24 * 3600,
          mttr_seconds: 3600,
          outages: [outage(T0 + 20 * DAY, T0 + 20 * DAY + HOUR), outage(T0 + 39 * DAY, null)]
        }
      },
      'by default the last 30 days, the ongoing outage up to now'
    )

    const cut = await sla('shop.example.com', `?from=${iso(T0 + DAY + HOUR)}&to=${iso(T0 + 20 * DAY + 30 * MIN)}`)
    t.match(
      cut.body,
      {
        monitored_seconds: (19 * DAY - 30 * MIN) / 1000,
        downtime_seconds: 3600 + 1800,
        incidents: 2,
        longest_outage_seconds: 3600,
        mttr_seconds: 7200,
        outages: [outage(T0 + DAY, T0 + DAY + 2 * HOUR), outage(T0 + 20 * DAY, T0 + 20 * DAY + HOUR)]
      },
      'a window cutting outages at both ends: their time inside counts; the one not yet over has no recovery in it'
    )

    const early = await sla('shop.example.com', `?from=${iso(T0 - 10 * DAY)}&to=${iso(T0 + 2 * DAY)}`)
    t.match(
      early.body,
      { monitored_seconds: 2 * 86_400, downtime_seconds: 7200, uptime_percent: Math.round(100 * (1 - 2 / 48) * 1000) / 1000 },
      'a site tracked mid-window is monitored from its first check, not from the window start or when it was added'
    )
    t.match(
      (await sla('shop.example.com', `?from=${iso(T0 - 10 * DAY)}&to=${iso(T0)}`)).body,
      {
        uptime_percent: 100,
        monitored_seconds: 0,
        downtime_seconds: 0,
        incidents: 0,
        longest_outage_seconds: 0,
        mttr_seconds: null,
        outages: []
      },
      'a window entirely before the first check: nothing monitored'
    )
    t.match(
      (await sla('shop.example.com', '?from=2026-11-05&to=2026-11-10')).body,
      { from: '2026-11-05T00:00:00.000Z', to: '2026-11-10T00:00:00.000Z', uptime_percent: 100, incidents: 0, outages: [] },
      'dates are midnight UTC; no outages in the window'
    )
    t.match(
      (await sla('shop.example.com', `?from=2026-11-02T01:00:00%2B01:00&to=2026-11-02T03:00:00%2B01:00`)).body,
      { from: '2026-11-02T00:00:00.000Z', to: '2026-11-02T02:00:00.000Z', uptime_percent: 0, downtime_seconds: 7200 },
      'offsets are honoured'
    )

    // The first-check rule: added 30 s before its first check, which was down.
    const fresh = await site(db, 'fresh.example.com', now - 50_000)
    await checks(db, fresh, [[now - 20_000, 'down']])
    t.match(
      (await sla('fresh.example.com')).body,
      { uptime_percent: 0, monitored_seconds: 20, downtime_seconds: 20, incidents: 1 },
      'down since its first check: 0%, not the 60% counting from when it was added'
    )
    const never = await site(db, 'never.example.com', now - DAY)
    t.ok(never)
    t.match((await sla('never.example.com')).body, { uptime_percent: 100, monitored_seconds: 0, outages: [] }, 'never checked')

    // A removed site keeps its history; its monitored time ends at the removal (which ends its outage).
    await removeSite({ db, domain: 'shop.example.com', now: new Date(T0 + 39 * DAY + HOUR) })
    now += DAY
    t.match(
      (await sla('shop.example.com', `?from=${iso(T0 + 30 * DAY)}&to=${iso(now)}`)).body,
      { monitored_seconds: (9 * DAY + HOUR) / 1000, downtime_seconds: 3600, incidents: 1, mttr_seconds: 3600 },
      'a removed site: monitored until its removal'
    )

    t.same(await sla('nobody.example.com'), { code: 404, body: { error: 'site is not tracked' } }, 'a domain never tracked: 404')
    t.equal((await sla('SHOP.Example.com.', '?from=2026-11-05')).code, 200, 'the domain is normalised')
    const bad: Array<[string, string, RegExp]> = [
      ['shop.example.com', '?from=2026-11-10&to=2026-11-05', /"from" must be before "to"/],
      ['shop.example.com', '?from=2026-11-10&to=2026-11-10', /"from" must be before "to"/],
      ['shop.example.com', '?from=2025-01-01&to=2026-02-06', /at most 400 days/],
      ['shop.example.com', '?from=last%20week', /"from" must be an ISO 8601/],
      ['shop.example.com', '?to=2026-02-30', /"to" must be an ISO 8601/],
      ['shop.example.com', '?from=2026-11-01T00:00:00', /"from" must be an ISO 8601/],
      ['shop.example.com', '?from=1762000000', /"from" must be an ISO 8601/],
      ['shop.example.com', '?window=30d', /window/],
      ['shop.example.com', `?from=${'9'.repeat(100)}`, /from/],
      ['bad_domain', '', /./]
    ]
    for (const [domain, query, error] of bad) {
      const res = await sla(domain, query)
      t.equal(res.code, 400, `${domain}${query}: 400`)
      t.match(res.body, { error }, `${domain}${query}: says why`)
    }
  })

  t.test(`the SLA over the last 30 days agrees with the status record's month, on ${engine}`, async (t) => {
    const { db, url } = await migratedDb(engine, t)
    const now = T0 + 45 * DAY
    const id = await site(db, 'agree.example.com', T0 + 10 * DAY)
    await checks(db, id, [
      [T0 + 20 * DAY, 'up'],
      [T0 + 21 * DAY, 'down'],
      [T0 + 21 * DAY + 3 * HOUR, 'up'],
      [T0 + 44 * DAY, 'down']
    ])
    const states = new SiteStates({ intervalMs: MIN, publicUrl: 'https://status.example.net' })
    await states.refresh(db, new Date(now))
    const { server, issueKey } = await testServer({ db, env: { DATABASE_URL: url }, now: () => new Date(now), states })
    const key = await issueKey()
    const status = JSON.parse((await server.inject({ url: '/api/v1/status/agree.example.com', headers: bearer(key) })).payload)
    const res = await server.inject({ url: '/api/v1/sites/agree.example.com/sla', headers: bearer(key) })
    const body = JSON.parse(res.payload)
    t.equal(body.uptime_percent, status.uptime_percent.month, `both ${body.uptime_percent}`)
    t.equal(body.monitored_seconds, 25 * 86_400, 'monitored from the first check, ten days after the site was added')
    t.ok(body.uptime_percent < 100)
  })
}
