import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { addSites } from '../../../lib/monitoring/add-sites.js'
import { hasStackTrace, runCli } from '../../helpers/cli.js'
import { engines, migratedDb } from '../../helpers/db.js'

const PUBLIC_URL = 'https://status.example.net'

for (const engine of engines()) {
  t.test(`export, plan and apply from the operator tool, on ${engine}`, async (t) => {
    const { db, url } = await migratedDb(engine, t)
    const env = { DATABASE_URL: url, PUBLIC_URL, SHOP_NAME: 'The shop' }
    await addSites({ db, entries: [{ domain: 'hand.example.com', name: 'By hand' }], now: new Date() })
    const dir = mkdtempSync(join(tmpdir(), 'site-status-config-'))
    const path = join(dir, 'watch.yaml')

    const exported = await runCli(['export'], { env })
    t.equal(exported.code, 0)
    t.match(
      exported.stdout,
      /^# yaml-language-server: \$schema=https:\/\/status\.example\.net\/api\/v1\/config\.schema\.json\nsites:\n {2}- domain: hand\.example\.com\n {4}name: By hand\n/
    )
    writeFileSync(path, exported.stdout)
    const same = await runCli(['apply', '-f', path], { env })
    t.equal(same.code, 0)
    t.match(same.stdout, /^No changes: what is running matches the file\./, 'export then apply is a no-op')

    writeFileSync(
      path,
      `${exported.stdout.replace('pages: []\n', '')}  - domain: shop.example.com\n    name: \${SHOP_NAME}\n    interval_s: 60\npages: []\n`
    )
    const plan = await runCli(['plan', '-f', path], { env })
    t.equal(
      plan.stdout,
      '+ site shop.example.com\n    name: "The shop"\n    interval_s: 60\n    expect.status: (none)\n    expect.body_contains: (none)\n    expect.max_response_ms: (none)\n    alert_policy: (none)\n    depends_on: (none)\nPlan: 1 to create, 0 to change, 0 to remove.\n'.replace(
        / {4}(expect\.\w+|alert_policy|depends_on): \(none\)\n/g,
        ''
      )
    )
    const applied = await runCli(['apply', '-f', path], { env })
    t.match(applied.stdout, /Applied: 1 created, 0 changed, 0 removed\./)
    t.same(await db('sites').whereNull('removed_at').orderBy('domain').pluck('domain'), ['hand.example.com', 'shop.example.com'])

    writeFileSync(path, 'sites:\n  - domain: a.example.com\n    interval_s: "60"\n  - domain: b.example.com\n    colour: red\n')
    const bad = await runCli(['apply', '-f', path], { env })
    t.equal(bad.code, 1)
    t.match(bad.stderr, `${path}:3: sites[0].interval_s: "interval_s" must be a whole number`)
    t.match(bad.stderr, `${path}:5: sites[1].colour: "sites[1].colour" is not allowed`)
    t.notOk(hasStackTrace(bad.stderr))
    t.same(await db('sites').count({ n: '*' }).first(), { n: 2 }, 'nothing was written')

    const missing = await runCli(['plan'], { env })
    t.equal(missing.code, 2)
  })
}
