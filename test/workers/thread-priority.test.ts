/**
 * The API first: location actor threads run below the main thread's priority, and only they do
 * (workers/thread-priority.ts). On Linux the nice value is each thread's own; elsewhere nothing is
 * changed, as lowering it there would lower the whole process.
 */
import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import os from 'node:os'
import type { ActorStats } from '../../workers/location-actor.js'
import { ACTOR_NICENESS } from '../../workers/thread-priority.js'
import { checkStack } from '../helpers/check-stack.js'
import { closedPort } from '../helpers/targets.js'

/** Each thread of this process and its nice value, read by the kernel (/proc/self/task/<tid>/stat). */
function threadNices(): Map<number, number> {
  const nices = new Map<number, number>()
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8')
      // After the command name in parentheses: state is field 3, nice field 19.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      nices.set(Number(tid), Number(fields[16]))
    } catch {
      // The thread ended meanwhile.
    }
  }
  return nices
}

t.test(
  'every actor thread runs below the main thread, which keeps its priority',
  { skip: process.platform !== 'linux' && 'Linux only' },
  async (t) => {
    const main = os.getPriority(0)
    const before = threadNices()
    const closed = await closedPort()
    const stack = await checkStack(t, { proxies: [null, null, null], connectTo: `:443:127.0.0.1:${closed},:80:127.0.0.1:${closed}` })
    const expected = Math.min(19, main + ACTOR_NICENESS)
    const told = await Promise.all(stack.pools.pools.map(async (pool) => ((await pool.run({ stats: true })) as ActorStats).nice))
    t.same(told, [expected, expected, expected], `each actor says its nice value is ${expected}`)
    t.equal(os.getPriority(0), main, 'the main thread keeps its own')
    const after = threadNices()
    t.equal(after.get(process.pid), main, 'and the kernel says so')
    const lowered = [...after].filter(([tid, nice]) => nice !== main && !before.has(tid))
    t.equal(lowered.length, 3, 'three new threads run lower: the actors')
    t.ok(
      lowered.every(([, nice]) => nice === expected),
      `at ${expected}`
    )
    t.same(
      [...after].filter(([tid, nice]) => nice !== main && before.has(tid)),
      [],
      'no thread that ran before was changed (libuv pool, V8 platform threads)'
    )
    // A probe still runs there.
    t.match(await stack.pools.probeAll('x.site.test'), [{ status: 'down' }, { status: 'down' }, { status: 'down' }])
  }
)
