import t, { type Test } from 'tap'
import http from 'node:http'
import net, { type AddressInfo } from 'node:net'
import type { Server, ServerInjectOptions, ServerInjectResponse } from '@hapi/hapi'
import { loadConfig } from '../../config/index.js'
import { Locations } from '../../lib/probing/locations/index.js'
import { SiteStates } from '../../lib/monitoring/state/site-state.js'
import { CheckSupervisor } from '../../lib/probing/supervisor.js'
import { createLogger } from '../../lib/logger.js'
import { addSite } from '../../lib/monitoring/add-sites.js'
import { migratedDb } from '../helpers/db.js'
import { bearer, testServer } from '../helpers/server.js'
import { closedPort } from '../helpers/targets.js'
import { FUZZ_SEED, fuzzCases, type FuzzCase } from '../helpers/fuzz-cases.js'
import { TEST_POOL } from '../helpers/compiled.js'

/** Requests the fuzz run sends through inject; the issue asks for at least 10,000. */
const INJECTED = 12_000
const STACK_LINE = /\n\s+at |at .+\.(ts|js):\d+|node_modules/
const SQL = /\b(select|insert into|update .+ set|delete from)\b|sqlite|mysql|knex/i

// A real check path: three direct location actors whose every dial goes to one loopback target.
const target = http.createServer((_req, res) => {
  res.writeHead(200).end('ok')
})
await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve))
const env = {
  ALLOW_PRIVATE_TARGETS: '1',
  CONNECT_TO: `:443:127.0.0.1:${await closedPort()},:80:127.0.0.1:${(target.address() as AddressInfo).port}`,
  PROBE_TIMEOUT_MS: '2000',
  LOG_LEVEL: 'warn'
}
const config = loadConfig(env)
const pools = new Locations({
  ...TEST_POOL,
  locations: config.locations,
  connectTo: config.connectTo,
  policy: { allowPrivate: true },
  timeoutMs: config.probeTimeoutMs,
  userAgent: 'fuzz-test',
  logger: createLogger({ level: 'silent' })
})
await pools.ready()
t.teardown(async () => {
  await pools.close()
  await new Promise((resolve) => target.close(resolve))
})

/** What every answer to a malformed request must look like, whatever its exact status. */
function checkShape(
  res: ServerInjectResponse | { statusCode: number; headers: Record<string, unknown>; payload: string },
  key: string
): string | null {
  if (res.statusCode >= 500) return `server error ${res.statusCode}: ${res.payload.slice(0, 200)}`
  if (res.statusCode < 400) return null
  if (!/^application\/json/.test(String(res.headers['content-type']))) return `not JSON: ${String(res.headers['content-type'])}`
  let body: unknown
  try {
    body = JSON.parse(res.payload)
  } catch {
    return `unparseable body: ${res.payload.slice(0, 100)}`
  }
  if (
    typeof body !== 'object' ||
    body === null ||
    Object.keys(body).join() !== 'error' ||
    typeof (body as { error: unknown }).error !== 'string'
  ) {
    return `body is not exactly {"error": string}: ${res.payload.slice(0, 200)}`
  }
  if (STACK_LINE.test(res.payload) || SQL.test(res.payload) || res.payload.includes(key))
    return `internals in the body: ${res.payload.slice(0, 200)}`
  if (res.statusCode === 401 && !/^Bearer/.test(String(res.headers['www-authenticate']))) return '401 without WWW-Authenticate: Bearer'
  if (res.statusCode === 405 && !res.headers.allow) return '405 without Allow'
  if (res.statusCode === 429 && !/^[1-9]\d*$/.test(String(res.headers['retry-after']))) return '429 without a positive Retry-After'
  return null
}

/**
 * The HTML pages' own answers: a page (200) or an error page (400, 404) with the pages' security
 * headers and nothing internal or injected in it; routing errors there (405, no such route) are JSON.
 */
function checkPageShape(res: ServerInjectResponse, key: string): string | null {
  if (/^application\/json/.test(String(res.headers['content-type']))) return checkShape(res, key)
  if (res.statusCode >= 500) return `server error ${res.statusCode}`
  if (!/^text\/html/.test(String(res.headers['content-type']))) return `neither HTML nor JSON: ${String(res.headers['content-type'])}`
  if (!/default-src 'none'/.test(String(res.headers['content-security-policy'])))
    return 'an HTML answer without its Content-Security-Policy'
  if (STACK_LINE.test(res.payload) || SQL.test(res.payload) || res.payload.includes(key))
    return `internals in the page: ${res.payload.slice(0, 200)}`
  if (/<script>alert/.test(res.payload)) return 'input echoed into the page unescaped'
  return null
}

async function fuzzServer(t: Test): Promise<{ server: Server; key: string; countRows: () => Promise<Record<string, number>> }> {
  const { db } = await migratedDb('sqlite', t)
  await addSite({ db, entry: { domain: 'tracked.example.com', name: 'Tracked' }, now: new Date() })
  const states = new SiteStates({ intervalMs: 60_000, publicUrl: 'http://127.0.0.1:3000' })
  await states.refresh(db, new Date())
  const checks = new CheckSupervisor({ prober: pools, cacheTtlS: 60, policy: { allowPrivate: true }, connectTo: config.connectTo })
  const { server, issueKey } = await testServer({ db, env, checks, states })
  const key = await issueKey({ limit: 10_000_000 })
  const countRows = async () => {
    const out: Record<string, number> = {}
    for (const table of ['api_keys', 'sites', 'outages']) {
      const row = await db(table).count({ n: '*' }).first()
      out[table] = Number(row?.n)
    }
    return out
  }
  return { server, key, countRows }
}

t.test(`${INJECTED} malformed requests: no 5xx, every answer JSON with the right 4xx (seed ${FUZZ_SEED})`, async (t) => {
  const { server, key, countRows } = await fuzzServer(t)
  const before = await countRows()
  const failures: string[] = []
  const byStatus = new Map<number, number>()
  const byKind = new Map<string, number>()
  let sent = 0
  for (const c of fuzzCases(INJECTED, key)) {
    const res = await server.inject(c.request)
    sent++
    byStatus.set(res.statusCode, (byStatus.get(res.statusCode) ?? 0) + 1)
    byKind.set(c.kind, (byKind.get(c.kind) ?? 0) + 1)
    const problem = (c.page ? checkPageShape(res, key) : checkShape(res, key)) ?? expectation(c, res, key)
    if (problem !== null && failures.length < 20) failures.push(`${c.kind} #${sent} ${describe(c.request)}: ${problem}`)
  }
  t.equal(sent, INJECTED, `${sent} requests sent`)
  t.same(failures, [], 'every answer was well-formed and had the expected status')
  t.notOk(
    [...byStatus.keys()].some((s) => s >= 500),
    `statuses seen: ${JSON.stringify(Object.fromEntries([...byStatus].sort()))}`
  )
  t.ok(byKind.size >= 8, `request kinds: ${JSON.stringify(Object.fromEntries(byKind))}`)

  const status = await server.inject({ url: '/api/v1/status/tracked.example.com', headers: bearer(key) })
  t.equal(status.statusCode, 200, 'a normal status request is served afterwards')
  const check = await server.inject({
    method: 'POST',
    url: '/api/v1/check',
    headers: { ...bearer(key), 'content-type': 'application/json' },
    payload: { domain: 'after.example.com' }
  })
  t.equal(check.statusCode, 200, 'and a normal check')
  t.match(JSON.parse(check.payload), { domain: 'after.example.com', status: 'up', locations_answered: 3 })
  t.same(await countRows(), before, 'nothing stored was added, lost or changed by the fuzz run')
})

function describe(r: ServerInjectOptions): string {
  const text = `${r.method ?? 'GET'} ${(typeof r.url === 'string' ? r.url : JSON.stringify(r.url)).slice(0, 80)}`
  return JSON.stringify(text)
}

/** The exact status a case asks for, when its generator knows it. */
function expectation(c: FuzzCase, res: ServerInjectResponse, key: string): string | null {
  if (c.status === undefined) return null
  const wanted = typeof c.status === 'function' ? c.status(res) : c.status
  const ok = Array.isArray(wanted) ? wanted.includes(res.statusCode) : wanted === res.statusCode
  return ok ? null : `status ${res.statusCode}, wanted ${JSON.stringify(wanted)}: ${res.payload.replaceAll(key, '<key>').slice(0, 150)}`
}

// Requests Node's own HTTP parser rejects never reach hapi; they get the same JSON errors.
const RAW: Array<[string, string, number]> = [
  ['a request line with no path', 'GET\r\n\r\n', 400],
  ['a garbage request line', 'HELLO WORLD\r\n\r\n', 400],
  ['an unknown HTTP version', 'GET / HTTP/9.9\r\nhost: x\r\n\r\n', 400],
  ['a header without a colon', 'GET /healthz HTTP/1.1\r\nhost x\r\n\r\n', 400],
  ['a NUL byte in a header', 'GET /healthz HTTP/1.1\r\nhost: x\r\nx-a: a\u0000b\r\n\r\n', 400],
  ['a space before the colon', 'GET /healthz HTTP/1.1\r\nhost : x\r\n\r\n', 400],
  ['a non-numeric Content-Length', 'POST /api/v1/check HTTP/1.1\r\nhost: x\r\ncontent-length: ten\r\n\r\n', 400],
  ['two different Content-Lengths', 'POST /api/v1/check HTTP/1.1\r\nhost: x\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\nab', 400],
  [
    'chunked framing and a length together',
    'POST /api/v1/check HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\ncontent-length: 3\r\n\r\n0\r\n\r\n',
    400
  ],
  [
    'a broken chunk size',
    'POST /api/v1/check HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
    400
  ],
  ['an oversized header', `GET /healthz HTTP/1.1\r\nhost: x\r\nx-junk: ${'a'.repeat(20_000)}\r\n\r\n`, 431],
  [
    'oversized headers in many lines',
    `GET /healthz HTTP/1.1\r\nhost: x\r\n${Array.from({ length: 400 }, (_, i) => `x-h${i}: ${'b'.repeat(60)}`).join('\r\n')}\r\n\r\n`,
    431
  ],
  [
    'an oversized Authorization header',
    `GET /api/v1/rate_limit HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${'k'.repeat(17_000)}\r\n\r\n`,
    431
  ]
]

function rawRequest(port: number, text: string): Promise<{ statusCode: number; headers: Record<string, string>; payload: string } | null> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    socket.setTimeout(5000, () => {
      socket.destroy()
      reject(new Error('no answer and no close within 5 s'))
    })
    socket.on('data', (c) => chunks.push(c))
    socket.on('error', () => {}) // a reset after the answer is fine
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1')
      if (text === '') {
        resolve(null)
        return
      }
      const [head = '', payload = ''] = text.split('\r\n\r\n', 2)
      const [statusLine = '', ...lines] = head.split('\r\n')
      const headers: Record<string, string> = {}
      for (const line of lines) {
        const i = line.indexOf(':')
        headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim()
      }
      resolve({ statusCode: Number(statusLine.split(' ')[1]), headers, payload })
    })
    socket.end(text)
  })
}

t.test('requests the HTTP parser rejects get JSON errors too, and the server keeps serving', async (t) => {
  const { server, key } = await fuzzServer(t)
  await server.start()
  t.teardown(() => server.stop())
  const port = server.info.port as number
  for (const [title, text, status] of RAW) {
    const res = await rawRequest(port, text)
    t.ok(res, `${title}: answered`)
    if (res === null) continue
    t.equal(res.statusCode, status, `${title}: ${status}`)
    t.equal(checkShape(res, key), null, `${title}: a JSON error`)
  }
  const ok = await rawRequest(port, 'GET /healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n')
  t.equal(ok?.statusCode, 200, 'a normal request on a new connection is served')
})
