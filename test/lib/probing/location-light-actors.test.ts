import type { Piscina } from 'piscina'
/**
 * A light consumer's check (a key holding few checks) is probed by actors of their own
 * (Locations' `lightActors`): even an on-demand actor whose thread is wedged by a heavy
 * consumer's check does not hold it up (docs/decisions.md, Probing). Their threads start with the
 * first such check, which the on-demand actors take meanwhile, and stop when idle.
 */
import t from 'tap'
import { loadConfig } from '../../../config/index.js'
import { createLogger } from '../../../lib/logger.js'
import { Locations } from '../../../lib/probing/locations/index.js'
import { LIGHT_KEY_CHECKS } from '../../../lib/probing/admission.js'
import { checkStack } from '../../helpers/check-stack.js'
import { holds } from '../../helpers/poll.js'
import { bearer } from '../../helpers/server.js'
import { closedPort, startHttpTarget, startProxy } from '../../helpers/targets.js'
import { TEST_POOL, WEDGED_ACTOR_FILE } from '../../helpers/compiled.js'

const web = await startHttpTarget()
const live = await Promise.all([startProxy(), startProxy()])
const closed = await closedPort()
t.teardown(async () => {
  await web.close()
  for (const p of live) await p.close()
})
const [a, b] = live.map((p) => p.port) as [number, number]

t.test('a light key’s check answers from every location while a heavy key’s actor is wedged', async (t) => {
  const stack = await checkStack(t, {
    proxies: [null, a, b],
    connectTo: `:443:127.0.0.1:${closed},:80:127.0.0.1:${web.port}`,
    timeoutMs: 1000,
    cacheTtlS: 0,
    // Wedges the direct location's thread (its event loop blocked) on a `wedge.` domain.
    actorFile: WEDGED_ACTOR_FILE,
    lightActors: true
  })
  const lightKey = await stack.issueKey({ name: 'light' })
  // The heavy key first holds as many checks as a light key may (targets that never answer)...
  const hanging = Array.from({ length: LIGHT_KEY_CHECKS }, (_, i) => stack.check(`hang.h${i}.site.test`))
  t.ok(await holds(() => web.open() >= 3 * LIGHT_KEY_CHECKS, 5000), 'the heavy key’s checks are probing')
  // ...so that its next check goes to the on-demand actors, where it wedges the direct location's thread.
  const wedged = stack.check('wedge.site.test')
  const done = { wedged: false }
  void wedged.then(() => (done.wedged = true))
  const { status, body } = await stack.check('ok.site.test', bearer(lightKey))
  t.equal(status, 200)
  t.match(body, { status: 'up', locations_answered: 3, partial: false }, 'the light key’s check is answered by every location')
  t.same(
    body.locations.map((l: { status: string }) => l.status),
    ['up', 'up', 'up']
  )
  t.notOk(done.wedged, 'before the heavy key’s check ends')
  const heavy = await wedged
  t.match(
    heavy.body.locations[0],
    { status: 'error', error: 'location: no answer in 3000 ms' },
    'the heavy key’s check found its on-demand actor wedged meanwhile'
  )
  for (const { body: h } of await Promise.all(hanging)) t.match(h, { status: 'down' })
})

t.test('the light consumers’ actors start with the first light check and stop when idle', async (t) => {
  const config = loadConfig({ CONNECT_TO: `:443:127.0.0.1:${closed},:80:127.0.0.1:${web.port}`, PROBE_TIMEOUT_MS: '1000' })
  const pools = new Locations({
    ...TEST_POOL,
    locations: config.locations,
    connectTo: config.connectTo,
    policy: { allowPrivate: true },
    timeoutMs: config.probeTimeoutMs,
    userAgent: 'light-test',
    logger: createLogger({ level: 'silent' }),
    lightActors: true,
    // Longer than three threads take to start on a busy machine, so that the first to start is not
    // stopped before the check reaches it (in production: 5 minutes).
    lightIdleMs: 10_000
  })
  t.teardown(() => pools.close())
  // As the service runs from the build (from the sources, ready() starts them too).
  await pools.ready({ light: false })
  const threads = (list: Piscina[]) => list.map((pool) => pool.threads.length)
  t.same(threads(pools.actors('demand')), [1, 1, 1], 'the on-demand actors run once ready')
  t.same(threads(pools.actors('light')), [0, 0, 0], 'the light consumers’ have not started')
  const completed = (list: Piscina[]) => list.map((pool) => pool.completed)
  const statuses = async () => (await pools.probeAll('ok.site.test', 'key:1', true)).map((a) => a.status)
  t.same(
    await Promise.all([statuses(), statuses()]),
    [
      ['up', 'up', 'up'],
      ['up', 'up', 'up']
    ],
    'the first light check, and one sent with it, are answered by every location'
  )
  // Each on-demand actor has run its start-up ping and these two probes.
  t.same(completed(pools.actors('demand')), [3, 3, 3], 'by the on-demand actors, without waiting for the light consumers’ to start')
  t.same(threads(pools.actors('light')), [1, 1, 1], 'the first light check started them')
  t.ok(await holds(() => completed(pools.actors('light')).every((n) => n === 1), 30_000), 'they answer their start-up ping')
  t.same(await statuses(), ['up', 'up', 'up'])
  t.same(completed(pools.actors('light')), [2, 2, 2], 'once started, they take the light checks')
  t.same(completed(pools.actors('demand')), [3, 3, 3], 'the on-demand actors no more')
  t.ok(await holds(() => threads(pools.actors('light')).every((n) => n === 0), 30_000), 'idle, their threads stop')
  t.same(threads(pools.actors('demand')), [1, 1, 1], 'the on-demand actors’ do not')
  t.same(await statuses(), ['up', 'up', 'up'], 'the next light check is answered')
  t.same(completed(pools.actors('demand')), [4, 4, 4], 'by the on-demand actors')
  t.same(threads(pools.actors('light')), [1, 1, 1], 'and starts them again')
})
