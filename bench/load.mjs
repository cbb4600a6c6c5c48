// A load generator in its own process: `concurrency` loops of GET requests for `seconds`.
import { Agent, request } from 'undici'

process.on('message', async ({ url, headers, seconds, concurrency, paths }) => {
  const agent = new Agent({ connections: concurrency, pipelining: 1 })
  const end = performance.now() + seconds * 1000
  let ok = 0
  let failed = 0
  let i = 0
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (performance.now() < end) {
      const res = await request(url + paths[i++ % paths.length], { dispatcher: agent, headers })
      await res.body.dump()
      if (res.statusCode === 200) ok++
      else failed++
    }
  }))
  await agent.close()
  process.send({ rate: ok / seconds, failed })
})
