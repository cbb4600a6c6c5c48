// wrk as the load generator for the HTTP benchmarks. A load driver written in Node saturates
// before hapi does and pulls every ratio toward 1; wrk (C, epoll) does not.
//
//   import { runWrk } from './wrk.mjs'
//   const r = await runWrk({ url: 'http://127.0.0.1:3000', paths: ['/a', '/b'], cpu: 1 })
//   // r = { rps, p50Ms, p99Ms, non2xx, requests, seconds, socketErrors }
//
// wrk is the Debian package; `ensureWrk()` (called by runWrk) installs it with apt-get when
// /usr/bin/wrk is missing. Only loopback URLs are accepted.
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'

export const WRK = '/usr/bin/wrk'

/** Installs wrk from Debian's packages when it is missing (the benches run as root here). */
export function ensureWrk() {
  if (existsSync(WRK)) return WRK
  console.error('bench: /usr/bin/wrk is missing; installing the Debian package wrk')
  const sudo = typeof process.getuid === 'function' && process.getuid() !== 0 ? ['sudo'] : []
  const run = (args) =>
    execFileSync(sudo[0] ?? args[0], sudo.length ? args : args.slice(1), {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
    })
  run(['apt-get', 'update'])
  run(['apt-get', 'install', '-y', 'wrk'])
  if (!existsSync(WRK)) throw new Error('wrk could not be installed')
  return WRK
}

/** wrk's version line, for the figures' header. */
export function wrkVersion() {
  ensureWrk()
  try {
    execFileSync(WRK, ['--version'], { stdio: 'pipe' })
  } catch (err) {
    // wrk --version prints its banner and exits 1.
    const out = String(err.stdout ?? '')
    return /^wrk (\S+)/m.exec(out)?.[1] ?? 'unknown'
  }
  return 'unknown'
}

const lua = (s) => JSON.stringify(String(s)) // a JSON string is a valid Lua string literal for ASCII text

/**
 * The Lua given to wrk: headers, the paths requested in turn (each thread starts at a different
 * offset), the caller's own `script` if any, and a done() that prints one JSON line.
 * wrk counts answers with a status of 400 or more as errors.status (3xx are not counted): the
 * benches request URLs that answer 200, and check one answer of each before measuring.
 */
function buildScript({ method, headers, body, paths, script }) {
  const lines = []
  lines.push(`wrk.method = ${lua(method)}`)
  for (const [name, value] of Object.entries(headers)) lines.push(`wrk.headers[${lua(name)}] = ${lua(value)}`)
  if (body !== undefined) lines.push(`wrk.body = ${lua(body)}`)
  if (paths && paths.length > 0) {
    lines.push(`local paths = { ${paths.map(lua).join(', ')} }`)
    lines.push('local requests = {}')
    lines.push('local n = 0')
    lines.push('local counter = 0')
    // Formatted once per thread; request() then only hands out the next one.
    // Each thread starts at its own offset into the paths.
    lines.push('local threads = 0')
    lines.push('function setup(thread) thread:set("offset", threads * 7); threads = threads + 1 end')
    lines.push('function init(args)')
    lines.push('  for i, p in ipairs(paths) do requests[i] = wrk.format(nil, p) end')
    lines.push('  n = #requests')
    lines.push('  counter = (offset or 0) % n')
    lines.push('end')
    lines.push('function request()')
    lines.push('  counter = counter % n + 1')
    lines.push('  return requests[counter]')
    lines.push('end')
  }
  if (script) lines.push(script)
  lines.push(`
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRK_JSON {"requests":%d,"duration_us":%d,"non2xx":%d,"connect":%d,"read":%d,"write":%d,"timeout":%d,"p50_us":%d,"p99_us":%d,"mean_us":%f}\\n',
    summary.requests, summary.duration, e.status, e.connect, e.read, e.write, e.timeout,
    latency:percentile(50), latency:percentile(99), latency.mean))
end
`)
  return lines.join('\n')
}

/**
 * Runs wrk once against `url` (+ each of `paths` in turn, or `url` itself) and resolves to
 * { rps, p50Ms, p99Ms, non2xx, requests, seconds, socketErrors }.
 *   connections  open connections (keep-alive), 64 by default
 *   seconds      how long to run
 *   threads      wrk threads (1: wrk on one core keeps up with a Node server on another)
 *   cpu          pin wrk to this CPU with taskset (null: not pinned)
 *   script       extra Lua (e.g. a request() of its own); must not define setup() or done()
 *   headers      request headers; method and body for other than GET
 *   timeoutS     wrk's per-request timeout
 */
export async function runWrk({
  url,
  paths,
  connections = 64,
  seconds = 5,
  threads = 1,
  cpu = null,
  script,
  headers = {},
  method = 'GET',
  body,
  timeoutS = 5
}) {
  ensureWrk()
  const u = new URL(url)
  if (!/^127\.\d+\.\d+\.\d+$/.test(u.hostname) && u.hostname !== 'localhost' && u.hostname !== '[::1]') {
    throw new Error(`runWrk: loopback targets only, not ${u.hostname}`)
  }
  const dir = mkdtempSync(join(os.tmpdir(), 'bench-wrk-'))
  const file = join(dir, 'bench.lua')
  writeFileSync(file, buildScript({ method, headers, body, paths, script }))
  const args = ['-c', String(connections), '-t', String(threads), '-d', `${seconds}s`, '--timeout', `${timeoutS}s`, '-s', file, url]
  const [cmd, argv] = cpu === null ? [WRK, args] : ['taskset', ['-c', String(cpu), WRK, ...args]]
  try {
    const out = await new Promise((resolve, reject) => {
      const child = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'] })
      let stdout = ''
      let stderr = ''
      child.stdout.on('data', (d) => {
        stdout += d
      })
      child.stderr.on('data', (d) => {
        stderr += d
      })
      // wrk ends by itself after `seconds`; this only guards against a wedged process.
      const guard = setTimeout(() => child.kill('SIGKILL'), (seconds + timeoutS + 30) * 1000)
      child.once('error', (err) => {
        clearTimeout(guard)
        reject(err)
      })
      child.once('close', (code) => {
        clearTimeout(guard)
        if (code === 0) resolve(stdout)
        else reject(new Error(`wrk exited with ${code}: ${stderr.trim() || stdout.trim()}`))
      })
    })
    const line = /^WRK_JSON (.*)$/m.exec(out)
    if (!line) throw new Error(`wrk printed no summary:\n${out}`)
    const r = JSON.parse(line[1])
    const secondsRun = r.duration_us / 1e6
    return {
      rps: r.requests / secondsRun,
      p50Ms: r.p50_us / 1000,
      p99Ms: r.p99_us / 1000,
      non2xx: r.non2xx,
      requests: r.requests,
      seconds: secondsRun,
      socketErrors: r.connect + r.read + r.write + r.timeout
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const TICKS_PER_S = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100
  } catch {
    return 100
  }
})()
/** CPU seconds a process (all its threads) has used so far. */
export function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
    .replace(/^.*\) /s, '')
    .split(' ')
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_S
}

/** Sets the CPUs a process and all its threads may run on (taskset); returns whether it worked. */
export function setCpus(pid, cpus) {
  try {
    execFileSync('taskset', ['-a', '-pc', String(cpus), String(pid)], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

const middle = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/**
 * Drives several servers in turn with wrk, in the same run: one unmeasured warm-up round each,
 * then `rounds` rounds, each running every system back to back. Pinned: every server on CPU 0
 * (they take turns, so the one measured has it to itself) and wrk on CPU 1; unpinned: servers
 * and wrk free to use every core. Each system: { name, uri, pid, headers }; `script` is wrk Lua of
 * the caller's own (with no `paths`, it may define init() and request() to vary each request).
 * Resolves to { pinned, systems: [{ name, rps[], p50Ms[], p99Ms[], cpuUs[], non2xx, socketErrors,
 * median: { rps, p50Ms, p99Ms, cpuUs } }], perRound: [[rps of each system] per round] }.
 */
export async function compareServers({ systems, paths, script, pinned, rounds = 5, seconds = 5, connections = 64, log = console.error }) {
  const cores = os.availableParallelism?.() ?? os.cpus().length
  let pinnedOk = pinned
  for (const s of systems) {
    const ok = setCpus(s.pid, pinned ? '0' : `0-${cores - 1}`)
    if (pinned && !ok) pinnedOk = false
  }
  const wrkCpu = pinned && pinnedOk ? 1 : null
  const one = async (s) => {
    const before = cpuSeconds(s.pid)
    const r = await runWrk({ url: s.uri, paths, script, connections, seconds, cpu: wrkCpu, headers: s.headers ?? {} })
    return { ...r, cpuUs: ((cpuSeconds(s.pid) - before) * 1e6) / Math.max(1, r.requests) }
  }
  for (const s of systems) await one(s)
  const out = systems.map((s) => ({ name: s.name, rps: [], p50Ms: [], p99Ms: [], cpuUs: [], non2xx: 0, socketErrors: 0 }))
  const perRound = []
  for (let r = 0; r < rounds; r++) {
    const row = []
    for (const [i, s] of systems.entries()) {
      const m = await one(s)
      const o = out[i]
      o.rps.push(m.rps)
      o.p50Ms.push(m.p50Ms)
      o.p99Ms.push(m.p99Ms)
      o.cpuUs.push(m.cpuUs)
      o.non2xx += m.non2xx
      o.socketErrors += m.socketErrors
      row.push(m.rps)
    }
    perRound.push(row)
    log(
      `  ${pinned ? 'pinned' : 'unpinned'} round ${r + 1}: ${systems.map((s, i) => `${s.name} ${row[i].toFixed(0)}/s (${out[i].cpuUs[r].toFixed(1)} CPU µs each, p99 ${out[i].p99Ms[r].toFixed(1)} ms)`).join(', ')}`
    )
  }
  for (const o of out) o.median = { rps: middle(o.rps), p50Ms: middle(o.p50Ms), p99Ms: middle(o.p99Ms), cpuUs: middle(o.cpuUs) }
  return { pinned: pinnedOk, systems: out, perRound }
}
