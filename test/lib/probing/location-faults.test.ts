import t from 'tap'
import { holds } from '../../helpers/poll.js'
import { checkStack } from '../../helpers/check-stack.js'
import { fakeClock, turnsUntil, watch } from '../../helpers/fake-clock.js'
import { noLeaks, total, zeros } from '../../helpers/sockets.js'
import { closedPort, startHttpTarget, startProxy } from '../../helpers/targets.js'
import { SILENT_ACTOR_FILE } from '../../helpers/compiled.js'

const web = await startHttpTarget()
const live = await Promise.all([startProxy(), startProxy()])
const refusing = await startProxy({ refuse: 502 })
const dead = await closedPort()
const closed = await closedPort()
t.teardown(async () => {
  await web.close()
  for (const p of [...live, refusing]) await p.close()
})
const CONNECT_TO = `:443:127.0.0.1:${closed},:80:127.0.0.1:${web.port}`
const [a, b] = live.map((p) => p.port) as [number, number]

/** TCP connections open now at every loopback server the probes reach: the target and the proxies. */
const openAtServers = (): number[] => [web.open(), ...live.map((p) => p.open()), refusing.open()]

t.test('one dead proxy: that location is an error and the site is still up', async (t) => {
  const { body } = await (await checkStack(t, { proxies: [a, b, dead], connectTo: CONNECT_TO })).check('ok.site.test')
  t.match(body, { status: 'up', locations_answered: 2, locations_total: 3 })
  t.match(body.locations[2], { status: 'error', http_code: 0, error: 'location: egress unreachable' })
})

t.test('two dead proxies: unconfirmed', async (t) => {
  const { body } = await (await checkStack(t, { proxies: [a, dead, dead], connectTo: CONNECT_TO })).check('fail.site.test')
  t.match(body, { status: 'unconfirmed', locations_answered: 1 }, 'one failing location alone cannot call it down')
})

t.test('three dead proxies: unavailable', async (t) => {
  const { body } = await (await checkStack(t, { proxies: [dead, dead, dead], connectTo: CONNECT_TO })).check('ok.site.test')
  t.match(body, { status: 'unavailable', locations_answered: 0, response_ms: null })
})

t.test('a proxy refusing the target while the others reach it: partial, still up', async (t) => {
  const { body } = await (await checkStack(t, { proxies: [a, b, refusing.port], connectTo: CONNECT_TO })).check('ok.site.test')
  t.match(body, { status: 'up', partial: true, locations_answered: 3 })
  t.match(body.locations[2], { status: 'down', error: 'proxy: 502' })
})

t.test('an actor thread killed mid-probe: that location did not answer, the pool recovers, nothing leaks', async (t) => {
  const stack = await checkStack(t, { proxies: [a, b, a], connectTo: CONNECT_TO, timeoutMs: 3000, cacheTtlS: 0 })
  t.same(openAtServers(), zeros(openAtServers()), 'nothing open before')
  const pending = stack.check('hang.site.test')
  t.ok(await holds(() => live[0].open() >= 2 && web.open() >= 3, 2500), 'the probes hold connections through the proxies to the target')
  // A key with one check in flight is a light consumer: the light consumers' actors probe it.
  await stack.pools.actors('light')[0]?.threads[0]?.terminate()
  const { status, body } = await pending
  t.equal(status, 200, 'the request still answers')
  t.match(body.locations[0], { status: 'error', error: 'location: worker failed' })
  t.match(body.locations[1], { status: 'down', error: /^timeout/ }, 'the others are reported')
  await noLeaks(t, stack, openAtServers, 'after the kill')
  const after = await stack.check('ok.site.test')
  t.match(after.body, { status: 'up', locations_answered: 3 }, 'the replaced actor probes again')
  await noLeaks(t, stack, openAtServers, 'after the next check')
})

t.test('an actor that never answers is reported after the deadline and its margin', async (t) => {
  const stack = await checkStack(t, {
    proxies: [null, a, b],
    connectTo: CONNECT_TO,
    // The live locations' probes have their deadline on their own threads' real clocks: ample, as
    // the wait for the silent one costs no time on the test's fake clock.
    timeoutMs: 3000,
    actorFile: SILENT_ACTOR_FILE
  })
  // The two live locations' actors: each has answered once its count of completed tasks moves.
  const completed = (): number[] =>
    [1, 2].map((i) =>
      total([...new Set([stack.pools.actors('demand')[i], stack.pools.actors('light')[i]])].map((pool) => pool?.completed ?? 0))
    )
  const before = completed()
  const clock = fakeClock(t)
  const checking = watch(stack.check('ok.site.test'))
  await turnsUntil(() => completed().every((n, i) => n > (before[i] as number)))
  await clock.tickAsync(4999)
  t.notOk(checking.ended(), 'with the others in, the check waits for the silent location until the deadline and its margin')
  await clock.tickAsync(1)
  const { body } = await checking.pending
  clock.stop()
  t.match(body, { status: 'up', locations_answered: 2 })
  t.match(body.locations[0], { status: 'error', error: 'location: no answer in 5000 ms' })
  const thread = stack.pools.actors('light')[0]?.threads[0]
  await noLeaks(t, stack, openAtServers, 'after the silent check')
  await stack.pools.livenessChecked()
  t.equal(stack.pools.actors('light')[0]?.threads[0], thread, 'an actor that still answers pings keeps its thread')
})
