// Process plumbing shared by the benchmarks: free ports, CPU pinning, forked services, medians, the
// commit measured, a seeded random sequence and scratch MySQL databases.
import { execFileSync, fork } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'

/** A free loopback port (bound, then released). */
export async function freePort() {
  const s = createServer()
  await new Promise((resolve) => s.listen(0, '127.0.0.1', resolve))
  const { port } = s.address()
  await new Promise((resolve) => s.close(resolve))
  return port
}

/**
 * Pins a process (and the threads it starts later) to one CPU, so that the server measured and the
 * load generator do not take turns on the same core. Skipped where taskset is missing; returns
 * whether it worked.
 */
export function pin(pid, cpu) {
  try {
    execFileSync('taskset', ['-a', '-pc', String(cpu), String(pid)], { stdio: 'ignore' })
    return true
  } catch {
    console.error(`  (could not pin ${pid} to CPU ${cpu}; figures will be noisier)`)
    return false
  }
}

/**
 * Forks a module of bench/ and waits for its `{ready}` message. `BENCH_SUT_NODE_ARGS` adds Node
 * options to it (`--cpu-prof --cpu-prof-dir=/tmp/prof` profiles the service: Node 20 refuses
 * `--cpu-prof` in NODE_OPTIONS). `BENCH_SUT_STDOUT=1` passes its standard output through (for
 * `--trace-gc`).
 */
export async function start(file, env = {}, cpu = null) {
  const execArgv = [...process.execArgv, ...(process.env.BENCH_SUT_NODE_ARGS?.split(' ').filter(Boolean) ?? [])]
  const child = fork(new URL(file, import.meta.url), [], {
    env: { ...process.env, ...env },
    execArgv,
    stdio: ['ignore', process.env.BENCH_SUT_STDOUT === '1' ? 'inherit' : 'ignore', 'inherit', 'ipc']
  })
  if (cpu !== null) pin(child.pid, cpu)
  const ready = await new Promise((resolve, reject) => {
    child.once('message', (m) => resolve(m.ready))
    child.once('exit', (code) => reject(new Error(`${file} exited with ${code}`)))
  })
  return { child, uri: ready }
}

export function ask(child, message) {
  return new Promise((resolve) => {
    child.once('message', resolve)
    child.send(message)
  })
}

/** Asks a service to drain and stop, and waits until its process is gone. */
export async function stop(child) {
  if (child.exitCode !== null) return
  const gone = new Promise((resolve) => child.once('exit', resolve))
  child.send('stop')
  await gone
}

export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/**
 * Replaces one benchmark's figures in a docs page: the text between `<!-- NAME figures: begin`
 * and `<!-- NAME figures: end -->`; other sections and the prose around them are kept. A page
 * without the markers gets a `## NAME` section at its end.
 */
export function writeFigures(page, name, figures) {
  const file = new URL(`../docs/${page}`, import.meta.url)
  const begin = `<!-- ${name} figures: begin`
  const end = `<!-- ${name} figures: end -->`
  let text = existsSync(file) ? readFileSync(file, 'utf8') : `# ${page}\n`
  const a = text.indexOf(begin)
  const b = text.indexOf(end)
  if (a !== -1 && b > a) {
    const open = text.indexOf('-->', a) + 3
    text = `${text.slice(0, open)}\n${figures}\n${text.slice(b)}`
  } else {
    text = `${text.trimEnd()}\n\n## ${name}\n\n${begin} -->\n${figures}\n${end}\n`
  }
  writeFileSync(file, text)
  console.error(`${name}: figures written to docs/${page}`)
}

/** The commit measured, short (the service's code; the build is made from the working tree); `unknown` outside git. */
export function currentCommit() {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim()
  } catch {
    return 'unknown'
  }
}

/** A deterministic pseudo-random sequence in [0, 1) (xorshift32), so every run seeds the same history. */
export function seededRandom(seed) {
  let x = seed >>> 0 || 1
  return () => {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    return (x >>> 0) / 2 ** 32
  }
}

/** The MySQL server the benches use: BENCH_MYSQL_URL, else TEST_MYSQL_URL, else the machine's. */
export const BENCH_MYSQL = process.env.BENCH_MYSQL_URL ?? process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test'

/**
 * A database of the bench's own on {@link BENCH_MYSQL}, named `name` and this process's id: its URL,
 * a connection to it, and `drop()`, which closes the connection and drops the database (never throws).
 */
export async function scratchMysql(name) {
  const { openDb } = await import('../dist/lib/store/db.js')
  const dbName = `${name}_${process.pid}`
  const admin = openDb(BENCH_MYSQL)
  await admin.raw(`CREATE DATABASE \`${dbName}\``)
  const url = new URL(BENCH_MYSQL)
  url.pathname = `/${dbName}`
  const db = openDb(url.toString())
  return {
    url: url.toString(),
    db,
    drop: async () => {
      await db.destroy().catch(() => {})
      await admin.raw(`DROP DATABASE IF EXISTS \`${dbName}\``).catch(() => {})
      await admin.destroy().catch(() => {})
    }
  }
}
