import t from 'tap'
import http from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
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
  // A request sent with `reset` (as probes are) is never asked to close: its connection ends with it.
  for (const reset of [false, true]) {
    for (const [moment, reach] of Object.entries(moments)) {
      for (const end of ['close', 'destroy'] as const) {
        const what = `${reset ? 'reset, ' : ''}${end} ${moment}`
        const dispatcher = new SingleUseClients({ connect: buildConnector({}) })
        const res = await request(origin, { dispatcher, reset })
        const { read } = await reach(res)
        const ended = end === 'close' ? dispatcher.close() : dispatcher.destroy()
        if (end === 'close') t.equal(await read, 'ok', `${what}: the answer is read in full`)
        else await read.catch(() => '')
        await t.resolves(ended, `${what}: resolves`)
        await t.resolves(dispatcher.destroy(), `${what}: and a destroy after it too`)
        await t.rejects(request(origin, { dispatcher }), `${what}: and no request is sent after it`)
      }
    }
  }
})

t.test('one dispatcher sends each request to its own origin, and a reset connection ends with its answer', async (t) => {
  let closed = 0
  let bothClosed = (): void => {}
  const gone = new Promise<void>((resolve) => (bothClosed = resolve))
  const servers = await Promise.all(
    ['a', 'b'].map(async (name) => {
      const server = http.createServer((_req, res) => res.end(name))
      server.on('connection', (socket: Socket) => {
        socket.on('close', () => {
          if (++closed === 2) bothClosed()
        })
      })
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      return server
    })
  )
  t.teardown(() => {
    for (const server of servers) {
      server.closeAllConnections()
      server.close()
    }
  })
  const dispatcher = new SingleUseClients({ connect: buildConnector({}) })
  t.teardown(() => dispatcher.destroy())
  const answers = await Promise.all(
    servers.map(async (server) => {
      const res = await request(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, { dispatcher, reset: true })
      return res.body.text()
    })
  )
  t.same(answers, ['a', 'b'], 'each answer came from the origin its request named')
  await gone
  t.pass('both connections closed with their answers, with no close asked of the dispatcher')
})
