import t from 'tap'
import { engines, migratedDb } from '../../helpers/db.js'
import { matchesOpenApi } from '../../helpers/openapi.js'
import { testServer } from '../../helpers/server.js'

for (const engine of engines()) {
  t.test(`healthz reports a reachable ${engine} database`, async (t) => {
    const { db, url } = await migratedDb(engine, t)
    const { server } = await testServer({ db, env: { DATABASE_URL: url } })
    const res = await server.inject({ url: '/healthz' })
    t.equal(res.statusCode, 200)
    t.same(JSON.parse(res.payload), { status: 'ok', database: 'ok' })
    t.notOk(res.headers['ratelimit-limit'], 'no key, no budget')
    matchesOpenApi(t, res)
  })
}

t.test('healthz answers 503 within about a second when the database hangs', async (t) => {
  const { db, url } = await migratedDb('sqlite', t)
  const { server } = await testServer({ db, env: { DATABASE_URL: url } })
  // Hold SQLite's only connection so the ping has to wait for it.
  let release!: () => void
  const held = db.transaction(async () => { await new Promise<void>((resolve) => { release = resolve }) })
  await new Promise((resolve) => setTimeout(resolve, 50))
  const started = Date.now()
  const res = await server.inject({ url: '/healthz' })
  const elapsed = Date.now() - started
  release()
  await held
  t.equal(res.statusCode, 503)
  matchesOpenApi(t, res)
  t.match(JSON.parse(res.payload), { error: 'database unavailable' })
  t.equal(res.headers['retry-after'], '5', 'with Retry-After, like every other 503')
  t.ok(elapsed < 2500, `answered in ${elapsed} ms`)
  t.equal((await server.inject({ url: '/healthz' })).statusCode, 200, 'and 200 again once the database is free')
})
