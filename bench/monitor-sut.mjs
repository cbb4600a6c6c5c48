// The service under test for bench/monitor and bench/badge: the real service (dist build) in its
// own process, answering the parent's questions about its scheduler, CPU, memory and event-loop
// delay over IPC. (bench/load-mix runs `site-status serve` itself, with bench/sut-stats.mjs preloaded.)
import { writeFileSync } from 'node:fs'
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks'
import { loadConfig } from '../dist/config/index.js'
import { createLogger } from '../dist/lib/logger.js'
import { startService } from '../dist/lib/main.js'

const service = await startService({ config: loadConfig(process.env), logger: createLogger({ level: 'warn' }) })
const loop = monitorEventLoopDelay({ resolution: 10 })
loop.enable()
// Garbage-collection pauses since the last question: how many, their total and the longest (ms).
let gc = { count: 0, totalMs: 0, maxMs: 0 }
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    gc.count++
    gc.totalMs += e.duration
    gc.maxMs = Math.max(gc.maxMs, e.duration)
  }
}).observe({ entryTypes: ['gc'] })
// BENCH_HEAP_SAMPLE=<file>: V8's sampling heap profile of what the service allocates from 20 s on
// (collected objects included), written to <file> at the stop: where the garbage comes from.
let heapSession = null
if (process.env.BENCH_HEAP_SAMPLE) {
  const { Session } = await import('node:inspector')
  heapSession = new Session()
  heapSession.connect()
  setTimeout(() => {
    heapSession.post('HeapProfiler.startSampling', {
      samplingInterval: 16384,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true
    })
  }, 20_000).unref()
}
process.on('message', async (msg) => {
  if (msg === 'stats') {
    const delay = { p99: loop.percentile(99) / 1e6, max: loop.max / 1e6 }
    loop.reset()
    process.send({
      scheduler: service.monitoring.scheduler.stats(),
      recorder: service.recorder.stats(),
      cpu: process.cpuUsage(),
      rss: process.memoryUsage().rss,
      heap: process.memoryUsage().heapUsed,
      external: process.memoryUsage().external,
      delay,
      gc
    })
    gc = { count: 0, totalMs: 0, maxMs: 0 }
  } else if (msg === 'stop') {
    if (heapSession !== null) {
      const { profile } = await new Promise((resolve, reject) =>
        heapSession.post('HeapProfiler.stopSampling', (err, r) => (err ? reject(err) : resolve(r)))
      )
      writeFileSync(process.env.BENCH_HEAP_SAMPLE, JSON.stringify(profile))
    }
    await service.stop()
    // The final counters once every started check has ended and been recorded (or not: see
    // recorder.pending), for the bench to compare with the rows written.
    process.send({ stopped: { scheduler: service.monitoring.scheduler.stats(), recorder: service.recorder.stats() } })
    process.exit(0)
  }
})
process.send({ ready: service.server.info.uri })
