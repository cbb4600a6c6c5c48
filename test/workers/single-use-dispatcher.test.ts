import t from 'tap'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { buildConnector, request } from 'undici'
import { SingleUseClients } from '../../workers/single-use-dispatcher.js'

t.test('the dispatcher closes and destroys cleanly whatever state its requests are in', async (t) => {
  const server = http.createServer((_req, res) => res.end('ok'))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    server.closeAllConnections()
    server.close()
  })
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  // Each request's own Client is asked to close once dispatched, and undici destroys a Client when
  // its close is done: the dispatcher's close may come while the body is read, or just after that
  // Client was destroyed (closing it again would reject with UND_ERR_DESTROYED, as an Agent's close
  // after a keep-alive answer did).
  const moments = {
    'while the body is read': async (res: Awaited<ReturnType<typeof request>>) => {
      return { read: res.body.text() }
    },
    'once the request is done and its Client destroyed': async (res: Awaited<ReturnType<typeof request>>) => {
      const text = await res.body.text()
      await new Promise<void>((resolve) => setImmediate(resolve))
      return { read: Promise.resolve(text) }
    }
  }
  for (const [moment, reach] of Object.entries(moments)) {
    for (const end of ['close', 'destroy'] as const) {
      const dispatcher = new SingleUseClients(origin, { connect: buildConnector({}) })
      const res = await request(origin, { dispatcher })
      const { read } = await reach(res)
      const ended = end === 'close' ? dispatcher.close() : dispatcher.destroy()
      if (end === 'close') t.equal(await read, 'ok', `${end} ${moment}: the answer is read in full`)
      else await read.catch(() => '')
      await t.resolves(ended, `${end} ${moment}: resolves`)
      await t.resolves(dispatcher.destroy(), `${end} ${moment}: and a destroy after it too`)
    }
  }
})
