import t from 'tap'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PAGES_DIR } from '../../../lib/pages/views.js'
import { ROOT, startServe } from '../../helpers/cli.js'

const BUILT = join(ROOT, 'dist/lib/cli/index.js')

t.test('templates and static files live in lib/pages', async (t) => {
  t.equal(PAGES_DIR, join(ROOT, 'lib/pages'))
  for (const file of [
    'templates/layout.hbs',
    'templates/site.hbs',
    'templates/index.hbs',
    'templates/error.hbs',
    'static/copy.js',
    'static/site.css'
  ]) {
    t.ok(existsSync(join(PAGES_DIR, file)), file)
  }
})

t.test('templates must never print raw values except the layout slot', async (t) => {
  const { readdirSync, readFileSync } = await import('node:fs')
  for (const file of readdirSync(join(PAGES_DIR, 'templates'))) {
    const raw = [
      ...readFileSync(join(PAGES_DIR, 'templates', file), 'utf8').matchAll(/\{\{\{\s*([^}]*?)\s*\}\}\}|\{\{&\s*([^}]*?)\s*\}\}/g)
    ].map((m) => m[1] ?? m[2])
    t.same(raw, file === 'layout.hbs' ? ['content'] : [], `${file}: no triple-stash for data`)
  }
})

t.test('the built service (npm start) serves pages from any working directory', async (t) => {
  t.ok(existsSync(BUILT), 'dist/ is built (npm test builds it first; otherwise run `npm run build`)')
  if (!existsSync(BUILT)) return
  const dir = mkdtempSync(join(tmpdir(), 'site-status-pages-'))
  t.teardown(() => {
    rmSync(dir, { recursive: true, force: true })
  })
  const { child, uri } = await startServe(t, {
    script: 'dist/lib/cli/index.js',
    cwd: dir,
    env: { HOST: '127.0.0.1', DATABASE_URL: `sqlite:${join(dir, 'db.sqlite')}` }
  })
  const home = await fetch(`${uri}/`)
  t.equal(home.status, 200)
  t.match(await home.text(), /<h1>Tracked sites<\/h1>/)
  const script = await fetch(`${uri}/static/copy.js`)
  t.equal(script.status, 200)
  t.match(await script.text(), /clipboard/)
  const missing = await fetch(`${uri}/sites/nobody.example.com`)
  t.equal(missing.status, 404)
  t.match(await missing.text(), /not tracked/)
  t.equal((await fetch(`${uri}/api/badge/nobody.example.com`)).status, 200)
  child.kill('SIGTERM')
  await new Promise((resolve) => child.once('exit', resolve))
})
