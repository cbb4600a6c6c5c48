/**
 * `pages create` and `pages list` print links the server serves (issue 54): the operator tool may run
 * without the server's environment, so it takes the URL the newest `serve` announced on the same
 * database; its own PUBLIC_URL, when given, still wins.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { openDb } from '../../../lib/store/db.js'
import { readServedUrl } from '../../../lib/store/service-urls.js'
import { lines, runCli, startServe } from '../../helpers/cli.js'

t.test("the printed page URL is the running server's, not port 3000", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'site-status-pages-url-'))
  t.teardown(() => {
    rmSync(dir, { recursive: true, force: true })
  })
  const DATABASE_URL = `sqlite:${join(dir, 'db.sqlite')}`
  const before = await runCli(['sites', 'add', 'shop.example.com'], { env: { DATABASE_URL } })
  t.equal(before.code, 0)
  const early = await runCli(['pages', 'create', 'early', '--title', 'Early', 'shop.example.com'], { env: { DATABASE_URL } })
  t.equal(early.stdout, 'http://127.0.0.1:3000/status/early\n', 'no server has started yet: HOST and PORT as configured here')

  const { uri } = await startServe(t, { cwd: dir, env: { HOST: '127.0.0.1', DATABASE_URL } })
  t.notMatch(uri, /:3000$/, 'the server listens on a port of its own')
  const db = openDb(DATABASE_URL)
  t.teardown(() => db.destroy())
  t.equal(await readServedUrl({ db }), uri, 'the server announced where it serves')

  const created = await runCli(['pages', 'create', 'acme', '--title', 'Acme', 'shop.example.com'], { env: { DATABASE_URL } })
  t.same([created.code, created.stdout], [0, `${uri}/status/acme\n`], 'create prints the served URL')
  const list = await runCli(['pages', 'list'], { env: { DATABASE_URL } })
  t.same(
    lines(list.stdout)
      .slice(1)
      .map((l) => l.split(/ {2,}/)[3]),
    [`${uri}/status/acme`, `${uri}/status/early`],
    'list too, for every page'
  )
  const own = await runCli(['pages', 'list'], { env: { DATABASE_URL, PUBLIC_URL: 'https://status.example.net/' } })
  t.match(own.stdout, 'https://status.example.net/status/acme', "the tool's own PUBLIC_URL wins")
})
