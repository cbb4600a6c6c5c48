import Hapi from '@hapi/hapi'
import { Client } from 'undici'
const mode = process.argv[2] === 'false' ? false : true
let lost = 0, answered = 0, refused = 0, handledTotal = 0
const errs = {}
for (let trial = 0; trial < 200; trial++) {
  const server = Hapi.server({ port: 0, host: '127.0.0.1', operations: { cleanStop: mode } })
  const seen = new Set()
  server.route({ method: 'POST', path: '/x', handler: async (req) => { seen.add(req.headers['x-id']); await new Promise((r) => setTimeout(r, 30)); return { ok: true } } })
  await server.start()
  const clients = Array.from({ length: 5 }, () => new Client(server.info.uri, { pipelining: 1 }))
  for (const c of clients) { const r = await c.request({ path: '/x', method: 'POST', body: 'a', headers: { 'x-id': 'warm' } }); await r.body.text() }
  const reqs = clients.map((c, i) => new Promise((r) => setTimeout(r, (i + trial) % 3)).then(() => c.request({ path: '/x', method: 'POST', body: 'x'.repeat(50), headers: { 'x-id': `r${i}` } })).then(async (r) => { await r.body.text(); return 'ok' }, (e) => e.code))
  await new Promise((r) => setTimeout(r, 1 + (trial % 2)))
  const stop = server.stop({ timeout: 3000 })
  const res = await Promise.all(reqs)
  await stop
  res.forEach((x, i) => {
    if (x === 'ok') answered++
    else { refused++; errs[x] = (errs[x] ?? 0) + 1; if (seen.has(`r${i}`)) lost++ }
  })
  await Promise.all(clients.map((c) => c.destroy()))
}
console.log({ cleanStop: mode, answered, refused, lost, errs })
