import t from 'tap'
import { Admission, HEAVY_KEY_MEMORY_MS, isRefusal, LIGHT_KEY_CHECKS, type Refusal, type Ticket } from '../../../lib/probing/admission.js'

function gate(capacity: number, keyShare = 0.5) {
  let now = 0
  const admission = new Admission({ capacity, keyShare, maxCheckMs: 12_000, now: () => now })
  return {
    admission,
    advance: (ms: number) => {
      now += ms
    }
  }
}

function ticket(outcome: Ticket | Refusal): Ticket {
  if (isRefusal(outcome)) throw new Error(`refused: ${outcome.scope}`)
  return outcome
}

t.test('the capacity is split between the scheduler and on-demand checks', async (t) => {
  const table: Array<[capacity: number, keyShare: number, scheduled: number, demand: number, perKey: number]> = [
    [4000, 0.5, 500, 3500, 1750],
    [20_000, 0.5, 500, 19_500, 9750],
    [2000, 0.25, 500, 1500, 375],
    [40, 0.5, 10, 30, 15],
    [2, 0.5, 1, 1, 1],
    [10, 1, 2, 8, 8]
  ]
  for (const [capacity, keyShare, scheduled, demand, perKey] of table) {
    const { admission } = gate(capacity, keyShare)
    t.same(
      [admission.scheduledSlots, admission.demandSlots, admission.keySlots],
      [scheduled, demand, perKey],
      `capacity ${capacity}, share ${keyShare}`
    )
  }
})

t.test('settings that cannot work are refused at start', async (t) => {
  t.throws(() => new Admission({ capacity: 1, keyShare: 0.5, maxCheckMs: 1 }), RangeError)
  t.throws(() => new Admission({ capacity: 10, keyShare: 0, maxCheckMs: 1 }), RangeError)
  t.throws(() => new Admission({ capacity: 10, keyShare: 1.5, maxCheckMs: 1 }), RangeError)
})

t.test('on-demand checks beyond their slots are refused at once, and admitted again once one ends', async (t) => {
  const { admission } = gate(40) // 30 on-demand slots, 15 per key
  const held = ['a', 'b'].flatMap((key) => Array.from({ length: 15 }, () => ticket(admission.admitDemand(key))))
  t.match(admission.admitDemand('c'), { scope: 'instance' })
  t.match(admission.admitDemand(undefined), { scope: 'instance' }, 'a check without a key counts against the instance')
  held[0]?.release()
  t.notOk(isRefusal(admission.admitDemand('c')), 'a freed slot is taken')
  t.match(admission.stats(), { demand: 30, refusedInstance: 2, refusedKey: 0 })
})

t.test('one key holds at most its share; the others still get in', async (t) => {
  const { admission } = gate(40)
  const mine = Array.from({ length: 15 }, () => ticket(admission.admitDemand('flood')))
  t.match(admission.admitDemand('flood'), { scope: 'key' })
  t.notOk(isRefusal(admission.admitDemand('other')), 'another key is admitted')
  mine[3]?.release()
  t.notOk(isRefusal(admission.admitDemand('flood')), 'the key gets a slot back when one of its checks ends')
  t.match(admission.stats(), { refusedKey: 1 })
})

t.test('scheduled checks are counted and never refused, whatever the on-demand load', async (t) => {
  const { admission } = gate(40)
  for (let i = 0; i < 30; i++) ticket(admission.admitDemand(`k${i % 3}`))
  t.ok(isRefusal(admission.admitDemand('late')))
  const scheduled = Array.from({ length: 10 }, () => admission.admitScheduled())
  t.match(admission.stats(), { scheduled: 10, demand: 30 })
  for (const s of scheduled) s.release()
  t.match(admission.stats(), { scheduled: 0 })
})

t.test('a key is light while it holds few checks and has not held more lately', async (t) => {
  const { admission, advance } = gate(100)
  const held = [ticket(admission.admitDemand('a'))]
  t.ok(admission.isLight('a'), 'one check: light')
  held.push(ticket(admission.admitDemand('a')))
  t.ok(admission.isLight('a'), `${LIGHT_KEY_CHECKS} checks: light`)
  held.push(ticket(admission.admitDemand('a')))
  t.notOk(admission.isLight('a'), `${LIGHT_KEY_CHECKS + 1} checks: heavy`)
  for (const h of held.splice(0)) h.release()
  // A heavy consumer between two bursts: its next check comes while it holds nothing.
  held.push(ticket(admission.admitDemand('a')))
  t.notOk(admission.isLight('a'), 'holding one again at once: still heavy')
  advance(HEAVY_KEY_MEMORY_MS - 1)
  t.notOk(admission.isLight('a'), `${HEAVY_KEY_MEMORY_MS - 1} ms later: still heavy`)
  advance(1)
  t.ok(admission.isLight('a'), `${HEAVY_KEY_MEMORY_MS} ms after it last held more: light again`)
  held.push(ticket(admission.admitDemand('b')), ticket(admission.admitDemand('b')), ticket(admission.admitDemand('b')))
  t.ok(admission.isLight('a'), 'another key holding many does not make this one heavy')
  t.notOk(admission.isLight('b'))
  t.ok(admission.isLight('never-seen'), 'a key holding nothing is light')
  // A heavy key whose checks all hung: its memory counts from when they ended, not from when they began.
  held.push(ticket(admission.admitDemand('c')), ticket(admission.admitDemand('c')), ticket(admission.admitDemand('c')))
  advance(10_000)
  for (const h of held.splice(0)) h.release()
  held.push(ticket(admission.admitDemand('c')))
  t.notOk(admission.isLight('c'), 'right after its long checks ended: still heavy')
  advance(HEAVY_KEY_MEMORY_MS)
  t.ok(admission.isLight('c'), 'a second later: light')
})

t.test('releasing twice frees one slot', async (t) => {
  const { admission } = gate(40)
  const a = ticket(admission.admitDemand('k'))
  ticket(admission.admitDemand('k'))
  a.release()
  a.release()
  t.match(admission.stats(), { demand: 1 })
  const s = admission.admitScheduled()
  s.release()
  s.release()
  t.match(admission.stats(), { scheduled: 0 })
})

t.test('Retry-After says when the oldest check in the way reaches its deadline', async (t) => {
  const { admission, advance } = gate(4) // 1 scheduled slot, 3 on-demand, 1 per key
  ticket(admission.admitDemand('a'))
  advance(4000)
  ticket(admission.admitDemand('b'))
  t.match(admission.admitDemand('a'), { scope: 'key', retryAfterS: 8 }, "key a's check started 4 s ago: 8 s of 12 left")
  ticket(admission.admitDemand('c'))
  advance(7500)
  t.match(admission.admitDemand('d'), { scope: 'instance', retryAfterS: 1 }, 'the oldest has 0.5 s left: at least a second')
  advance(5000)
  t.match(admission.admitDemand('d'), { scope: 'instance', retryAfterS: 1 }, 'never 0, even past the deadline')
})

t.test("a batch's checks wait for a slot of the key's share, first come first served; other keys keep theirs", async (t) => {
  // 12 slots: 3 scheduled, 9 on demand, 4 per key.
  const { admission } = gate(12)
  const order: string[] = []
  const wait = (key: string, name: string, signal?: AbortSignal) =>
    admission.waitDemand(key, signal).then((ticket) => {
      order.push(name)
      return ticket
    })
  const held = await Promise.all(['a1', 'a2', 'a3', 'a4'].map((n) => wait('a', n)))
  const later = ['a5', 'a6', 'a7'].map((n) => wait('a', n))
  await Promise.resolve()
  t.equal(admission.waiting, 3, "over the key's share, the batch waits")
  t.equal(admission.stats().refusedKey, 0, 'nothing is refused')
  t.notOk(isRefusal(admission.admitDemand('b')), 'another key is admitted at once')
  t.ok(isRefusal(admission.admitDemand('a')), 'a single check of the waiting key is still refused')

  held[1]?.release()
  held[0]?.release()
  const [a5, a6] = await Promise.all([later[0], later[1]])
  t.same(order.slice(4), ['a5', 'a6'], 'released slots go to the waiters in order')
  t.equal(admission.waiting, 1)
  const gone = new AbortController()
  const abandoned = wait('a', 'a8', gone.signal)
  gone.abort(new Error('hung up'))
  await t.rejects(abandoned, { message: 'hung up' }, 'a waiter whose client went away stops waiting')
  t.equal(admission.waiting, 1, 'and leaves the queue')
  a5?.release()
  await later[2]
  t.same(order.slice(4), ['a5', 'a6', 'a7'])
  a6?.release()
  t.equal(admission.heldBy('a'), 3)
})

t.test('waiters of several keys are served as slots free, each within its share', async (t) => {
  // 8 slots: 2 scheduled, 6 on demand, 3 per key.
  const { admission } = gate(8)
  const a = await Promise.all([1, 2, 3].map(() => admission.waitDemand('a')))
  const b = await Promise.all([1, 2, 3].map(() => admission.waitDemand('b')))
  const served: string[] = []
  const waiting = [
    admission.waitDemand('a').then((x) => (served.push('a'), x)),
    admission.waitDemand('c').then((x) => (served.push('c'), x))
  ]
  t.equal(admission.waiting, 2, 'the instance is full')
  b[0]?.release()
  await waiting[1]
  t.same(served, ['c'], "a slot freed by b goes to c: a is at its share, c's turn is not held up by a's")
  a[0]?.release()
  await waiting[0]
  t.same(served, ['c', 'a'])
  t.equal(admission.waiting, 0)
})

t.test('keys held up by the instance take turns for the slots that free', async (t) => {
  // 8 slots: 2 scheduled, 6 on demand, 3 per key: a and b fill the instance.
  const { admission } = gate(8)
  const held = await Promise.all(['a', 'a', 'a', 'b', 'b', 'b'].map((key) => admission.waitDemand(key)))
  const served: string[] = []
  for (const key of ['c', 'c', 'd', 'd']) void admission.waitDemand(key).then(() => served.push(key))
  t.equal(admission.waiting, 4)
  for (const ticket of held.slice(0, 3)) {
    ticket.release()
    await Promise.resolve()
  }
  t.same(served, ['c', 'd', 'c'], 'c first (it waited first), then d, then c again: one at a time, in turn')
  t.equal(admission.waiting, 1)
})
