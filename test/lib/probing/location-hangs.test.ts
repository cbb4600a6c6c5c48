/**
 * Probes that hang past every timeout, and actor threads that hang, must give back every
 * connection they opened (counted at the loopback servers and in the actors), and a wedged actor
 * must be replaced so its location answers again.
 */
import t from 'tap'
import { checkStack } from '../../helpers/check-stack.js'
import { holds } from '../../helpers/poll.js'
import { noLeaks, total, zeros } from '../../helpers/sockets.js'
import { closedPort, startHttpTarget, startProxy, startSilentServer } from '../../helpers/targets.js'
import { WEDGED_ACTOR_FILE } from '../../helpers/compiled.js'

const web = await startHttpTarget()
const live = await Promise.all([startProxy(), startProxy()])
// Accepts and never answers: a TLS handshake to it, or a CONNECT sent to it as a proxy, waits forever.
const silent = await startSilentServer()
const silentProxy = await startSilentServer()
const closed = await closedPort()
t.teardown(async () => {
  await web.close()
  for (const p of [...live, silent, silentProxy]) await p.close()
})
const CONNECT_TO = `:443:127.0.0.1:${closed},:80:127.0.0.1:${web.port}`
const [a, b] = live.map((p) => p.port) as [number, number]

/** TCP connections open now at every loopback server the probes reach: targets and proxies. */
const openAtServers = (): number[] => [web.open(), silent.open(), ...live.map((p) => p.open()), silentProxy.open()]

t.test('probes that hang past every timeout release every connection', async (t) => {
  const stack = await checkStack(t, {
    proxies: [null, a, silentProxy.port],
    // tls-hang's handshake never completes; hang's target accepts the request and never answers it.
    connectTo: `tls-hang.site.test:443:127.0.0.1:${silent.port},${CONNECT_TO}`,
    timeoutMs: 1000,
    cacheTtlS: 0
  })
  for (const domain of ['hang.site.test', 'tls-hang.site.test']) {
    t.same(openAtServers(), zeros(openAtServers()), `${domain}: nothing open before`)
    const pending = stack.check(domain)
    const held = await holds(() => total(openAtServers()) >= 3, 900)
    t.ok(held, `${domain}: the probes hold connections while they wait (${openAtServers().join(', ')})`)
    const { body } = await pending
    t.match(body.locations[0], { status: 'down', error: 'timeout: no response in 1000 ms' }, `${domain}: direct, a timeout`)
    t.match(body.locations[1], { status: 'down', error: 'timeout: no response in 1000 ms' }, `${domain}: through a proxy, a timeout`)
    t.match(body.locations[2], { http_code: 0, error: /^timeout/ }, `${domain}: a proxy that never answers the CONNECT, a timeout`)
    await noLeaks(t, stack, openAtServers, domain)
  }
})

t.test('a wedged actor thread is replaced: the next check answers from every location, and its connection is closed', async (t) => {
  const stack = await checkStack(t, {
    proxies: [null, a, b],
    connectTo: CONNECT_TO,
    timeoutMs: 500,
    cacheTtlS: 0,
    actorFile: WEDGED_ACTOR_FILE
  })
  // A key with one check in flight is a light consumer: the light consumers' actors probe it.
  const pool = stack.pools.actors('light')[0]
  const wedged = pool?.threads[0]
  const { body } = await stack.check('wedge.site.test')
  t.match(body, { status: 'up', locations_answered: 2 })
  t.match(body.locations[0], { status: 'error', error: 'location: no answer in 2500 ms' }, 'the wedged location did not answer')
  t.ok(web.open() >= 1, 'the wedged thread still holds the connection it opened')
  await holds(() => pool?.threads[0] !== wedged, 20_000)
  t.not(pool?.threads[0], wedged, 'its thread was replaced')
  // A new thread takes a moment to start (here it also compiles the TypeScript sources).
  t.equal(await pool?.run({ ping: true }), 'pong', 'the new thread answers')
  const after = await stack.check('ok.site.test')
  t.match(after.body, { status: 'up', locations_answered: 3 }, 'the next check answers from every location')
  await noLeaks(t, stack, openAtServers, 'after the replacement')
})
