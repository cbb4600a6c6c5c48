import t from 'tap'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { KeyAuthenticator } from '../../lib/auth.js'
import { generateKey, hashKey } from '../../lib/keys.js'
import { createKey } from '../../lib/store/keys.js'
import { engines, migratedDb } from '../helpers/db.js'
import { bearer, testServer } from '../helpers/server.js'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void
const heapAfterGc = (): number => {
  gc()
  gc()
  return process.memoryUsage().heapUsed
}

const FLOOD = 20_000

for (const engine of engines()) {
  t.test(`${FLOOD} random well-formed keys do not cost ${FLOOD} queries, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    const auth = new KeyAuthenticator({ db, defaultLimit: 60 })
    const issued = generateKey()
    await createKey({ db, name: 'real', keyHash: hashKey(issued), rateLimit: null, now: new Date() })
    let queries = 0
    db.on('query', (q: { sql: string }) => {
      if (/^select/i.test(q.sql)) queries++
    })
    let refused = 0
    let fresh = ''
    for (let sent = 0; sent < FLOOD; sent += 5000) {
      const batch = Array.from({ length: 5000 }, () =>
        auth.authenticate(`Bearer ${generateKey()}`).then(
          () => 'accepted',
          (err: unknown) => (err as { output?: { statusCode?: number } }).output?.statusCode
        )
      )
      if (sent === FLOOD / 2) {
        // A key issued in the middle of the flood works on its first request.
        fresh = generateKey()
        await createKey({ db, name: 'fresh', keyHash: hashKey(fresh), rateLimit: null, now: new Date() })
        t.match(await auth.authenticate(`Bearer ${fresh}`), { name: 'fresh' }, 'a key issued during the flood is accepted at once')
      }
      for (const outcome of await Promise.all(batch)) if (outcome === 401) refused++
    }
    t.equal(refused, FLOOD, 'every random key was refused')
    t.ok(queries < 200, `${FLOOD} random keys cost ${queries} key look-ups`)
    t.match(await auth.authenticate(`Bearer ${issued}`), { name: 'real' }, 'the real key still works')
  })
}

t.test('10,000 distinct oversized Authorization headers keep no memory alive', async (t) => {
  const { db, url } = await migratedDb('sqlite', t)
  const { server, issueKey } = await testServer({ db, env: { DATABASE_URL: url } })
  const key = await issueKey({ limit: 1_000_000 })
  const padded = (i: number) => `Bearer ${' '.repeat(16_000 + i)}${key}`
  const res = await server.inject({ url: '/api/v1/rate_limit', headers: { authorization: padded(0) } })
  t.equal(res.statusCode, 200, 'a key padded with spaces still authenticates (the header is valid)')
  t.equal(res.statusCode, (await server.inject({ url: '/api/v1/rate_limit', headers: bearer(key) })).statusCode)

  const auth = new KeyAuthenticator({ db, defaultLimit: 60 })
  await auth.authenticate(`Bearer ${key}`)
  const before = heapAfterGc()
  for (let i = 0; i < 10_000; i += 500) {
    await Promise.all(Array.from({ length: 500 }, (_, j) => auth.authenticate(padded(i + j))))
  }
  const grown = heapAfterGc() - before
  t.equal(auth.remembered, 1, 'only the canonical header is remembered')
  t.ok(grown < 20 * 1024 * 1024, `the heap grew ${(grown / 1024 / 1024).toFixed(1)} MB (10,000 headers of 16 KB are 160 MB)`)
})
