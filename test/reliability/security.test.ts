import t from 'tap'
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { lookup as dnsLookup } from 'node:dns/promises'
import { once } from 'node:events'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../../config/index.js'
import { createProbing } from '../../lib/probing/build.js'
import type { Locations } from '../../lib/probing/locations/index.js'
import { createLogger } from '../../lib/logger.js'
import { migratedDb } from '../helpers/db.js'
import { cliEnv, lines, ROOT, runCli, startServe } from '../helpers/cli.js'
import { NON_PUBLIC_ADDRESSES, NON_PUBLIC_NAMES, urlHost, V4_SPELLINGS } from '../helpers/address-table.js'
import { bearer, LogCapture, testServer } from '../helpers/server.js'
import { findSecrets, readSuiteLog, recordOutputOf } from '../helpers/suite-log.js'
import { closedPort, startProxy } from '../helpers/targets.js'
import { TEST_ACTORS } from '../helpers/compiled.js'

const REFUSED = { error: 'domain resolves to a non-public address' }
const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex')

/**
 * Every non-public destination of the policy's table (test/helpers/address-table.ts), as the host of
 * a redirect's Location and as a CONNECT_TO destination, with the other spellings of v4 addresses.
 */
const DESTINATIONS: ReadonlyArray<{ host: string; why: string }> = [
  ...NON_PUBLIC_ADDRESSES.map(([ip, why]) => ({ host: ip, why })),
  ...NON_PUBLIC_NAMES.map((name) => ({ host: name, why: 'a name for loopback' })),
  ...V4_SPELLINGS.map(([spelling, why]) => ({ host: spelling, why }))
]

t.test('keys are stored as SHA-256 digests only, whoever created them', async (t) => {
  const { db, url } = await migratedDb('sqlite', t)
  const env = { DATABASE_URL: url }
  const created = await runCli(['keys', 'create', '--name', 'operator'], { env })
  const cliKey = lines(created.stdout).pop() ?? ''
  const { issueKey } = await testServer({ db, env })
  const testKey = await issueKey({ name: 'issued' })
  const rows = await db('api_keys').select('*').orderBy('id')
  t.same(
    rows.map((r) => r.key_hash),
    [sha256(cliKey), sha256(testKey)],
    'each row holds the digest of its key'
  )
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
  t.ok(
    readSuiteLog().some(({ line }) => line.includes(canary)),
    'a line logged in a test reaches the suite log the after hook reads'
  )
  const key = `ssk_${'x'.repeat(43)}`
  const secret = `whsec_${Buffer.alloc(32, 1).toString('base64')}`
  const leaking = [`{"msg":"${key}"}`, '{"req":{"headers":{"Authorization":"x"}}}', '{"msg":"Bearer abc.def"}', `{"secret":"${secret}"}`]
  t.equal(
    findSecrets(leaking.map((line) => ({ file: 'f', line }))).length,
    4,
    'a key, an Authorization header, a bearer token and a webhook secret are all caught'
  )
  t.equal(findSecrets([{ file: 'f', line: '{"msg":"request failed","err":{"code":"E"}}' }]).length, 0, 'a clean line is not')
})

/** The lines this test process added to the suite log. */
const ownSuiteLog = (): string[] =>
  readSuiteLog()
    .filter(({ file }) => file === `${process.pid}.log`)
    .map(({ line }) => line)

t.test('every line a spawned server writes reaches the suite log', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'site-status-suite-log-'))
  t.teardown(() => {
    rmSync(dir, { recursive: true, force: true })
  })
  // The build, as `npm start` runs it (see test/lib/main.test.ts).
  const { child, uri } = await startServe(t, {
    script: 'dist/lib/cli/index.js',
    cwd: dir,
    env: { HOST: '127.0.0.1', DATABASE_URL: `sqlite:${join(dir, 'db.sqlite')}`, LOG_LEVEL: 'info' }
  })
  const canary = `canary-${process.pid}-${Date.now()}`
  const res = await fetch(`${uri}/${canary}`)
  await res.text()
  const closed = once(child, 'close')
  child.kill('SIGTERM')
  await closed
  const logged = ownSuiteLog()
  t.ok(
    logged.some((l) => l.includes('"msg":"listening"')),
    'its start'
  )
  t.ok(
    logged.some((l) => l.includes(canary) && l.includes('[response]')),
    'the line of a request it answered'
  )
  t.ok(
    logged.some((l) => l.includes('"msg":"stopped"')),
    'and its last line, written as it exited'
  )

  // stderr too, whatever the lines look like, a last line without its newline included.
  const canary2 = `stderr-${process.pid}-${Date.now()}`
  const noisy = spawn(process.execPath, ['-e', `process.stderr.write('not json ${canary2} 1\\nnot json ${canary2} 2')`], {
    stdio: ['ignore', 'pipe', 'pipe']
  })
  recordOutputOf(noisy.stdout)
  recordOutputOf(noisy.stderr)
  await once(noisy, 'close')
  t.same(
    ownSuiteLog().filter((l) => l.includes(canary2)),
    [`not json ${canary2} 1`, `not json ${canary2} 2`],
    'every stderr line, as written'
  )
})

t.test('the after hook fails the run when any line of the suite log carries a secret', async (t) => {
  const runHook = async (logLines: string[]) => {
    const dir = mkdtempSync(join(tmpdir(), 'site-status-hook-'))
    t.teardown(() => {
      rmSync(dir, { recursive: true, force: true })
    })
    writeFileSync(join(dir, '4242.log'), logLines.map((l) => `${l}\n`).join(''))
    // The hook as tap runs it, through the same loader, on a log of planted lines.
    const hook = spawn(process.execPath, [...process.execArgv, join(ROOT, 'test/hooks/after.ts')], {
      cwd: ROOT,
      env: cliEnv({ SUITE_LOG_DIR: dir }),
      stdio: ['ignore', 'pipe', 'pipe']
    })
    let out = ''
    hook.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d
    })
    hook.stderr.setEncoding('utf8').on('data', (d: string) => {
      out += d
    })
    const [code] = (await once(hook, 'close')) as [number | null]
    return { code, out }
  }
  const clean = ['{"level":30,"msg":"listening"}', '{"level":30,"msg":"[response] get /api/v1/status/x 200"}', 'a stderr line']
  const planted = `{"level":30,"msg":"[response] get /api/v1/x?k=ssk_${'Q'.repeat(43)} 200"}`
  const ok = await runHook(clean)
  t.equal(ok.code, 0, 'a clean log passes')
  t.match(ok.out, /3 log lines from 1 test processes checked; none carries/, 'and every line was read')
  const leaked = await runHook([...clean, planted])
  t.equal(leaked.code, 1, 'one planted key among them fails the run')
  t.match(leaked.out, /1 of 4 log lines carry a key/, 'and the hook says which')
  const header = await runHook([...clean, '{"level":20,"req":{"headers":{"authorization":"Basic eDp5"}}}'])
  t.equal(header.code, 1, 'so does an Authorization header')
})

t.test('a server that saw keys in every position logs none of them', async (t) => {
  const { db } = await migratedDb('sqlite', t)
  const { server, issueKey, logs } = await testServer({ db, env: { LOG_LEVEL: 'trace' } })
  const key = await issueKey()
  const revoked = await issueKey()
  await db('api_keys')
    .where({ key_hash: sha256(revoked) })
    .update({ revoked_at: new Date() })
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
    const to = DESTINATIONS[n]
    res.writeHead(302, { location: `http://${to ? urlHost(to.host) : 'nowhere.invalid'}/` }).end()
  })
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.2', resolve))
  const proxies = await Promise.all([startProxy(), startProxy()])
  t.teardown(async () => {
    await new Promise((resolve) => site.close(resolve))
    for (const p of proxies) await p.close()
  })
  const port = (site.address() as AddressInfo).port
  const closed = await closedPort()
  const rules = DESTINATIONS.map((_, i) => `r${i}.site.test:443:127.0.0.2:${closed},r${i}.site.test:80:127.0.0.2:${port}`)
  const locations = [
    { label: 'Direct 1, Testland' },
    ...proxies.map((p, i) => ({ label: `Proxy ${i + 1}, Testland`, proxy: `http://127.0.0.1:${p.port}` }))
  ]
  const env = {
    ALLOW_PRIVATE_TARGETS: '127.0.0.2/32',
    CONNECT_TO: rules.join(','),
    LOCATIONS: JSON.stringify(locations),
    PROBE_TIMEOUT_MS: '3000',
    CACHE_TTL_S: '0'
  }
  const config = loadConfig(env)
  const logger = createLogger({ level: 'silent' })
  const { locations: pools } = createProbing(config, { logger, userAgent: 'security-test', ...TEST_ACTORS })
  t.teardown(() => pools.close())
  await pools.ready()
  const { db } = await migratedDb('sqlite', t)

  /** A check path on the same actors, its supervisor judging by `CONNECT_TO` (and `lookup`) instead. */
  const serve = async (connectTo: string, lookup?: (host: string) => Promise<string[]>) => {
    let probes = 0
    const counted = (actors: Locations) => ({
      probeAll: (domain: string) => {
        probes++
        return actors.probeAll(domain)
      }
    })
    const { checks } = createProbing(loadConfig({ ...env, CONNECT_TO: connectTo }), { logger, lookup, locations: pools, prober: counted })
    const { server, issueKey } = await testServer({ db, env, checks })
    const key = await issueKey({ limit: 1_000_000 })
    const check = async (domain: string) => {
      const res = await server.inject({
        method: 'POST',
        url: '/api/v1/check',
        headers: { ...bearer(key), 'content-type': 'application/json' },
        payload: { domain }
      })
      return { status: res.statusCode, body: JSON.parse(res.payload) }
    }
    return { check, probes: () => probes }
  }

  const viaRedirects = await serve(env.CONNECT_TO)
  for (const [i, { host, why }] of DESTINATIONS.entries()) {
    const location = `http://${urlHost(host)}/`
    const answer = await viaRedirects.check(`r${i}.site.test`)
    if (URL.canParse(location)) {
      t.same(answer, { status: 400, body: REFUSED }, `a redirect to ${location} (${why}) is refused by every location`)
    } else {
      // No URL parser takes a zone, so no location can follow it: each reports the redirect itself.
      t.match(
        answer,
        { status: 200, body: { locations: locations.map(() => ({ http_code: 302, final_url: `http://r${i}.site.test/` })) } },
        `a redirect to ${location} (${why}), which is no URL, is not followed by any location`
      )
    }
  }
  t.equal(viaRedirects.probes(), DESTINATIONS.length, 'each first hop was allowed and fetched')
  t.equal(hits.length, DESTINATIONS.length * locations.length, 'by each location, and nothing beyond it')

  // The name checked resolves publicly; every other name (the destinations) through the system
  // resolver, which reads 2130706433 or 0x7f.0.0.1 as an address the way a dial would.
  const publicLooking = async (host: string) =>
    host === 'public-looking.example.com' ? ['93.184.215.14'] : (await dnsLookup(host, { all: true, verbatim: true })).map((a) => a.address)
  for (const { host, why } of DESTINATIONS) {
    const dest = host.includes(':') ? `[${host}]` : host
    const connectTo = `:443:${dest}:${port},:80:${dest}:${port}`
    if (host.includes('%')) {
      t.throws(() => loadConfig({ CONNECT_TO: connectTo }), { name: 'ConfigError' }, `CONNECT_TO to ${dest} (${why}) stops the start`)
      continue
    }
    const { check, probes } = await serve(connectTo, publicLooking)
    t.same(
      await check('public-looking.example.com'),
      { status: 400, body: REFUSED },
      `a public name sent to ${dest} (${why}) by CONNECT_TO is refused`
    )
    t.equal(probes(), 0, 'before any location dials it')
  }
})
