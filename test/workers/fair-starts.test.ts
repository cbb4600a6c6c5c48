import t from 'tap'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { FairStarts, SCHEDULED_LANE } from '../../workers/fair-starts.js'

/** Records the order in which probes start; each probe resolves with its own name. */
function recorder() {
  const started: string[] = []
  return {
    started,
    start: (name: string) => () => {
      started.push(name)
      return Promise.resolve(name)
    }
  }
}

t.test('with nothing waiting, a probe starts at once, in the caller’s own turn', async (t) => {
  const starts = new FairStarts({ perTurn: 4, priority: SCHEDULED_LANE })
  const { started, start } = recorder()
  const answer = starts.run('key:1', start('a'))
  t.same(started, ['a'], 'started before run() returned')
  t.equal(await answer, 'a')
  t.equal(starts.waiting, 0)
})

t.test('a lane with thousands waiting does not hold up another lane’s probe', async (t) => {
  const starts = new FairStarts({ perTurn: 8, priority: SCHEDULED_LANE })
  const { started, start } = recorder()
  const heavy = Array.from({ length: 2000 }, (_, i) => starts.run('key:heavy', start(`h${i}`)))
  t.equal(started.length, 8, 'one turn’s worth started at once')
  t.equal(starts.waiting, 1992, 'the rest wait for their turn')
  const light = starts.run('key:light', start('light'))
  await nextTurn()
  // The next turn serves the lanes in turn: one heavy probe (its lane was waiting first), then the light one.
  t.same(started.slice(8, 10), ['h8', 'light'], 'the light lane’s probe starts in the very next turn')
  t.equal(await light, 'light')
  t.same(
    await Promise.all(heavy),
    Array.from({ length: 2000 }, (_, i) => `h${i}`),
    'every heavy probe ran, in its own order'
  )
  t.equal(started.length, 2001)
  t.equal(starts.waiting, 0)
})

t.test('at most perTurn probes start between two looks at I/O', async (t) => {
  const starts = new FairStarts({ perTurn: 5, priority: SCHEDULED_LANE })
  const { started, start } = recorder()
  const all = Array.from({ length: 17 }, (_, i) => starts.run(`key:${i % 3}`, start(`p${i}`)))
  const perTurn: number[] = [started.length]
  while (started.length < 17) {
    const before = started.length
    await nextTurn()
    perTurn.push(started.length - before)
  }
  t.same(perTurn, [5, 5, 5, 2], 'five a turn, the rest in the last')
  await Promise.all(all)
})

t.test('lanes take turns, one probe each, and the scheduler’s lane goes first', async (t) => {
  const starts = new FairStarts({ perTurn: 1, priority: SCHEDULED_LANE })
  const { started, start } = recorder()
  const all = [
    starts.run('key:a', start('a0')), // starts at once: nothing waits
    starts.run('key:a', start('a1')),
    starts.run('key:a', start('a2')),
    starts.run('key:b', start('b0')),
    starts.run('key:b', start('b1')),
    starts.run(SCHEDULED_LANE, start('s0')),
    starts.run(SCHEDULED_LANE, start('s1')),
    starts.run('key:c', start('c0'))
  ]
  await Promise.all(all)
  t.same(started, ['a0', 's0', 's1', 'a1', 'b0', 'c0', 'a2', 'b1'])
})

t.test('a probe that fails still frees its turn and rejects its caller alone', async (t) => {
  const starts = new FairStarts({ perTurn: 1, priority: SCHEDULED_LANE })
  const first = starts.run('key:a', () => Promise.resolve(1))
  const failing = starts.run('key:a', () => Promise.reject(new Error('probe failed')))
  const after = starts.run('key:b', () => Promise.resolve(3))
  t.equal(await first, 1)
  await t.rejects(failing, { message: 'probe failed' })
  t.equal(await after, 3)
})

t.test('perTurn must be a positive integer', async (t) => {
  t.throws(() => new FairStarts({ perTurn: 0, priority: SCHEDULED_LANE }), RangeError)
  t.throws(() => new FairStarts({ perTurn: 1.5, priority: SCHEDULED_LANE }), RangeError)
})
