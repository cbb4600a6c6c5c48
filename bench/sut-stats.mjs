// Preloaded (node --import) into the real `site-status serve` by bench/load-mix, so that the bench
// measures the very process an operator runs, signal handling included. In the main thread only:
// answers the parent's 'stats' over IPC (CPU, RSS, heap, event-loop delay), and counts through
// Node's diagnostics channels the HTTP requests the server read and the answers it finished
// sending; at exit it writes those counts to BENCH_SUT_COUNTS, so the bench can compare them with
// what its clients received.
import { subscribe } from 'node:diagnostics_channel'
import { writeFileSync } from 'node:fs'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { isMainThread } from 'node:worker_threads'

if (isMainThread && process.send) {
  const counts = { requests: 0, responses: 0 }
  subscribe('http.server.request.start', () => {
    counts.requests++
  })
  subscribe('http.server.response.finish', () => {
    counts.responses++
  })
  const loop = monitorEventLoopDelay({ resolution: 10 })
  loop.enable()
  process.on('message', (msg) => {
    if (msg !== 'stats') return
    const delay = { p99: loop.percentile(99) / 1e6, max: loop.max / 1e6 }
    loop.reset()
    const mem = process.memoryUsage()
    process.send({ cpu: process.cpuUsage(), rss: mem.rss, heap: mem.heapUsed, delay, counts })
  })
  process.on('exit', () => {
    if (process.env.BENCH_SUT_COUNTS) writeFileSync(process.env.BENCH_SUT_COUNTS, JSON.stringify(counts))
  })
}
