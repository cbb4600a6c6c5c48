import t from 'tap'
import { claimedOccurrence, firstDueAt } from '../../../lib/rules/due-times.js'

const I = 60_000
const CYCLE = 1_000_000 * I

t.test('a new site is first due at its phase, in this interval or the next', async (t) => {
  const rows: Array<[string, number, number, number]> = [
    ['phase still ahead in this interval', 30_000, CYCLE + 10_000, CYCLE + 30_000],
    ['phase this very moment', 30_000, CYCLE + 30_000, CYCLE + 30_000],
    ['phase passed: the next interval', 30_000, CYCLE + 30_001, CYCLE + I + 30_000],
    ['phase 0 at the top of the interval', 0, CYCLE, CYCLE],
    ['phase 0 just after the top', 0, CYCLE + 1, CYCLE + I]
  ]
  for (const [title, phase, now, due] of rows) {
    const got = firstDueAt(phase, now, I)
    t.equal(got, due, title)
    t.ok(got >= now && got - now < I, `${title}: within one interval`)
  }
})

t.test('a claim takes the due check, or passes over the ones nobody started within an interval', async (t) => {
  const rows: Array<[string, number, number, { dueAt: number; missed: number; nextDueAt: number }]> = [
    ['due ahead (claimed early)', CYCLE + 500, CYCLE, { dueAt: CYCLE + 500, missed: 0, nextDueAt: CYCLE + I + 500 }],
    ['due now', CYCLE, CYCLE, { dueAt: CYCLE, missed: 0, nextDueAt: CYCLE + I }],
    ['late by less than an interval: run now, late', CYCLE, CYCLE + I - 1, { dueAt: CYCLE, missed: 0, nextDueAt: CYCLE + I }],
    ['late by exactly an interval: the next one, due now', CYCLE, CYCLE + I, { dueAt: CYCLE + I, missed: 1, nextDueAt: CYCLE + 2 * I }],
    [
      'late by an interval and a half: the next one, at its phase',
      CYCLE,
      CYCLE + 1.5 * I,
      { dueAt: CYCLE + 2 * I, missed: 2, nextDueAt: CYCLE + 3 * I }
    ],
    [
      'left for a day (every instance stopped)',
      CYCLE,
      CYCLE + 1440 * I + 1,
      { dueAt: CYCLE + 1441 * I, missed: 1441, nextDueAt: CYCLE + 1442 * I }
    ]
  ]
  for (const [title, dueAt, now, want] of rows) {
    const got = claimedOccurrence(dueAt, now, I)
    t.same(got, want, title)
    t.equal((got.dueAt - dueAt) % I, 0, `${title}: keeps the phase`)
    t.ok(now - got.dueAt < I, `${title}: never started an interval or more after its due time`)
  }
})
