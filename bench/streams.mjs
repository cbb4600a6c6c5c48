// Event streams alone: the memory and CPU that N open `GET /api/v1/events` streams cost the service
// while events arrive. The real service (startService from dist/, SQLite, no tracked sites) runs in
// this process; the clients run in a child process of their own, so that their sockets and parsers
// are not counted. Events are appended to the outbox directly (`BENCH_EVENT_RATE` a second, each
// about the size of an outage event) and announced, as the recorder does after a commit.
// Reported: RSS and heap after the streams opened, and over the run (lowest to highest, sampled
// every second), the frames the clients got, and the service's CPU.
//
//   npm run build && node bench/streams.mjs
//   BENCH_STREAMS=1000 BENCH_EVENT_RATE=2 BENCH_RUN_S=90 node bench/streams.mjs
import { fork } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadConfig } from '../dist/config/index.js'
import { createLogger } from '../dist/lib/logger.js'
import { startService } from '../dist/lib/main.js'
import { generateKey, hashKey } from '../dist/lib/keys.js'
import { createKey } from '../dist/lib/store/keys.js'
import { appendToOutbox, announced } from '../dist/lib/events/outbox.js'

const STREAMS = Number(process.env.BENCH_STREAMS ?? 1000)
const RATE = Number(process.env.BENCH_EVENT_RATE ?? 2)
const RUN_S = Number(process.env.BENCH_RUN_S ?? 90)
// Outages of many sites open together (bench/monitor fails 100 sites at once): a burst of events
// in one transaction every BENCH_BURST_EVERY_S seconds.
const BURST = Number(process.env.BENCH_BURST ?? 100)
const BURST_EVERY_S = Number(process.env.BENCH_BURST_EVERY_S ?? 15)

if (process.argv[2] === 'client') {
  // The client side: opens the streams and counts frames.
  const http = await import('node:http')
  const { uri, keys } = JSON.parse(process.argv[3])
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity })
  let frames = 0
  let open = 0
  let ended = 0
  for (let i = 0; i < keys.length * 10; i++) {
    await new Promise((resolve, reject) => {
      const req = http.get(`${uri}/api/v1/events`, { agent, headers: { authorization: `Bearer ${keys[Math.floor(i / 10)]}` } }, (res) => {
        if (res.statusCode !== 200) return reject(new Error(`stream ${i}: ${res.statusCode}`))
        open++
        res.setEncoding('utf8')
        res.on('data', (d) => {
          for (let at = d.indexOf('\nevent: '); at !== -1; at = d.indexOf('\nevent: ', at + 1)) frames++
        })
        res.on('end', () => ended++)
        resolve()
      })
      req.on('error', reject)
    })
  }
  process.send({ open })
  process.on('message', () => process.send({ frames, ended }))
} else {
  const dir = mkdtempSync(join(tmpdir(), 'bench-streams-'))
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATABASE_URL: `sqlite:${join(dir, 'db.sqlite')}`, LOG_LEVEL: 'warn' })
  const service = await startService({ config, logger: createLogger({ level: 'warn' }) })
  const db = service.db
  const keys = []
  for (let i = 0; i < Math.ceil(STREAMS / 10); i++) {
    const k = generateKey()
    await createKey({ db, name: `stream-${i}`, keyHash: hashKey(k), rateLimit: 1_000_000, scopes: 'read', now: new Date() })
    keys.push(k)
  }
  const mb = (n) => Math.round(n / 1048576)
  const before = process.memoryUsage()
  const child = fork(fileURLToPath(import.meta.url), ['client', JSON.stringify({ uri: service.server.info.uri, keys })])
  const opened = await new Promise((resolve) => child.once('message', resolve))
  globalThis.gc?.()
  const afterOpen = process.memoryUsage()
  const cpu0 = process.cpuUsage()
  const samples = []
  const data = JSON.stringify({
    id: 1,
    site: { domain: 'example.com', name: 'Example' },
    started_at: new Date().toISOString(),
    ended_at: null,
    duration_s: null,
    locations: ['eu-west', 'us-east', 'ap-south'],
    cause: 'http 503 from every location'
  })
  let appended = 0
  const started = Date.now()
  while (Date.now() - started < RUN_S * 1000) {
    const tick = Date.now()
    const second = Math.round((tick - started) / 1000)
    const count = RATE + (BURST > 0 && second > 0 && second % BURST_EVERY_S === 0 ? BURST : 0)
    await db.transaction((trx) =>
      appendToOutbox({
        db: trx,
        events: Array.from({ length: count }, () => ({ type: 'outage.opened', siteId: null, data: JSON.parse(data), at: new Date() }))
      })
    )
    announced()
    appended += count
    const m = process.memoryUsage()
    samples.push({ rss: m.rss, heap: m.heapUsed })
    await new Promise((r) => setTimeout(r, Math.max(0, 1000 - (Date.now() - tick))))
  }
  const cpu = process.cpuUsage(cpu0)
  const report = () => {
    child.send('report')
    return new Promise((resolve) => child.once('message', resolve))
  }
  // The last events' frames may still be on their way: ask until all arrived, for at most 10 s.
  let { frames, ended } = await report()
  for (const until = Date.now() + 10_000; frames < appended * opened.open && Date.now() < until;) {
    await new Promise((r) => setTimeout(r, 100))
    ;({ frames, ended } = await report())
  }
  const half = samples.slice(Math.floor(samples.length / 2))
  const range = (xs) => `${mb(Math.min(...xs))}-${mb(Math.max(...xs))}`
  console.log(
    JSON.stringify({
      streams: opened.open,
      eventsPerSecond: RATE,
      burst: `${BURST} every ${BURST_EVERY_S} s`,
      runS: RUN_S,
      rssBeforeMb: mb(before.rss),
      rssAfterOpenMb: mb(afterOpen.rss),
      heapAfterOpenMb: mb(afterOpen.heapUsed),
      rssSecondHalfMb: range(half.map((s) => s.rss)),
      heapSecondHalfMb: range(half.map((s) => s.heap)),
      peakRssMb: mb(Math.max(...samples.map((s) => s.rss))),
      framesExpected: appended * opened.open,
      framesReceived: frames,
      streamsEnded: ended,
      cpuPercent: Math.round(((cpu.user + cpu.system) / 1000 / (RUN_S * 1000)) * 100)
    })
  )
  child.kill()
  await service.stop()
  rmSync(dir, { recursive: true, force: true })
  process.exit(0)
}
