import type { Piscina } from 'piscina'
/**
 * The API first: the scheduler's location actors run below the main thread's priority, and only
 * they do (workers/thread-priority.ts); the scheduler's probes go to them, on-demand probes to the
 * others (a light consumer's to actors of their own). On Linux the nice value is each thread's own;
 * elsewhere nothing is changed, as lowering it there would lower the whole process.
 */
import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import os from 'node:os'
import type { ActorStats } from '../../workers/location-actor.js'
import { ACTOR_NICENESS } from '../../workers/thread-priority.js'
import { SCHEDULED_LANE } from '../../workers/fair-starts.js'
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
  "the scheduler's actors run below the main thread; the on-demand and light consumers' actors and the main thread keep their priority",
  { skip: process.platform !== 'linux' && 'Linux only' },
  async (t) => {
    const main = os.getPriority(0)
    const before = threadNices()
    const closed = await closedPort()
    const stack = await checkStack(t, {
      proxies: [null, null, null],
      connectTo: `:443:127.0.0.1:${closed},:80:127.0.0.1:${closed}`,
      scheduledActors: true,
      lightActors: true
    })
    const [pools, scheduledPools, lightPools] = (['demand', 'scheduled', 'light'] as const).map((cls) => stack.pools.actors(cls)) as [
      Piscina[],
      Piscina[],
      Piscina[]
    ]
    const lowered = Math.min(19, main + ACTOR_NICENESS)
    const nice = (list: typeof pools) => Promise.all(list.map(async (pool) => ((await pool.run({ stats: true })) as ActorStats).nice))
    t.same(await nice(scheduledPools), [lowered, lowered, lowered], `each of the scheduler's actors says its nice value is ${lowered}`)
    t.same(await nice(pools), [main, main, main], 'each on-demand actor keeps the main thread’s')
    t.same(await nice(lightPools), [main, main, main], 'and so does each light consumers’ actor')
    t.equal(os.getPriority(0), main, 'the main thread keeps its own')
    const after = threadNices()
    t.equal(after.get(process.pid), main, 'and the kernel says so')
    const changed = [...after].filter(([tid, n]) => n !== main && !before.has(tid)).map(([, n]) => n)
    t.same(changed, [lowered, lowered, lowered], 'three new threads run lower: the scheduler’s actors')
    t.same(
      [...after].filter(([tid, n]) => n !== main && before.has(tid)),
      [],
      'no thread that ran before was changed (libuv pool, V8 platform threads)'
    )

    // Each kind of probe goes to its own actors.
    const done = (list: typeof pools) => list.map((pool) => pool.completed)
    const [demand0, scheduled0, light0] = [done(pools), done(scheduledPools), done(lightPools)]
    const since = (list: typeof pools, before: number[]) => done(list).map((n, i) => n - (before[i] as number))
    t.match(await stack.pools.probeAll('x.site.test', SCHEDULED_LANE), [{ status: 'down' }, { status: 'down' }, { status: 'down' }])
    t.same(done(pools), demand0, 'a scheduled probe is not run by the on-demand actors')
    t.same(done(lightPools), light0, 'nor by the light consumers’')
    t.same(since(scheduledPools, scheduled0), [1, 1, 1], 'but by the scheduler’s')
    await stack.pools.probeAll('y.site.test', 'key:1')
    t.same(since(scheduledPools, scheduled0), [1, 1, 1], 'an on-demand probe is not run by the scheduler’s')
    t.same(since(pools, demand0), [1, 1, 1], 'but by the on-demand actors')
    t.same(since(lightPools, light0), [0, 0, 0], 'not by the light consumers’')
    await stack.pools.probeAll('z.site.test', 'key:1', true)
    t.same(since(lightPools, light0), [1, 1, 1], 'a light consumer’s probe is run by the light consumers’ actors')
    t.same(since(pools, demand0), [1, 1, 1], 'and not by the others')
    t.same(since(scheduledPools, scheduled0), [1, 1, 1])
  }
)
