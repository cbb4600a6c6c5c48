import t from 'tap'
import http from 'node:http'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { generateKey, hashKey } from '../../../lib/keys.js'
import { outageEvent } from '../../../lib/rules/events.js'
import { openDb } from '../../../lib/store/db.js'
import { appendEvents } from '../../../lib/store/events.js'
import { createKey } from '../../../lib/store/keys.js'
import { migrateLatest } from '../../../lib/store/migrate.js'
import { startServe } from '../../helpers/cli.js'
import { holds } from '../../helpers/poll.js'

type Json = Record<string, any>

/**
 * A Slack-like receiver whose first request is held unanswered (the sender dies meanwhile); every
 * later one is answered 200. `requests` lists each request's title and what became of it.
 */
async function holdingReceiver(t: { teardown(fn: () => unknown): void }) {
  const requests: Array<{ title: string; answered: boolean }> = []
  const waiting: Array<() => void> = []
  const server = http.createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8').on('data', (c: string) => (body += c))
    req.on('end', () => {
      const entry = { title: String((JSON.parse(body) as Json).blocks[0].text.text), answered: false }
      requests.push(entry)
      if (requests.length > 1) {
        res.writeHead(200).end('ok')
        entry.answered = true
      }
      for (const wake of waiting.splice(0)) wake()
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => {
    server.closeAllConnections()
    server.close()
  })
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    requests,
    /** Resolves once `n` requests have come. */
    until: async (n: number) => {
      while (requests.length < n) await new Promise<void>((resolve) => waiting.push(resolve))
    }
  }
}

t.test('kill -9 of the instance sending a message: delivered exactly once after the restart (two real serve processes)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'site-status-alert-restart-'))
  t.teardown(() => {
    rmSync(dir, { recursive: true, force: true })
  })
  const url = `sqlite:${join(dir, 'db.sqlite')}`
  const env = {
    DATABASE_URL: url,
    INSTANCE_ID: 'alerts-1',
    WEBHOOK_KEY: randomBytes(32).toString('base64'),
    ALLOW_PRIVATE_TARGETS: '1',
    LOCATIONS: '[{"label":"Loopback 1, Test"}]',
    LOG_LEVEL: 'info'
  }
  const db = openDb(url)
  t.teardown(() => db.destroy())
  await migrateLatest(db)
  const key = generateKey()
  await createKey({ db, name: 'ops', keyHash: hashKey(key), rateLimit: null, scopes: 'manage', now: new Date() })
  const hook = await holdingReceiver(t)

  const first = await startServe(t, { env, cwd: dir })
  const api = async (uri: string, path: string, body: unknown): Promise<Json> => {
    const res = await fetch(`${uri}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body)
    })
    t.equal(res.status, 201, `POST ${path}`)
    return (await res.json()) as Json
  }
  const channel = await api(first.uri, '/api/v1/channels', { name: 'chat', kind: 'slack', config: { url: hook.url } })
  t.same(channel.secret_fields, ['url'], 'the URL is a secret, not shown back')
  t.notOk(JSON.stringify(channel).includes(hook.url), 'nowhere in the answer')
  await api(first.uri, '/api/v1/alert-policies', { name: 'all', channels: [channel.id], group_window_s: 0, default: true })

  // An outage of a monitor, committed to the outbox as the recorder would (site id 7 needs no row: the default policy takes it).
  const append = async (kind: 'open' | 'close', at: Date, started: Date): Promise<void> => {
    const e = outageEvent(
      kind,
      { id: 7, domain: 'held.example.com', name: 'held.example.com' },
      { started_at: started, ended_at: kind === 'close' ? at : null },
      at
    )
    await db.transaction((trx) => appendEvents({ db: trx, events: [{ type: e.type, siteId: 7, data: JSON.stringify(e.data), at }] }))
  }
  const started = new Date()
  await append('open', started, started)
  await hook.until(1)
  t.equal(hook.requests[0]?.answered, false, 'the first attempt is held by the receiver')
  const gone = once(first.child, 'exit')
  first.child.kill('SIGKILL')
  await gone
  const [claimed] = await db('alert_messages').select('status', 'attempts', 'claimed_by')
  t.match(
    claimed,
    { status: 'pending', attempts: 0, claimed_by: /^alerts-1:/ },
    'killed mid-send: still pending, claimed by the dead instance'
  )

  // The same instance comes back: it frees what its earlier life held and sends it again.
  await startServe(t, { env, cwd: dir })
  await hook.until(2)
  await append('close', new Date(), started)
  await hook.until(3)
  t.same(
    hook.requests.map((r) => `${r.answered ? 'answered' : 'held'}: ${r.title}`),
    ['held: DOWN: held.example.com, for 0 s', 'answered: DOWN: held.example.com, for 0 s', `answered: ${hook.requests[2]?.title ?? ''}`],
    'delivered once after the restart; the resolution after it (a channel sends in order, so nothing came twice)'
  )
  t.match(hook.requests[2]?.title, /^RESOLVED: held\.example\.com is up again after \d+ s$/)
  // The receiver has the message before its sender records it: wait for the record, not the request.
  const recorded = () => db('alert_messages').orderBy('id').select('status', 'attempts')
  await holds(async () => (await recorded()).every((m: { status: string }) => m.status === 'delivered'), 10_000)
  const log = await recorded()
  t.same(log, [
    { status: 'delivered', attempts: 1 },
    { status: 'delivered', attempts: 1 }
  ])
})
