import { once } from 'node:events'
import net from 'node:net'
import t, { type Test } from 'tap'
import { SERVER_TIMEOUTS } from '../../lib/server.js'
import { migratedDb } from '../helpers/db.js'
import { bearer, testServer } from '../helpers/server.js'

// Slow clients hold connections: the server's header, request and keep-alive timeouts let go of
// them. The timeouts are shortened here; the service's own are in SERVER_TIMEOUTS.
const timeouts = { headersMs: 400, requestMs: 800, keepAliveMs: 400, checkEveryMs: 100 }

t.test("the service sets its own timeouts, tighter than Node's defaults", async (t) => {
  t.ok(SERVER_TIMEOUTS.headersMs <= 10_000, 'headers within 10 s (Node: 60 s)')
  t.ok(SERVER_TIMEOUTS.requestMs <= 30_000, 'a whole request within 30 s (Node: 5 min)')
  t.ok(SERVER_TIMEOUTS.checkEveryMs <= 1000, 'checked every second (Node: 30 s)')
  t.ok(SERVER_TIMEOUTS.keepAliveMs >= 5000 && SERVER_TIMEOUTS.keepAliveMs <= 10_000, 'idle keep-alive connections kept 5-10 s')
})

async function started(t: Test) {
  const { db, url } = await migratedDb('sqlite', t)
  const s = await testServer({ db, env: { DATABASE_URL: url }, timeouts })
  await s.server.start()
  t.teardown(() => s.server.stop({ timeout: 100 }))
  return { ...s, port: s.server.info.port as number }
}

/** Connects, writes `text`, and resolves with everything the server sent once it closed the connection. */
async function hold(port: number, text: string): Promise<string> {
  const socket = net.connect({ host: '127.0.0.1', port })
  await once(socket, 'connect')
  let reply = ''
  socket.setEncoding('utf8').on('data', (d: string) => {
    reply += d
  })
  socket.on('error', () => {})
  socket.write(text)
  await once(socket, 'close')
  return reply
}

t.test('headers that never end (slowloris) are cut with a JSON 408', async (t) => {
  const { port } = await started(t)
  const reply = await hold(port, 'GET /healthz HTTP/1.1\r\nhost: x\r\nx-slow: 1\r\n')
  t.match(reply, /^HTTP\/1\.1 408 /, 'a 408 before the connection is closed')
  t.match(reply, /\{"error":"request (headers )?timed out"\}/)
})

t.test('a body that never arrives in full is cut with a JSON 408', async (t) => {
  const { port, issueKey } = await started(t)
  const key = await issueKey()
  const reply = await hold(
    port,
    `POST /api/v1/check HTTP/1.1\r\nhost: x\r\nauthorization: ${bearer(key).authorization}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"domain":`
  )
  t.match(reply, /^HTTP\/1\.1 408 /)
})

t.test('an idle keep-alive connection is closed', async (t) => {
  const { port } = await started(t)
  const reply = await hold(port, 'GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n')
  t.match(reply, /^HTTP\/1\.1 200 /, 'its request was answered, then the idle connection closed')
  t.match(reply, /x-content-type-options: nosniff/i, 'JSON answers say not to sniff them')
})
