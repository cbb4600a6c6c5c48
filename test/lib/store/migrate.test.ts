import t from 'tap'
import { openDb, toDate } from '../../../lib/store/db.js'
import { migrateDownAll, migrateDownOne, migrateLatest, migrateUpOne, pendingMigrations } from '../../../lib/store/migrate.js'
import { migrations } from '../../../migrations/index.js'
import { createTestDatabase, engines } from '../../helpers/db.js'

const TABLES = ['api_keys', 'sites', 'checks', 'outages', 'events', 'event_sequence', 'webhooks', 'webhook_deliveries', 'instances']

for (const engine of engines()) {
  t.test(`migrations on ${engine}`, async (t) => {
    const test = await createTestDatabase(engine)
    const db = openDb(test.url)
    t.teardown(async () => {
      await db.destroy()
      await test.cleanup()
    })

    t.same(
      await pendingMigrations(db),
      migrations.map((m) => m.name),
      'a new database has every migration pending'
    )
    t.same(
      await migrateLatest(db),
      migrations.map((m) => m.name),
      'up applies them all in order'
    )
    t.same(await migrateLatest(db), [], 'a second run applies nothing')
    t.same(await pendingMigrations(db), [], 'nothing is pending afterwards')
    for (const table of TABLES) t.ok(await db.schema.hasTable(table), `${table} exists after up`)

    t.test('timestamps keep milliseconds and UTC', async (t) => {
      const at = new Date('2026-11-22T06:25:07.123Z')
      await db('sites').insert({ domain: 'ms.example.com', name: 'ms', added_at: at })
      const row = await db('sites').where({ domain: 'ms.example.com' }).first()
      t.equal(toDate(row.added_at)?.toISOString(), '2026-11-22T06:25:07.123Z')
      const found = await db('sites')
        .where('added_at', '>', new Date(at.getTime() - 1))
        .where('added_at', '<', new Date(at.getTime() + 1))
        .count({ n: '*' })
      t.equal(Number(found[0]?.n), 1, 'comparisons against Dates are exact to the millisecond')
      if (engine === 'mysql') {
        const [rows] = await db.raw("select DATE_FORMAT(added_at, '%Y-%m-%d %H:%i:%s.%f') as v from sites where domain = 'ms.example.com'")
        t.equal(rows[0].v, '2026-11-22 06:25:07.123000', 'MySQL stores the UTC wall time')
      }
    })

    t.test('one open outage per site is enforced by the schema', async (t) => {
      const [siteId] = await db('sites').insert({ domain: 'outage.example.com', name: 'o', added_at: new Date() })
      await db('outages').insert({ site_id: siteId, started_at: new Date(), open_site_id: siteId })
      await t.rejects(
        db('outages').insert({ site_id: siteId, started_at: new Date(), open_site_id: siteId }),
        'a second open outage is refused'
      )
      await db('outages').where({ site_id: siteId }).update({ ended_at: new Date(), open_site_id: null })
      await db('outages').insert({ site_id: siteId, started_at: new Date(), open_site_id: siteId })
      t.equal(Number((await db('outages').where({ site_id: siteId }).count({ n: '*' }))[0]?.n), 2, 'closed outages do not count')
    })

    t.test('key scopes: keys issued before keep read,check; down drops the column', async (t) => {
      // Down one at a time to just before the scopes migration: the later ones go first.
      const later = migrations.slice(migrations.findIndex((m) => m.name === '20261124-06-key-scopes') + 1).map((m) => m.name)
      const reverted: string[] = []
      for (let i = 0; i < later.length; i++) reverted.push(...(await migrateDownOne(db)))
      t.same(reverted, [...later].reverse(), 'the migrations after it are reverted one by one, newest first')
      t.same(await migrateDownOne(db), ['20261124-06-key-scopes'], 'down reverts it alone')
      t.notOk(await db.schema.hasColumn('api_keys', 'scopes'), 'the column is gone after down')
      await db('api_keys').insert({ name: 'old', key_hash: 'a'.repeat(64), rate_limit: null, created_at: new Date() })
      t.same(await migrateUpOne(db), ['20261124-06-key-scopes'], 'up applies it again')
      t.equal((await db('api_keys').where({ name: 'old' }).first()).scopes, 'read,check', 'a key issued before scopes keeps read,check')
      await db('api_keys').insert({ name: 'new', key_hash: 'b'.repeat(64), rate_limit: null, created_at: new Date() })
      t.equal((await db('api_keys').where({ name: 'new' }).first()).scopes, 'read,check', 'a key stored without scopes gets the default')
      await t.rejects(
        db('api_keys').insert({ name: 'null', key_hash: 'c'.repeat(64), scopes: null, created_at: new Date() }),
        'scopes cannot be null'
      )
      await db('api_keys').del()
      t.same(await migrateLatest(db), later, 'and the later ones apply again on top')
    })

    t.test('first check times are filled in from the checks and outages already stored', async (t) => {
      const name = '20261124-11-first-checked-at'
      const later = migrations.slice(migrations.findIndex((m) => m.name === name) + 1).map((m) => m.name)
      for (let i = 0; i < later.length; i++) await migrateDownOne(db)
      t.same(await migrateDownOne(db), [name], 'down reverts it')
      t.notOk(await db.schema.hasColumn('sites', 'first_checked_at'), 'the column is gone after down')
      const at = (minutes: number) => new Date(Date.parse('2026-11-22T06:00:00.000Z') + minutes * 60_000)
      const site = async (domain: string, addedAt: Date, checkedAt: Date | null = null) => {
        const [id] = await db('sites').insert({ domain, name: domain, added_at: addedAt, checked_at: checkedAt })
        return Number(id)
      }
      const checked = await site('checked.example.com', at(0), at(30))
      const resumed = await site('resumed.example.com', at(20), at(30))
      const pruned = await site('pruned.example.com', at(0), at(30))
      const gone = await site('gone.example.com', at(0), at(30))
      const never = await site('never.example.com', at(0))
      const check = (siteId: number, minutes: number) => ({
        site_id: siteId,
        checked_at: at(minutes),
        status: 'up',
        blocked: false,
        partial: false,
        response_ms: 1,
        locations_answered: 3,
        locations_total: 3,
        source: 'schedule',
        locations: '[]'
      })
      await db('checks').insert([
        check(checked, 2),
        check(checked, 1),
        check(checked, 30),
        check(resumed, 10),
        check(resumed, 25),
        check(pruned, 30)
      ])
      await db('outages').insert([
        { site_id: pruned, started_at: at(5), ended_at: at(6) },
        { site_id: resumed, started_at: at(11), ended_at: at(12) }
      ])
      t.same(await migrateUpOne(db), [name], 'up applies it again')
      const first = async (id: number) =>
        toDate((await db('sites').where({ id }).first('first_checked_at')).first_checked_at)?.getTime() ?? null
      t.equal(await first(checked), at(1).getTime(), 'the oldest stored check')
      t.equal(await first(resumed), at(25).getTime(), 'of the current tracking period only')
      t.equal(await first(pruned), at(5).getTime(), 'an outage older than the oldest check left')
      t.equal(await first(gone), at(30).getTime(), 'no check or outage left: the newest check time the row keeps')
      t.equal(await first(never), null, 'never checked: none')
      await db('checks').del()
      await db('outages').del()
      await db('sites').del()
      t.same(await migrateLatest(db), later, 'and the later ones apply again on top')
    })

    t.test('down removes every table and up restores them', async (t) => {
      const reverted = await migrateDownAll(db)
      t.same([...reverted].sort(), migrations.map((m) => m.name).sort(), 'down reverts every migration')
      for (const table of TABLES) t.notOk(await db.schema.hasTable(table), `${table} is gone after down`)
      t.same(
        await migrateLatest(db),
        migrations.map((m) => m.name),
        'up applies them again'
      )
      for (const table of TABLES) t.ok(await db.schema.hasTable(table), `${table} exists again`)
    })
  })
}
