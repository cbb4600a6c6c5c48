import t from 'tap'
import { addSite } from '../../../../lib/monitoring/add-sites.js'
import { recordCheck, recordChecks } from '../../../../lib/monitoring/record/record-check.js'
import { removeSite } from '../../../../lib/monitoring/remove-site.js'
import { SiteStates } from '../../../../lib/monitoring/state/site-state.js'
import type { SiteCertificate } from '../../../../lib/rules/certificates.js'
import type { CheckRecord } from '../../../../lib/store/checks.js'
import { toDate, type Db } from '../../../../lib/store/db.js'
import { migrateDownOne, migrateLatest, migrateUpOne } from '../../../../lib/store/migrate.js'
import { migrations } from '../../../../migrations/index.js'
import { scheduledCheck } from '../../../helpers/checks.js'
import { engines, migratedDb } from '../../../helpers/db.js'

const T0 = Date.parse('2026-11-24T06:00:00.000Z')
const MIN = 60_000
const DAY = 86_400_000
const ISSUER = 'CN=Test CA, O=Site Status Tests'
const cert = (expiresAt: number, issuer: string | null = ISSUER): SiteCertificate => ({ expiresAt: new Date(expiresAt), issuer })
const withTls = (check: CheckRecord, tls: SiteCertificate | null): CheckRecord => ({ ...check, tls })

interface Announced {
  threshold_days: number
  days_remaining: number
  expires_at: string
  issuer: string | null
  site: { domain: string; name: string }
  at: string
}

async function announced(db: Db): Promise<Announced[]> {
  const rows = await db('events').where({ type: 'certificate.expiring' }).orderBy('id').select('data')
  return rows.map((r: { data: string }) => JSON.parse(r.data) as Announced)
}

async function siteRow(db: Db, id: number): Promise<Record<string, unknown>> {
  const row = await db('sites').where({ id }).first()
  return {
    tls_expires_at: toDate(row.tls_expires_at)?.toISOString() ?? null,
    tls_issuer: row.tls_issuer,
    tls_notice_expires_at: toDate(row.tls_notice_expires_at)?.toISOString() ?? null,
    tls_notice_days: row.tls_notice_days === null ? null : Number(row.tls_notice_days)
  }
}

for (const engine of engines()) {
  t.test(`certificate.expiring is announced once per threshold and certificate, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    await addSite({ db, entry: { domain: 'soon.example.com', name: 'Soon' }, now: new Date(T0 - MIN) })
    await addSite({ db, entry: { domain: 'later.example.com', name: null }, now: new Date(T0 - MIN) })
    const [soon, later] = (await db('sites').orderBy('id').pluck('id')).map(Number) as [number, number]
    const soonExpiry = T0 + 3 * DAY - 5_000
    const laterExpiry = T0 + 30 * DAY - 5_000

    await recordCheck({ db, check: withTls(scheduledCheck(later, 'up', T0), cert(laterExpiry)) })
    await recordCheck({ db, check: withTls(scheduledCheck(soon, 'up', T0), cert(soonExpiry)) })
    t.same(
      await announced(db),
      [
        {
          site: { domain: 'soon.example.com', name: 'Soon' },
          expires_at: new Date(soonExpiry).toISOString(),
          days_remaining: 2,
          threshold_days: 7,
          issuer: ISSUER,
          at: new Date(T0).toISOString()
        }
      ],
      'first seen 3 days before expiry: one event, for 7 days; nothing for the 30-day certificate'
    )
    t.same(
      await siteRow(db, soon),
      {
        tls_expires_at: new Date(soonExpiry).toISOString(),
        tls_issuer: ISSUER,
        tls_notice_expires_at: new Date(soonExpiry).toISOString(),
        tls_notice_days: 7
      },
      'the certificate and what was announced are on the site row'
    )
    t.same(await siteRow(db, later), {
      tls_expires_at: new Date(laterExpiry).toISOString(),
      tls_issuer: ISSUER,
      tls_notice_expires_at: null,
      tls_notice_days: null
    })
    const [event] = await db('events').where({ type: 'certificate.expiring' }).select('site_id')
    t.equal(Number(event.site_id), soon, 'the event names its site (for its page and webhook filters)')

    // The next checks, one at a time and in a batch, see the same certificate: nothing new.
    await recordCheck({ db, check: withTls(scheduledCheck(soon, 'up', T0 + MIN), cert(soonExpiry)) })
    await recordChecks({
      db,
      checks: [
        withTls(scheduledCheck(soon, 'up', T0 + 2 * MIN), cert(soonExpiry)),
        withTls(scheduledCheck(soon, 'down', T0 + 3 * MIN), cert(soonExpiry)),
        withTls(scheduledCheck(later, 'up', T0 + 3 * MIN), cert(laterExpiry))
      ]
    })
    t.equal((await announced(db)).length, 1, 'not announced again by later checks')
    t.equal(
      await db('events')
        .where({ type: 'outage.opened' })
        .count({ n: '*' })
        .first()
        .then((r) => Number(r?.n)),
      1,
      'outage events still go out beside'
    )

    // A check that completed no handshake clears the current certificate but not what was announced.
    await recordCheck({ db, check: withTls(scheduledCheck(soon, 'down', T0 + 4 * MIN), null) })
    t.match(await siteRow(db, soon), { tls_expires_at: null, tls_issuer: null, tls_notice_days: 7 })
    await recordCheck({ db, check: withTls(scheduledCheck(soon, 'up', T0 + 5 * MIN), cert(soonExpiry)) })
    t.equal((await announced(db)).length, 1, 'the certificate coming back is not news')

    // A stale (late) check and a retried write announce nothing.
    await recordCheck({ db, check: withTls(scheduledCheck(soon, 'up', T0 + 30_000), cert(T0 + 12 * 3_600_000)) })
    t.equal((await announced(db)).length, 1, 'a stale check announces nothing')

    // The last day: the 1-day threshold, once, even when the write is retried.
    const lastDay = withTls(scheduledCheck(soon, 'up', soonExpiry - 12 * 3_600_000), cert(soonExpiry))
    await recordCheck({ db, check: lastDay })
    await recordCheck({ db, check: lastDay, retried: true })
    await recordCheck({ db, check: withTls(scheduledCheck(soon, 'up', soonExpiry - 11 * 3_600_000), cert(soonExpiry)) })
    t.same(
      (await announced(db)).map((e) => [e.threshold_days, e.days_remaining]),
      [
        [7, 2],
        [1, 0]
      ],
      'the 1-day threshold is announced once on the last day'
    )

    // Renewed: another expiry, 10 days from now, is announced afresh (14); a renewal to 90 days is not.
    const renewedAt = soonExpiry - 6 * 3_600_000
    await recordCheck({ db, check: withTls(scheduledCheck(soon, 'up', renewedAt), cert(renewedAt + 10 * DAY, 'CN=Renewed')) })
    await recordCheck({ db, check: withTls(scheduledCheck(soon, 'up', renewedAt + MIN), cert(renewedAt + 10 * DAY, 'CN=Renewed')) })
    await recordCheck({ db, check: withTls(scheduledCheck(later, 'up', renewedAt), cert(renewedAt + 90 * DAY)) })
    const all = await announced(db)
    t.equal(all.length, 3)
    t.match(all[2], {
      threshold_days: 14,
      days_remaining: 10,
      issuer: 'CN=Renewed',
      expires_at: new Date(renewedAt + 10 * DAY).toISOString()
    })
  })

  t.test(`the certificate survives a restart and a resumed site starts without one, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    await addSite({ db, entry: { domain: 'kept.example.com', name: null }, now: new Date(T0 - MIN) })
    const id = Number((await db('sites').first('id')).id)
    const expiry = T0 + 20 * DAY + 3_600_000
    await recordCheck({ db, check: withTls(scheduledCheck(id, 'up', T0), cert(expiry)) })

    const states = new SiteStates({ intervalMs: 60_000, publicUrl: 'http://status.test' })
    await states.refresh(db, new Date(T0 + MIN))
    t.same(
      states.statusRecord('kept.example.com', new Date(T0 + MIN))?.tls,
      {
        expires_at: new Date(expiry).toISOString(),
        days_remaining: 20,
        issuer: ISSUER
      },
      'a fresh process reads it from the database'
    )
    t.equal(states.statusRecord('kept.example.com', new Date(T0 + 15 * DAY))?.tls?.days_remaining, 5, 'days are counted from now')

    await removeSite({ db, domain: 'kept.example.com', now: new Date(T0 + 2 * MIN) })
    await addSite({ db, entry: { domain: 'kept.example.com', name: null }, now: new Date(T0 + 3 * MIN) })
    t.match(await siteRow(db, id), { tls_expires_at: null, tls_issuer: null }, 'tracked again: no certificate until a check sees one')
  })

  t.test(`the site-certificates migration goes down and up, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    const name = '20261124-09-site-certificates'
    const after = migrations.slice(migrations.findIndex((m) => m.name === name) + 1)
    for (let i = 0; i <= after.length; i++) await migrateDownOne(db)
    for (const column of ['tls_expires_at', 'tls_issuer', 'tls_notice_expires_at', 'tls_notice_days']) {
      t.notOk(await db.schema.hasColumn('sites', column), `${column} is gone after down`)
    }
    await db('sites').insert({ domain: 'before.example.com', name: 'b', added_at: new Date(T0) })
    t.same(await migrateUpOne(db), [name])
    t.match(await db('sites').where({ domain: 'before.example.com' }).first(), {
      tls_expires_at: null,
      tls_issuer: null,
      tls_notice_days: null
    })
    await migrateLatest(db)
  })
}
