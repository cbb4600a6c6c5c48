import t from 'tap'
import { composeChannel, type ChannelHistory, type PendingNotification } from '../../../lib/rules/alert-grouping.js'

const T0 = Date.parse('2026-11-29T10:00:00.000Z')
const s = (sec: number): Date => new Date(T0 + sec * 1000)
const WINDOW = 60_000

/**
 * One channel on a fake clock: notifications arrive at the given seconds (policy 1 unless said),
 * the composer looks every second, and each message made is kept as `second: ids` (`S` for a summary).
 */
function simulate(arrivals: Array<[number, number?]>, untilS: number, perMinute = 10, windowMs = WINDOW): string[] {
  const pending: PendingNotification[] = []
  const history: { lastByPolicy: Map<number, Date>; recent: Date[] } = { lastByPolicy: new Map(), recent: [] }
  const out: string[] = []
  let id = 0
  for (let sec = 0; sec <= untilS; sec++) {
    for (const [at, policy = 1] of arrivals) if (at === sec) pending.push({ id: ++id, policy_id: policy, at: s(sec) })
    const { groups } = composeChannel({ pending, windowMs: () => windowMs, history, now: s(sec), perMinute })
    for (const g of groups) {
      out.push(`${sec}: ${g.policy_id === null ? 'S ' : ''}${g.ids.join(',')}`)
      if (g.policy_id !== null) history.lastByPolicy.set(g.policy_id, s(sec))
      history.recent.push(s(sec))
      for (const done of g.ids)
        pending.splice(
          pending.findIndex((p) => p.id === done),
          1
        )
    }
  }
  return out
}

t.test('the first notification goes at once; the ones within its window wait and go as one', async (t) => {
  t.same(simulate([[0], [10], [20], [59]], 200), ['0: 1', '60: 2,3,4'])
  t.same(simulate([[0], [61]], 200), ['0: 1', '61: 2'], 'after a quiet window the next goes at once again')
  t.same(simulate([[0], [30], [90], [100]], 200), ['0: 1', '60: 2', '120: 3,4'], 'a steady trickle: one message a window')
})

t.test('a window of 0 sends each as it comes', async (t) => {
  t.same(simulate([[0], [0], [1]], 5, 10, 0), ['0: 1,2', '1: 3'])
})

t.test('1,000 notifications within a minute on one policy: two messages, not a thousand', async (t) => {
  const arrivals: Array<[number]> = Array.from({ length: 1000 }, (_, i) => [Math.floor((i * 60) / 1000)])
  const messages = simulate(arrivals, 300)
  t.equal(messages.length, 2, messages.map((m) => m.slice(0, 20)).join(' | '))
  t.equal(
    messages.reduce((n, m) => n + m.split(',').length, 0),
    1000,
    'every notification is in one of them'
  )
})

t.test('many policies on one channel: at most `perMinute` messages a minute, the rest summarised', async (t) => {
  // 15 policies, one notification each, all at second 0: 9 messages and one summary of the other 6.
  const arrivals: Array<[number, number]> = Array.from({ length: 15 }, (_, i) => [0, i + 1])
  const messages = simulate(arrivals, 120)
  t.equal(messages.length, 10)
  t.same(messages.at(-1), '0: S 10,11,12,13,14,15')
  // 15 more a second later: no room until the minute has passed, then one round again.
  const again: Array<[number, number]> = [...arrivals, ...Array.from({ length: 15 }, (_, i) => [1, i + 1] as [number, number])]
  const both = simulate(again, 200)
  t.same(
    both.filter((m) => m.startsWith('60:')),
    ['60: 16', '60: 17', '60: 18', '60: 19', '60: 20', '60: 21', '60: 22', '60: 23', '60: 24', '60: S 25,26,27,28,29,30'],
    'held back until there is room, never dropped'
  )
  for (let start = 0; start <= 200; start++) {
    const inMinute = both.filter((m) => {
      const sec = Number(m.split(':')[0])
      return sec >= start && sec < start + 60
    })
    if (inMinute.length > 10) t.fail(`${inMinute.length} messages in the minute from ${start}`)
  }
})

t.test('what it says it waits for', async (t) => {
  const history: ChannelHistory = { lastByPolicy: new Map([[1, s(0)]]), recent: [s(0)] }
  const held = composeChannel({ pending: [{ id: 1, policy_id: 1, at: s(10) }], windowMs: () => WINDOW, history, now: s(10) })
  t.same(held, { groups: [], next: s(60) }, 'the window’s end')
  const full: ChannelHistory = { lastByPolicy: new Map(), recent: Array.from({ length: 10 }, (_, i) => s(i)) }
  const waiting = composeChannel({ pending: [{ id: 1, policy_id: 2, at: s(20) }], windowMs: () => WINDOW, history: full, now: s(20) })
  t.same(waiting, { groups: [], next: s(60) }, 'room in the rate, when the oldest of the minute ages out')
  t.same(composeChannel({ pending: [], windowMs: () => WINDOW, history: full, now: s(20) }), { groups: [], next: null })
})
