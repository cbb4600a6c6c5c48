// The service under test for bench/monitor: the real service (dist build) in its own process,
// answering the parent's questions about its scheduler, CPU and memory over IPC.
import { loadConfig } from '../dist/config/index.js'
import { createLogger } from '../dist/lib/logger.js'
import { startService } from '../dist/lib/main.js'

const service = await startService({ config: loadConfig(process.env), logger: createLogger({ level: 'warn' }) })
process.on('message', async (msg) => {
  if (msg === 'stats') {
    process.send({ scheduler: service.monitoring.scheduler.stats(), cpu: process.cpuUsage(), rss: process.memoryUsage().rss })
  } else if (msg === 'stop') {
    await service.stop()
    process.exit(0)
  }
})
process.send({ ready: service.server.info.uri })
