import t from 'tap'
import {
  durationSeconds,
  outageEndOnRemoval,
  outageTransition,
  type OutageChange,
  type OutageCheck,
  type OutageSnapshot
} from '../../../lib/rules/outages.js'
import type { SiteStatus } from '../../../lib/rules/consensus.js'

const T0 = Date.parse('2026-11-22T06:00:00.000Z')
const MIN = 60_000
const at = (minute: number): Date => new Date(T0 + minute * MIN)
const check = (status: SiteStatus, minute: number): OutageCheck => ({ status, checkedAt: at(minute) })

const fresh: OutageSnapshot = { checkedAt: null, open: null }
const quiet = (minute: number): OutageSnapshot => ({ checkedAt: at(minute), open: null })
const down = (minute: number, since: number): OutageSnapshot => ({ checkedAt: at(minute), open: { started_at: at(since) } })

interface Row {
  title: string
  snapshot: OutageSnapshot
  check: OutageCheck
  change: OutageChange
  after: OutageSnapshot
}

const rows: Row[] = [
  { title: "a fresh site's first up changes nothing", snapshot: fresh, check: check('up', 0), change: { kind: 'none' }, after: quiet(0) },
  {
    title: "a fresh site's first down opens an outage at its time",
    snapshot: fresh,
    check: check('down', 0),
    change: { kind: 'open', at: at(0) },
    after: down(0, 0)
  },
  {
    title: 'down after up opens an outage',
    snapshot: quiet(1),
    check: check('down', 2),
    change: { kind: 'open', at: at(2) },
    after: down(2, 2)
  },
  {
    title: 'down while an outage is open changes nothing',
    snapshot: down(2, 1),
    check: check('down', 3),
    change: { kind: 'none' },
    after: down(3, 1)
  },
  {
    title: 'up while an outage is open closes it at its time',
    snapshot: down(2, 1),
    check: check('up', 3),
    change: { kind: 'close', at: at(3), outage: { started_at: at(1) } },
    after: quiet(3)
  },
  {
    title: 'up without an open outage changes nothing',
    snapshot: quiet(2),
    check: check('up', 3),
    change: { kind: 'none' },
    after: quiet(3)
  },
  { title: 'unconfirmed neither opens one', snapshot: quiet(2), check: check('unconfirmed', 3), change: { kind: 'none' }, after: quiet(3) },
  { title: 'nor closes one', snapshot: down(2, 1), check: check('unconfirmed', 3), change: { kind: 'none' }, after: down(3, 1) },
  { title: 'unavailable neither opens one', snapshot: quiet(2), check: check('unavailable', 3), change: { kind: 'none' }, after: quiet(3) },
  { title: 'nor closes one', snapshot: down(2, 1), check: check('unavailable', 3), change: { kind: 'none' }, after: down(3, 1) },
  {
    title: 'a down check older than the newest is stale and opens nothing',
    snapshot: quiet(5),
    check: check('down', 4),
    change: { kind: 'stale' },
    after: quiet(5)
  },
  {
    title: 'an up check older than the newest is stale and closes nothing',
    snapshot: down(5, 1),
    check: check('up', 4),
    change: { kind: 'stale' },
    after: down(5, 1)
  },
  {
    title: 'an older check does not move the newest time back',
    snapshot: quiet(5),
    check: check('up', 4),
    change: { kind: 'stale' },
    after: quiet(5)
  },
  {
    title: 'a check at the same time as the newest is not stale: it opens',
    snapshot: quiet(5),
    check: check('down', 5),
    change: { kind: 'open', at: at(5) },
    after: down(5, 5)
  },
  {
    title: 'and it closes',
    snapshot: down(5, 5),
    check: check('up', 5),
    change: { kind: 'close', at: at(5), outage: { started_at: at(5) } },
    after: quiet(5)
  }
]

t.test('one check applied to a site snapshot', async (t) => {
  for (const row of rows) {
    const got = outageTransition(row.snapshot, row.check)
    t.same(got, { change: row.change, after: row.after }, row.title)
  }
})

t.test('a sequence of checks applied in order', async (t) => {
  const statuses: Array<[SiteStatus, number]> = [
    ['up', 0],
    ['down', 1],
    ['up', 0.5],
    ['down', 2],
    ['unconfirmed', 3],
    ['up', 4],
    ['up', 5]
  ]
  let snapshot = fresh
  const kinds: string[] = []
  for (const [status, minute] of statuses) {
    const { change, after } = outageTransition(snapshot, check(status, minute))
    kinds.push(change.kind)
    snapshot = after
  }
  t.same(kinds, ['none', 'open', 'stale', 'none', 'none', 'close', 'none'])
  t.same(snapshot, quiet(5))
})

t.test('removing a site ends its ongoing outage at the removal, never before its start', async (t) => {
  const cases: Array<[string, OutageSnapshot['open'], Date, Date | null]> = [
    ['an open outage ends at the removal', { started_at: at(1) }, at(10), at(10)],
    ['removed at the very start, it ends there', { started_at: at(1) }, at(1), at(1)],
    ['removed before it started (a clock set back), it ends at its start', { started_at: at(5) }, at(3), at(5)],
    ['without an open outage there is nothing to end', null, at(10), null]
  ]
  for (const [title, open, removedAt, end] of cases) t.same(outageEndOnRemoval(open, removedAt), end, title)
})

t.test('an outage lasts whole seconds, to now while ongoing, never less than zero', async (t) => {
  t.equal(durationSeconds(at(0), new Date(T0 + 90_999), at(60)), 90)
  t.equal(durationSeconds(at(0), null, new Date(T0 + 30_500)), 30)
  t.equal(durationSeconds(at(1), null, at(0)), 0)
})
