import t from 'tap'
import { randomBytes } from 'node:crypto'
import { applyFile, ConfigLockedError, ConfigRefusedError, planFile } from '../../../lib/as-code/apply.js'
import { exportConfigText } from '../../../lib/as-code/export.js'
import { addSites } from '../../../lib/monitoring/add-sites.js'
import { createPage } from '../../../lib/monitoring/status-pages.js'
import { parseConfigText } from '../../../lib/rules/config-parse.js'
import type { ConfigFile } from '../../../lib/rules/config-file.js'
import { NO_EXPECTATIONS } from '../../../lib/rules/expectations.js'
import { insertPolicy } from '../../../lib/store/alert-config.js'
import { claimConfigLock } from '../../../lib/store/config-state.js'
import { addHeartbeat } from '../../../lib/heartbeats/manage.js'
import { addMonitor } from '../../../lib/monitoring/monitors.js'
import { monitorBody, type MonitorInput } from '../../../lib/rules/monitor-fields.js'
import { findStatusPage } from '../../../lib/store/status-pages.js'
import type { Db } from '../../../lib/store/db.js'
import { SecretBox } from '../../../lib/webhooks/secret-box.js'
import { engines, migratedDb } from '../../helpers/db.js'

const now = (): Date => new Date()
const box = new SecretBox({ key: randomBytes(32), keyFile: '/nonexistent/webhook.key' })

function fileOf(text: string): ConfigFile {
  const parsed = parseConfigText(text, 'test.yaml', {})
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems))
  return parsed.file
}

/** Everything an apply could write, as rows: what a failed apply must leave exactly as it was. */
async function snapshot(db: Db): Promise<unknown> {
  return {
    sites: await db('sites')
      .orderBy('id')
      .select(
        'id',
        'domain',
        'name',
        'removed_at',
        'interval_s',
        'expect_status',
        'alert_policy_id',
        'depends_on_site_id',
        'managed_by',
        'changed_at'
      ),
    pages: await db('status_pages').orderBy('id').select('*'),
    pageSites: await db('status_page_sites').orderBy(['page_id', 'position']).select('*'),
    events: await db('events').count({ n: '*' }).first()
  }
}

/** A service a team made by hand: two sites with settings, a policy, a dependency, a tcp monitor, a heartbeat and a page listing them. */
async function handMade(db: Db): Promise<void> {
  await db.transaction((trx) =>
    insertPolicy({
      db: trx,
      policy: {
        name: 'night',
        channels: [],
        events: ['outage.opened'],
        after_min: 0,
        remind_every_min: null,
        escalate: [],
        on_resolved: true,
        group_window_s: 0,
        is_default: false
      } as never,
      now: now()
    })
  )
  await addSites({
    db,
    entries: [
      { domain: 'shop.example.com', name: 'Shop', settings: { interval_s: 60, expect: { ...NO_EXPECTATIONS, status: [200] } } },
      { domain: 'api.example.com', name: null, settings: { interval_s: null, expect: { ...NO_EXPECTATIONS, body_contains: 'ok' } } }
    ],
    now: now()
  })
  const policy: { id: number } = await db('alert_policies').first('id')
  const shop: { id: number } = await db('sites').where({ domain: 'shop.example.com' }).first('id')
  await db('sites').where({ domain: 'api.example.com' }).update({ alert_policy_id: policy.id, depends_on_site_id: shop.id })
  const monitor = monitorBody.validate({
    slug: 'orders-db',
    name: 'Orders DB',
    target: 'db.example.com',
    check: { type: 'tcp', port: 5432 }
  })
  if (monitor.error) throw monitor.error
  await addMonitor({ db, slug: 'orders-db', input: monitor.value as MonitorInput, box, now: now() })
  await addHeartbeat({
    db,
    slug: 'nightly',
    settings: { name: 'Nightly backup', schedule: { every_s: 86_400 }, grace_s: 600, max_runtime_s: null },
    now: now()
  })
  const page = await createPage({
    db,
    page: {
      slug: 'main',
      title: 'Main',
      description: null,
      logo_url: null,
      sites: [
        { domain: 'shop.example.com', name: 'The shop' },
        { domain: 'api.example.com', name: null }
      ],
      monitors: [{ slug: 'orders-db', name: 'Database' }],
      heartbeats: [{ slug: 'nightly', name: null }]
    },
    now: now()
  })
  if (!page.ok) throw new Error(page.reason)
}

for (const engine of engines()) {
  t.test(`a round trip on ${engine}: export, apply, edit one field, plan, apply, export`, async (t) => {
    const { db } = await migratedDb(engine, t)
    await handMade(db)
    const exported = await exportConfigText({ db, schemaUrl: null })
    t.match(exported, /alert_policy: night/)
    t.match(exported, /depends_on: shop\.example\.com/)
    const before = await snapshot(db)
    const first = await applyFile({ db, file: fileOf(exported), prune: true, now })
    t.same(first.plan.items, [], 'export then apply is a no-op')
    t.same(await snapshot(db), before, 'and writes nothing')

    const edited = exported.replace('interval_s: 60', 'interval_s: 120')
    t.not(edited, exported)
    const plan = await planFile({ db, file: fileOf(edited), prune: false })
    t.same(
      plan.items,
      [{ resource: 'site', key: 'shop.example.com', action: 'change', changes: [{ field: 'interval_s', old: 60, new: 120 }] }],
      'the plan shows exactly the edit'
    )
    const applied = await applyFile({ db, file: fileOf(edited), prune: false, now })
    t.same(applied.plan.items, plan.items)
    t.same(fileOf(await exportConfigText({ db, schemaUrl: null })), fileOf(edited), 'the export equals the edited file')
    const again = await applyFile({ db, file: fileOf(edited), prune: false, now })
    t.same(again.plan.items, [], 'a second apply changes nothing')

    // The page lists a monitor and a heartbeat: the export names them, and an edit of either list is one field.
    const page = async (): Promise<unknown> => {
      const p = await findStatusPage({ db, slug: 'main' })
      return [
        p?.sites.map((s) => s.domain),
        p?.monitors.map((m) => [m.slug, m.display_name]),
        p?.heartbeats.map((h) => [h.slug, h.display_name])
      ]
    }
    t.same(
      fileOf(exported).pages.map((p) => [p.slug, p.monitors, p.heartbeats]),
      [['main', [{ slug: 'orders-db', name: 'Database' }], [{ slug: 'nightly', name: null }]]],
      'the export names the monitor and the heartbeat the page lists'
    )
    const renamed = edited.replace('name: Database', 'name: Orders')
    t.not(renamed, edited)
    const renaming = await planFile({ db, file: fileOf(renamed), prune: false })
    t.same(
      renaming.items,
      [
        {
          resource: 'page',
          key: 'main',
          action: 'change',
          changes: [{ field: 'monitors', old: [{ slug: 'orders-db', name: 'Database' }], new: [{ slug: 'orders-db', name: 'Orders' }] }]
        }
      ],
      "the plan shows exactly the page's monitor renamed"
    )
    await applyFile({ db, file: fileOf(renamed), prune: false, now })
    t.same(
      await page(),
      [['shop.example.com', 'api.example.com'], [['orders-db', 'Orders']], [['nightly', null]]],
      'the page shows the new name, its other lists as they were'
    )
    t.same(fileOf(await exportConfigText({ db, schemaUrl: null })), fileOf(renamed), 'the export equals the edited file')

    // A page without `monitors:` or `heartbeats:` lists none: an apply takes them off it.
    const bare = fileOf(renamed)
    bare.pages = bare.pages.map((p) => ({ ...p, monitors: [], heartbeats: [] }))
    const taken = await applyFile({ db, file: bare, prune: true, now })
    t.same(
      taken.plan.items.map((i) => [i.resource, i.key, i.action, i.changes.map((c) => [c.field, c.new])]),
      [
        [
          'page',
          'main',
          'change',
          [
            ['heartbeats', null],
            ['monitors', null]
          ]
        ]
      ],
      'the page loses both lists, and nothing else changes'
    )
    t.same(await page(), [['shop.example.com', 'api.example.com'], [], []], "the page's sites stay, its monitor and heartbeat go")
    t.same(
      await db('sites')
        .whereIn('domain', ['heartbeat:nightly', 'monitor:orders-db'])
        .whereNull('removed_at')
        .orderBy('domain')
        .pluck('domain'),
      ['heartbeat:nightly', 'monitor:orders-db'],
      'the monitor and the heartbeat themselves stay'
    )
    t.same(fileOf(await exportConfigText({ db, schemaUrl: null })), bare, 'and the export is the file again')
  })

  t.test(`apply creates what the file adds and --prune removes only what an apply made, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    await addSites({ db, entries: [{ domain: 'hand.example.com', name: null }], now: now() })
    const file = fileOf(
      'sites:\n  - domain: a.example.com\n    interval_s: 300\n  - domain: b.example.com\npages:\n  - slug: ours\n    title: Ours\n    sites: [{domain: a.example.com}]\n'
    )
    const created = await applyFile({ db, file, prune: true, now })
    t.same(
      created.plan.items.map((i) => `${i.action} ${i.key}`),
      ['create a.example.com', 'create b.example.com', 'create ours'],
      'the hand-made site is not in the plan'
    )
    t.same(await db('sites').whereNull('removed_at').orderBy('domain').pluck('domain'), [
      'a.example.com',
      'b.example.com',
      'hand.example.com'
    ])
    t.same(await db('events').where({ type: 'site.added' }).count({ n: '*' }).first(), { n: 3 }, 'each site added is announced')
    const pruned = await applyFile({ db, file: fileOf('sites:\n  - domain: a.example.com\n    interval_s: 300\n'), prune: true, now })
    t.same(
      pruned.plan.items.map((i) => `${i.action} ${i.key}`),
      ['remove b.example.com', 'remove ours']
    )
    t.same(
      await db('sites').whereNull('removed_at').orderBy('domain').pluck('domain'),
      ['a.example.com', 'hand.example.com'],
      'the hand-made site stays'
    )
    const kept = await applyFile({ db, file: fileOf('sites: []\n'), prune: false, now })
    t.same(kept.plan, { items: [], kept: 1 }, 'without --prune, what an apply made is kept')
  })

  t.test(`a page lists a monitor and a heartbeat the same apply creates, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    const text = [
      'sites: [{domain: a.example.com}]',
      'monitors:',
      '  - {slug: db, name: DB, target: db.example.com, check: {type: tcp, port: 5432}}',
      'heartbeats:',
      '  - {slug: nightly, name: Nightly, schedule: {every_s: 86400}, grace_s: 600}',
      'pages:',
      '  - {slug: ours, title: Ours, sites: [{domain: a.example.com}], monitors: [{slug: db, name: Database}], heartbeats: [{slug: nightly}]}',
      ''
    ].join('\n')
    const created = await applyFile({ db, file: fileOf(text), prune: false, now })
    t.same(
      created.plan.items.map((i) => `${i.action} ${i.resource} ${i.key}`),
      ['create site a.example.com', 'create monitor db', 'create page ours', 'create heartbeat nightly']
    )
    const page = await findStatusPage({ db, slug: 'ours' })
    t.same(
      [
        page?.sites.map((s) => s.domain),
        page?.monitors.map((m) => [m.slug, m.display_name]),
        page?.heartbeats.map((h) => [h.slug, h.display_name])
      ],
      [['a.example.com'], [['db', 'Database']], [['nightly', null]]],
      'the page lists them, made in the same transaction'
    )
    t.same((await applyFile({ db, file: fileOf(text), prune: false, now })).plan.items, [], 'and applying it again changes nothing')
  })

  t.test(`a failing statement mid-apply leaves the previous state whole, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    await handMade(db)
    // The pages are written after the sites: a page refused by the database must undo the sites too.
    if (engine === 'sqlite')
      await db.raw(
        "CREATE TRIGGER refuse_page BEFORE INSERT ON status_pages WHEN NEW.slug = 'boom' BEGIN SELECT RAISE(ABORT, 'injected'); END"
      )
    else
      await db.raw(
        "CREATE TRIGGER refuse_page BEFORE INSERT ON status_pages FOR EACH ROW BEGIN IF NEW.slug = 'boom' THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'injected'; END IF; END"
      )
    const exported = await exportConfigText({ db, schemaUrl: null })
    const before = await snapshot(db)
    const file = fileOf(
      exported
        .replace('interval_s: 60', 'interval_s: 90')
        .replace(/^sites:\n/m, 'sites:\n  - domain: new.example.com\n')
        .replace(/^monitors:\n/m, 'monitors:\n  - {slug: new-db, name: New DB, target: db.example.com, check: {type: tcp, port: 5432}}\n')
        .replace(
          /^pages:\n/m,
          'pages:\n  - slug: boom\n    title: Boom\n    sites: [{domain: new.example.com}]\n    monitors: [{slug: new-db}]\n'
        )
    )
    t.same(
      file.monitors.map((m) => m.slug),
      ['new-db', 'orders-db'],
      'the file adds a monitor too, which the new page lists'
    )
    await t.rejects(applyFile({ db, file, prune: true, now }), /injected/, 'the database refused the page, after the sites were written')
    t.same(await snapshot(db), before, 'no half-applied file')
    const next = await applyFile({ db, file: fileOf(exported), prune: false, now })
    t.same(next.plan.items, [], 'and the lock was let go')
  })

  t.test(`two applies at once: the loser is told and writes nothing, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    const other = await claimConfigLock({ db, holder: 'other', now: now(), until: new Date(Date.now() + 60_000) })
    t.equal(other, null)
    const err = await applyFile({ db, file: fileOf('sites: [{domain: a.example.com}]'), prune: false, now }).catch((e: unknown) => e)
    t.type(err, ConfigLockedError)
    t.same(await db('sites').count({ n: '*' }).first(), { n: 0 })
    const both = await Promise.allSettled([
      applyFile({ db, file: fileOf('sites: [{domain: a.example.com}]'), prune: false, now, holder: 'x' }),
      applyFile({ db, file: fileOf('sites: [{domain: b.example.com}]'), prune: false, now, holder: 'y' })
    ])
    t.ok(
      both.every((r) => r.status === 'rejected'),
      'both lose while the other holds it'
    )
    await db('config_lock').update({ holder: null, locked_until: null })
    const race = await Promise.allSettled([
      applyFile({ db, file: fileOf('sites: [{domain: a.example.com}]'), prune: false, now }),
      applyFile({ db, file: fileOf('sites: [{domain: a.example.com}]'), prune: false, now })
    ])
    const won = race.filter((r) => r.status === 'fulfilled')
    const lost = race.filter((r): r is PromiseRejectedResult => r.status === 'rejected')
    t.ok(won.length >= 1, 'one wins')
    for (const l of lost) t.type(l.reason, ConfigLockedError, 'and a loser is told')
    t.same(await db('sites').pluck('domain'), ['a.example.com'])
  })

  t.test(`an alert policy the database lacks is refused before any write, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    const file = fileOf('sites: [{domain: a.example.com, alert_policy: nobody}]')
    await t.rejects(planFile({ db, file, prune: false }), ConfigRefusedError)
    await t.rejects(applyFile({ db, file, prune: false, now }), ConfigRefusedError)
    t.same(await db('sites').count({ n: '*' }).first(), { n: 0 })
  })
}
