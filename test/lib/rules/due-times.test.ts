import t from 'tap'
import { claimedOccurrence, firstDueAt, movedDueAt } from '../../../lib/rules/due-times.js'

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

t.test(
  'a due time that no longer fits its interval moves to the phase, half an interval after the last check at the earliest',
  async (t) => {
    const S = 30_000
    const L = 300_000
    const now = CYCLE + 100_000
    type Row = [string, Parameters<typeof movedDueAt>[0], number | null]
    const rows: Row[] = [
      [
        'on its phase, within the interval',
        { dueAt: CYCLE + I + 500, phase: 500, intervalMs: I, now, checkedAt: now - 40_000, changed: true },
        null
      ],
      ['due already: the claims take it', { dueAt: now - 10, phase: 7, intervalMs: S, now, checkedAt: null, changed: true }, null],
      // 300 s -> 30 s: the row still says the old interval's next check, 200 s ahead.
      [
        'shortened: at the phase within the new interval',
        { dueAt: now + 200_000, phase: 7000, intervalMs: S, now, checkedAt: now - 100_000, changed: true },
        CYCLE + 120_000 + 7000
      ],
      [
        'shortened just after a check: half an interval after it',
        { dueAt: now + 200_000, phase: 7000, intervalMs: S, now, checkedAt: now - 1000, changed: true },
        CYCLE + 120_000 + 7000
      ],
      [
        'shortened, its phase still ahead',
        { dueAt: now + 200_000, phase: 29_000, intervalMs: S, now, checkedAt: now - 100_000, changed: true },
        CYCLE + 90_000 + 29_000
      ],
      // 30 s -> 300 s: the old interval's next check is 21 s ahead, 11 s after the last one.
      [
        'lengthened: not before half the new interval',
        { dueAt: now + 21_000, phase: 120_000, intervalMs: L, now, checkedAt: now - 11_000, changed: true },
        CYCLE + 300_000 + 120_000
      ],
      [
        'lengthened, the phase late in the interval',
        { dueAt: now + 21_000, phase: 290_000, intervalMs: L, now, checkedAt: now - 11_000, changed: true },
        CYCLE + 290_000
      ],
      [
        'lengthened, never checked: at the phase',
        { dueAt: now + 21_000, phase: 120_000, intervalMs: L, now, checkedAt: null, changed: true },
        CYCLE + 120_000
      ],
      [
        'off the phase in a row not known to have changed: stays',
        { dueAt: now + 21_000, phase: 120_000, intervalMs: L, now, checkedAt: null, changed: false },
        null
      ],
      [
        'two intervals ahead, unchanged (CHECK_INTERVAL_S shortened)',
        { dueAt: now + 2 * I + 1, phase: 500, intervalMs: I, now, checkedAt: null, changed: false },
        CYCLE + 2 * I + 500
      ],
      [
        'two intervals ahead exactly, unchanged: stays',
        { dueAt: now + 2 * I, phase: 500, intervalMs: I, now, checkedAt: null, changed: false },
        null
      ]
    ]
    for (const [title, args, want] of rows) {
      const got = movedDueAt(args)
      t.equal(got, want, title)
      if (got === null) continue
      t.equal((got - args.phase) % args.intervalMs, 0, `${title}: at the phase`)
      t.ok(got >= now && got <= now + 1.5 * args.intervalMs, `${title}: due within one and a half intervals`)
      if (args.checkedAt !== null)
        t.ok(got - args.checkedAt >= args.intervalMs / 2, `${title}: half an interval after the last check at least`)
      t.equal(movedDueAt({ ...args, dueAt: got }), null, `${title}: and stays there`)
    }
  }
)
