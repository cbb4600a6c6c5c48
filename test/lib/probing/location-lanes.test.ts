/**
 * An actor starts a busy lane's probes in turn with the others' (workers/fair-starts.ts): a check
 * sent behind another key's hundreds reaches its target long before the last of them, through the
 * real pool, actor thread and target.
 */
import t from 'tap'
import { checkStack } from '../../helpers/check-stack.js'
import { closedPort, startHttpTarget } from '../../helpers/targets.js'

const web = await startHttpTarget()
const closed = await closedPort()
t.teardown(() => web.close())

/** Many times the 128 probes an actor starts in one turn (STARTS_PER_TURN). */
const HEAVY = 1000

t.test('one lane’s backlog of starts does not hold up another lane’s probe', async (t) => {
  const stack = await checkStack(t, {
    proxies: [null],
    connectTo: `:443:127.0.0.1:${closed},:80:127.0.0.1:${web.port}`,
    cacheTtlS: 0,
    // Every probe must answer: the deadline is no part of what this shows, even with both cores busy.
    timeoutMs: 10_000
  })
  // All sent in one go, as a flood of one consumer's checks arrives; the light check last.
  const heavy = Array.from({ length: HEAVY }, (_, i) => stack.pools.probeAll(`h${i}.site.test`, 'key:heavy'))
  const light = stack.pools.probeAll('light.site.test', 'key:light')
  const answers = await Promise.all([...heavy, light])
  t.ok(
    answers.every(([a]) => a?.status === 'up'),
    'every probe reached the target and was answered'
  )
  const order = web.hits.map((h) => h.host.replace(/:\d+$/, ''))
  t.equal(order.length, HEAVY + 1)
  const at = order.indexOf('light.site.test')
  // Started first come, first served, it would be the last to arrive (about 1,000th). In turns, it
  // starts in the first turn after its task is read: before it, the 128 (STARTS_PER_TURN) that
  // start at once, and a turn of them for each batch of tasks the actor read before its own.
  t.ok(at >= 0 && at < HEAVY / 2, `the light probe reached the target ${at + 1}th of ${HEAVY + 1}`)
})
