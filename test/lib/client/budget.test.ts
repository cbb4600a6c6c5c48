import t from 'tap'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { Budget, type Hold } from '../../../lib/client/budget.js'
import { watch } from '../../helpers/fake-clock.js'
import { budget, manualSleep } from '../../helpers/stand-in-api.js'

// The client's budget, on the clock and sleep it is given: no timer runs here, the test says when
// time passes and when answers arrive.
function setup(maxWaitMs = 60_000) {
  const clock = { now: 1_000_000 }
  const sleeper = manualSleep()
  const b = new Budget({ now: () => clock.now, sleep: sleeper.sleep, maxWaitMs })
  const headers = (limit: number, remaining: number, resetS: number) => new Headers(budget(limit, remaining, resetS))
  /** Learns a budget from one answer, as a first call would. */
  const learn = async (limit: number, remaining: number, resetS: number) => {
    b.settle(await b.acquire(1), headers(limit, remaining, resetS))
  }
  return { clock, sleeper, b, headers, learn }
}

t.test('before the first keyed answer, one request goes alone to learn the budget', async (t) => {
  const { b, headers } = setup()
  const first = await b.acquire(1)
  const second = watch(b.acquire(1))
  await nextTurn()
  t.notOk(second.ended(), 'the second waits for the first answer')
  b.settle(first, headers(10, 9, 60))
  await second.pending
  t.match(b.state, { limit: 10, remaining: 9, pending: 1 })
})

t.test('concurrent calls share the remaining units; those past them wait until the reset', async (t) => {
  const { b, clock, sleeper, headers, learn } = setup()
  await learn(10, 10, 0)
  const holds: Hold[] = [await b.acquire(3), await b.acquire(3), await b.acquire(3)]
  t.equal(b.state?.pending, 9, 'nine units held by three calls in flight')
  const fourth = watch(b.acquire(3))
  t.equal(await sleeper.started(), 0, 'the window is already over: only the calls in flight hold the units')

  // The answers say the window now ends in 60 s and one unit is left: the fourth waits for that.
  b.settle(holds[0] as Hold, headers(10, 7, 60))
  t.equal(await sleeper.started(), 60_000, 'it waits until RateLimit-Reset')
  b.settle(holds[1] as Hold, headers(10, 4, 60))
  b.settle(holds[2] as Hold, headers(10, 1, 60))
  await nextTurn()
  t.notOk(fourth.ended(), 'not released by answers that leave too little')
  clock.now += 60_000
  sleeper.wake()
  const hold = await fourth.pending
  t.equal(hold.cost, 3)
  t.match(b.state, { remaining: 10, pending: 3 }, 'after the reset the full limit is back')
})

t.test('an answer to a request that left before another answer cannot raise the remaining units', async (t) => {
  const { b, headers, learn } = setup()
  await learn(20, 20, 60)
  const a = await b.acquire(1)
  const c = await b.acquire(1)
  b.settle(c, headers(20, 5, 60))
  b.settle(a, headers(20, 8, 60))
  t.equal(b.state?.remaining, 5, 'the older figure (charged before the other) is not taken')
  const d = await b.acquire(1)
  b.settle(d, headers(20, 9, 60))
  t.equal(b.state?.remaining, 9, 'a request that left after every answer reports the newest figure')
})

t.test('a wait longer than maxRetryWaitMs fails at once, saying how long', async (t) => {
  const { b, sleeper, learn } = setup(10_000)
  await learn(10, 0, 30)
  await t.rejects(b.acquire(1), { status: 429, code: 'rate_limited', retryAfterS: 30 })
  t.same(sleeper.calls, [], 'without waiting')
})

t.test('a cost over the whole limit goes at once (the server refuses it); costless calls never wait', async (t) => {
  const { b, learn } = setup()
  await learn(10, 0, 30)
  t.equal((await b.acquire(50)).cost, 50)
  t.equal((await b.acquire(0)).cost, 0)
})

t.test('an aborted wait rejects with its reason, and the next call takes its turn', async (t) => {
  const { b, clock, sleeper, learn } = setup()
  await learn(10, 0, 30)
  const controller = new AbortController()
  const aborted = b.acquire(1, controller.signal)
  await sleeper.started()
  controller.abort(new Error('gave up'))
  await t.rejects(aborted, { message: 'gave up' })
  const next = watch(b.acquire(1))
  t.equal(await sleeper.started(), 30_000, 'the next call waits for the reset in its turn')
  t.notOk(next.ended())
  clock.now += 30_000
  sleeper.wake()
  await next.pending
})
