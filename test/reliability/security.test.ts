import t from 'tap'
import { createHash } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { loadConfig } from '../../config/index.js'
import { LocationPools } from '../../lib/checks/location-pool.js'
import { CheckSupervisor, type Prober } from '../../lib/checks/supervisor.js'
import { createLogger } from '../../lib/logger.js'
import { migratedDb } from '../helpers/db.js'
import { runCli, lines } from '../helpers/cli.js'
import { bearer, LogCapture, testServer } from '../helpers/server.js'
import { findSecrets, readSuiteLog } from '../helpers/suite-log.js'
import { closedPort, startProxy } from '../helpers/targets.js'

const REFUSED = { error: 'domain resolves to a non-public address' }
const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex')

/** Non-public destinations as they appear in a URL's host (decisions.md, Check endpoint). */
const NON_PUBLIC_HOSTS = ['127.0.0.1', '10.1.2.3', '172.16.0.1', '172.31.255.254', '192.168.1.1', '169.254.169.254', '100.64.0.1',
  '0.0.0.0', '224.0.0.1', '255.255.255.255', '[::1]', '[::]', '[fc00::1]', '[fd00:ec2::254]', '[fe80::1]', '[::ffff:127.0.0.1]',
  '[::ffff:a9fe:a9fe]', '[64:ff9b::a00:1]', '[2002:7f00:1::]', 'localhost']

t.test('keys are stored as SHA-256 digests only, whoever created them', async (t) => {
  const { db, url } = await migratedDb('sqlite', t)
  const env = { DATABASE_URL: url }
  const created = await runCli(['keys', 'create', '--name', 'operator'], { env })
  const cliKey = lines(created.stdout).pop() ?? ''
  const { issueKey } = await testServer({ db, env })
  const testKey = await issueKey({ name: 'issued' })
  const rows = await db('api_keys').select('*').orderBy('id')
  t.same(rows.map((r) => r.key_hash), [sha256(cliKey), sha256(testKey)], 'each row holds the digest of its key')
  const stored = JSON.stringify(rows)
  for (const key of [cliKey, testKey]) {
    t.notOk(stored.includes(key), 'the key is nowhere in the table')
    t.notOk(stored.includes(key.slice(4)), 'nor its random part')
  }
})

t.test('the suite-wide log check sees every logged line and recognises leaks', async (t) => {
  const logs = new LogCapture()
  const logger = createLogger({ level: 'info', stream: logs })
  const canary = `canary ${process.pid} ${Date.now()}`
  logger.info({ probe: 'suite-log' }, canary)
  t.ok(readSuiteLog().some(({ line }) => line.includes(canary)), 'a line logged in a test reaches the suite log the after hook reads')
  const key = `ssk_${'x'.repeat(43)}`
  const leaking = [`{"msg":"${key}"}`, '{"req":{"headers":{"Authorization":"x"}}}', '{"msg":"Bearer abc.def"}']
  t.equal(findSecrets(leaking.map((line) => ({ file: 'f', line }))).length, 3, 'a key, an Authorization header and a bearer token are all caught')
  t.equal(findSecrets([{ file: 'f', line: '{"msg":"request failed","err":{"code":"E"}}' }]).length, 0, 'a clean line is not')
})

t.test('a server that saw keys in every position logs none of them', async (t) => {
  const { db } = await migratedDb('sqlite', t)
  const { server, issueKey, logs } = await testServer({ db, env: { LOG_LEVEL: 'trace' } })
  const key = await issueKey()
  const revoked = await issueKey()
  await db('api_keys').where({ key_hash: sha256(revoked) }).update({ revoked_at: new Date() })
  const requests = [
    { url: '/api/v1/rate_limit', headers: bearer(key) },
    { url: '/api/v1/rate_limit', headers: bearer(revoked) },
    { url: `/api/v1/rate_limit?key=${key}`, headers: { authorization: `Basic ${key}` } },
    { url: `/api/v1/nothing/${key}`, headers: bearer(key) },
    { url: '/api/v1/outages?limit=abc', headers: { ...bearer(key), 'x-api-key': key, cookie: `k=${key}` } },
    { method: 'POST', url: '/api/v1/rate_limit', headers: bearer(key), payload: { key } }
  ]
  for (const r of requests) await server.inject(r)
  t.ok(logs.lines.length >= requests.length, `${logs.lines.length} lines logged at trace level`)
  const text = logs.lines.join('\n')
  t.notOk(text.includes(key.slice(4)), 'no key anywhere, not even in a logged path or query')
  t.notOk(text.includes(revoked.slice(4)), 'nor the revoked one')
  t.notMatch(text, /authorization|bearer|cookie|x-api-key/i, 'no credential header names or values')
})

t.test('the target policy table holds through redirects and through CONNECT_TO', async (t) => {
  // The checked site lives on 127.0.0.2, the one range the policy opens; every redirect it gives
  // points at one of the table's addresses, which no location may then fetch.
  const hits: string[] = []
  const site = http.createServer((req, res) => {
    hits.push(`${req.headers.host}${req.url}`)
    const n = Number(/^r(\d+)\./.exec(req.headers.host ?? '')?.[1])
    res.writeHead(302, { location: `http://${NON_PUBLIC_HOSTS[n] ?? 'nowhere.invalid'}/` }).end()
  })
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.2', resolve))
  const proxies = await Promise.all([startProxy(), startProxy()])
  t.teardown(async () => {
    await new Promise((resolve) => site.close(resolve))
    for (const p of proxies) await p.close()
  })
  const port = (site.address() as AddressInfo).port
  const closed = await closedPort()
  const rules = NON_PUBLIC_HOSTS.map((_, i) => `r${i}.site.test:443:127.0.0.2:${closed},r${i}.site.test:80:127.0.0.2:${port}`)
  const locations = [{ label: 'Direct 1, Testland' }, ...proxies.map((p, i) => ({ label: `Proxy ${i + 1}, Testland`, proxy: `http://127.0.0.1:${p.port}` }))]
  const env = { ALLOW_PRIVATE_TARGETS: '127.0.0.2/32', CONNECT_TO: rules.join(','), LOCATIONS: JSON.stringify(locations), PROBE_TIMEOUT_MS: '3000', CACHE_TTL_S: '0' }
  const config = loadConfig(env)
  const pools = new LocationPools({
    locations: config.locations,
    connectTo: config.connectTo,
    allowPrivate: false,
    allowRanges: config.allowedTargetRanges,
    timeoutMs: config.probeTimeoutMs,
    userAgent: 'security-test',
    logger: createLogger({ level: 'silent' })
  })
  t.teardown(() => pools.close())
  await pools.ready()
  const { db } = await migratedDb('sqlite', t)

  const serve = async (connectTo: typeof config.connectTo, lookup?: (host: string) => Promise<string[]>) => {
    let probes = 0
    const prober: Prober = { probeAll: (domain) => { probes++; return pools.probeAll(domain) } }
    const checks = new CheckSupervisor({ prober, cacheTtlS: 0, allowPrivate: false, allowRanges: config.allowedTargetRanges, connectTo, lookup })
    const { server, issueKey } = await testServer({ db, env, checks })
    const key = await issueKey({ limit: 1_000_000 })
    const check = async (domain: string) => {
      const res = await server.inject({ method: 'POST', url: '/api/v1/check', headers: { ...bearer(key), 'content-type': 'application/json' }, payload: { domain } })
      return { status: res.statusCode, body: JSON.parse(res.payload) }
    }
    return { check, probes: () => probes }
  }

  const viaRedirects = await serve(config.connectTo)
  for (const [i, host] of NON_PUBLIC_HOSTS.entries()) {
    t.same(await viaRedirects.check(`r${i}.site.test`), { status: 400, body: REFUSED }, `a redirect to ${host} is refused by every location`)
  }
  t.equal(viaRedirects.probes(), NON_PUBLIC_HOSTS.length, 'each first hop was allowed and fetched')
  t.equal(hits.length, NON_PUBLIC_HOSTS.length * locations.length, 'by each location, and nothing beyond it')

  const publicLooking = async (host: string) => host === 'public-looking.example.com' ? ['93.184.215.14'] : ['127.0.0.1']
  for (const host of NON_PUBLIC_HOSTS) {
    const { check, probes } = await serve(loadConfig({ CONNECT_TO: `:443:${host}:${port},:80:${host}:${port}` }).connectTo, publicLooking)
    t.same(await check('public-looking.example.com'), { status: 400, body: REFUSED }, `a public name sent to ${host} by CONNECT_TO is refused`)
    t.equal(probes(), 0, 'before any location dials it')
  }
})
