// bench/check-kinds: on-demand checks of the kinds beyond a GET against blackbox_exporter's probers
// of the same kind, in the same run, driven by wrk (bench/wrk.mjs): a `tcp` check of an open port
// against blackbox's `tcp_connect`, a `dns` check (an A record) against its `dns` prober. Each of our
// checks asks three locations, so it is worth three location probes; blackbox's /probe is one.
// Figures: location probes per second (the goal: ours >= 1.0x blackbox's), p50/p99, CPU µs
// per probe; pinned (servers on CPU 0, wrk and the targets on CPU 1) and unpinned.
//   npm run bench:kinds    (builds first; loopback only: a TCP target and a DNS server in this process)
// Knobs: BENCH_ROUNDS (5), BENCH_SECONDS (5), BENCH_CONCURRENCY (64), BENCH_PIN (unset: both modes;
// 0 or 1: that mode only), BENCH_DOCS (1: write the figures into docs/benchmarks.md).
import { execFileSync, spawn } from 'node:child_process'
import dgram from 'node:dgram'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import { join } from 'node:path'
import { createKey } from '../dist/lib/store/keys.js'
import { generateKey, hashKey } from '../dist/lib/keys.js'
import { openDb } from '../dist/lib/store/db.js'
import { migrateLatest } from '../dist/lib/store/migrate.js'
import { currentCommit, freePort, median, start, writeFigures } from './processes.mjs'
import { cpuSeconds, runWrk, setCpus, wrkVersion } from './wrk.mjs'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64)
const MODES = process.env.BENCH_PIN === undefined ? [false, true] : [process.env.BENCH_PIN === '1']
const DOCS = process.env.BENCH_DOCS !== '0'
const BLACKBOX = '/usr/bin/prometheus-blackbox-exporter'
const LOCATIONS = 3
const fmt = (n, digits = 0) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })

if (!existsSync(BLACKBOX))
  execFileSync('apt-get', ['install', '-y', '--no-install-recommends', 'prometheus-blackbox-exporter'], { stdio: 'inherit' })
const loadBefore = os.loadavg()[0]
const commit = currentCommit()
const dir = mkdtempSync(join(os.tmpdir(), 'bench-kinds-'))
const children = []
const cleanup = () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL')
  rmSync(dir, { recursive: true, force: true })
}
process.on('exit', cleanup)

// The targets live in this process, on CPU 1 when pinned: a TCP port that takes a connection and
// closes it, and a DNS server answering every A question with 127.0.0.1.
const tcp = net.createServer((s) => {
  s.on('error', () => {})
  s.end()
})
await new Promise((resolve) => tcp.listen(0, '127.0.0.1', resolve))
const tcpPort = tcp.address().port
const dns = dgram.createSocket('udp4')
dns.on('message', (msg, peer) => {
  let i = 12
  while (msg[i] !== 0 && i < msg.length) i += (msg[i] ?? 0) + 1
  const end = i + 5
  const header = Buffer.alloc(12)
  msg.copy(header, 0, 0, 2)
  header.writeUInt16BE(0x8580, 2)
  header.writeUInt16BE(1, 4)
  const isA = msg.readUInt16BE(i + 1) === 1
  header.writeUInt16BE(isA ? 1 : 0, 6)
  const answer = Buffer.from([0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4, 127, 0, 0, 1])
  dns.send(Buffer.concat([header, msg.subarray(12, end), ...(isA ? [answer] : [])]), peer.port, peer.address)
})
await new Promise((resolve) => dns.bind(0, '127.0.0.1', resolve))
const dnsServer = `127.0.0.1:${dns.address().port}`

// Our service: three local locations, the key, nothing reused (CACHE_TTL_S=0) and a new name each request.
const databaseUrl = `sqlite:${join(dir, 'bench.sqlite')}`
const db = openDb(databaseUrl)
await migrateLatest(db)
const key = generateKey()
await createKey({ db, name: 'bench', keyHash: hashKey(key), rateLimit: 100_000_000, scopes: 'check', now: new Date() })
await db.destroy()
const ours = await start('./monitor-sut.mjs', {
  DATABASE_URL: databaseUrl,
  ALLOW_PRIVATE_TARGETS: '1',
  CONNECT_TO: `:5432:127.0.0.1:${tcpPort}`,
  DNS_SERVERS: dnsServer,
  CACHE_TTL_S: '0',
  MAX_CHECKS_IN_FLIGHT: '20000',
  MAX_KEY_SHARE: '1',
  PORT: '0',
  LOG_LEVEL: 'warn'
})
children.push(ours.child)

// blackbox_exporter with a tcp_connect and a dns module, each probing the same targets.
const bbPort = await freePort()
const config = join(dir, 'blackbox.yml')
writeFileSync(
  config,
  [
    'modules:',
    '  tcp_connect:',
    '    prober: tcp',
    '    timeout: 5s',
    '  dns_a:',
    '    prober: dns',
    '    timeout: 5s',
    '    dns:',
    '      query_name: bench.test',
    '      query_type: A',
    '      valid_rcodes: [NOERROR]',
    ''
  ].join('\n')
)
const blackbox = spawn(BLACKBOX, [`--config.file=${config}`, `--web.listen-address=127.0.0.1:${bbPort}`], { stdio: 'ignore' })
children.push(blackbox)
const bbUri = `http://127.0.0.1:${bbPort}`
for (let i = 0; i < 50; i++) {
  await new Promise((r) => setTimeout(r, 100))
  const up = await fetch(`${bbUri}/-/healthy`).then(
    (r) => r.ok,
    () => false
  )
  if (up) break
}
const bbVersion = execFileSync(BLACKBOX, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).split('\n')[0]

/** wrk's Lua for our checks: a POST of `check` for a new name each request. */
const ourScript = (check) => `
local n = 0
local prefix = tostring(math.random(1, 1e9))
function request()
  n = n + 1
  return wrk.format("POST", "/api/v1/check", nil, '{"domain":"k' .. prefix .. '-' .. n .. '.bench.test","check":${JSON.stringify(check).replace(/"/g, '\\"')}}')
end`

const kinds = [
  {
    name: 'tcp',
    check: { type: 'tcp', port: 5432 },
    blackbox: `/probe?module=tcp_connect&target=127.0.0.1:${tcpPort}`,
    label: 'a `tcp` check of an open port / blackbox `tcp_connect`'
  },
  {
    name: 'dns',
    check: { type: 'dns', record: 'A' },
    blackbox: `/probe?module=dns_a&target=${dnsServer}`,
    label: 'a `dns` check (A) / blackbox `dns`'
  }
]

// One answer of each, checked before measuring: ours up at every location, blackbox's probe a success.
for (const k of kinds) {
  const res = await fetch(`${ours.uri}/api/v1/check`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ domain: 'first.bench.test', check: k.check })
  })
  const body = await res.json()
  if (res.status !== 200 || body.status !== 'up' || body.locations_answered !== LOCATIONS)
    throw new Error(`${k.name}: ${JSON.stringify(body)}`)
  const bb = await (await fetch(`${bbUri}${k.blackbox}`)).text()
  if (!/^probe_success 1$/m.test(bb)) throw new Error(`blackbox ${k.name}: ${bb.slice(0, 300)}`)
}

async function measure(pinned) {
  const cores = os.availableParallelism?.() ?? os.cpus().length
  for (const pid of [ours.child.pid, blackbox.pid]) setCpus(pid, pinned ? '0' : `0-${cores - 1}`)
  setCpus(process.pid, pinned ? '1' : `0-${cores - 1}`)
  const wrkCpu = pinned ? 1 : null
  const one = async (system, kind) => {
    const pid = system === 'ours' ? ours.child.pid : blackbox.pid
    const before = cpuSeconds(pid)
    const r =
      system === 'ours'
        ? await runWrk({
            url: ours.uri,
            connections: CONCURRENCY,
            seconds: SECONDS,
            cpu: wrkCpu,
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            script: ourScript(kind.check)
          })
        : await runWrk({ url: bbUri, paths: [kind.blackbox], connections: CONCURRENCY, seconds: SECONDS, cpu: wrkCpu })
    const probes = system === 'ours' ? LOCATIONS : 1
    const cpu = cpuSeconds(pid) - before
    return {
      probesPerS: r.rps * probes,
      p50Ms: r.p50Ms,
      p99Ms: r.p99Ms,
      cpuUs: (cpu * 1e6) / Math.max(1, r.requests * probes),
      errors: r.non2xx + r.socketErrors
    }
  }
  const rows = []
  for (const kind of kinds) {
    await one('ours', kind)
    await one('blackbox', kind)
    const runs = { ours: [], blackbox: [] }
    for (let r = 0; r < ROUNDS; r++) {
      runs.ours.push(await one('ours', kind))
      runs.blackbox.push(await one('blackbox', kind))
      const [o, b] = [runs.ours.at(-1), runs.blackbox.at(-1)]
      console.error(
        `  ${pinned ? 'pinned' : 'unpinned'} ${kind.name} round ${r + 1}: ours ${fmt(o.probesPerS)} probes/s, blackbox ${fmt(b.probesPerS)}/s (${(o.probesPerS / b.probesPerS).toFixed(2)}x)`
      )
    }
    const med = (s, f) => median(runs[s].map((x) => x[f]))
    const ratios = runs.ours.map((o, i) => o.probesPerS / runs.blackbox[i].probesPerS)
    rows.push({
      kind,
      ratio: med('ours', 'probesPerS') / med('blackbox', 'probesPerS'),
      paired: median(ratios),
      ours: {
        probesPerS: med('ours', 'probesPerS'),
        p50Ms: med('ours', 'p50Ms'),
        p99Ms: med('ours', 'p99Ms'),
        cpuUs: med('ours', 'cpuUs')
      },
      blackbox: {
        probesPerS: med('blackbox', 'probesPerS'),
        p50Ms: med('blackbox', 'p50Ms'),
        p99Ms: med('blackbox', 'p99Ms'),
        cpuUs: med('blackbox', 'cpuUs')
      },
      errors: runs.ours.reduce((a, x) => a + x.errors, 0) + runs.blackbox.reduce((a, x) => a + x.errors, 0)
    })
  }
  return rows
}

const lines = [
  `Run ${new Date().toISOString().slice(0, 16)}Z at ${commit}; ${os.cpus()[0]?.model.trim() ?? 'unknown CPU'}, ${os.availableParallelism?.() ?? os.cpus().length} cores, Node ${process.version}, wrk ${wrkVersion()}, ${bbVersion}; load average ${loadBefore.toFixed(1)} at the start. ${ROUNDS} rounds x ${SECONDS} s, ${CONCURRENCY} connections; medians; a check of ours is ${LOCATIONS} location probes.`,
  '',
  '| check | mode | ours probes/s | blackbox probes/s | ours >= 1.0x (median of the per-round ratios) | p50 / p99 ms ours, blackbox | CPU µs a probe ours, blackbox | errors |',
  '| --- | --- | --- | --- | --- | --- | --- | --- |'
]
try {
  for (const pinned of MODES) {
    for (const row of await measure(pinned)) {
      const { kind, ours: o, blackbox: b } = row
      lines.push(
        `| ${kind.label} | ${pinned ? 'pinned' : 'unpinned'} | ${fmt(o.probesPerS)} | ${fmt(b.probesPerS)} | ${row.ratio.toFixed(2)}x (${row.paired.toFixed(2)}x) ${row.ratio >= 1 ? 'met' : 'not met'} | ${fmt(o.p50Ms, 1)} / ${fmt(o.p99Ms, 1)}, ${fmt(b.p50Ms, 1)} / ${fmt(b.p99Ms, 1)} | ${fmt(o.cpuUs)}, ${fmt(b.cpuUs)} | ${row.errors} |`
      )
    }
  }
  console.log(lines.join('\n'))
  if (DOCS) writeFigures('benchmarks.md', 'bench/check-kinds', lines.join('\n'))
} finally {
  tcp.close()
  dns.close()
  cleanup()
}
