import t from 'tap'
import {
  applyPing,
  heartbeatOutageStep,
  heartbeatState,
  nextDeadline,
  nextDue,
  pingKindOf,
  scheduleProblem,
  type HeartbeatClock,
  type HeartbeatState,
  type Window
} from '../../../lib/rules/heartbeat.js'

const T0 = Date.parse('2026-11-29T03:00:00.000Z')
const S = 1000
const MIN = 60 * S

const clock = (over: Partial<HeartbeatClock> = {}): HeartbeatClock => ({
  schedule: { every_s: 60 },
  graceS: 30,
  maxRuntimeS: null,
  paused: false,
  lastSuccessAt: T0,
  lastPingAt: T0,
  failed: false,
  openRuns: [],
  ...over
})

t.test('every_s is bounded from 30 s to a year, in whole seconds', async (t) => {
  const rows: [number, boolean][] = [
    [30, true],
    [29, false],
    [365 * 86_400, true],
    [365 * 86_400 + 1, false],
    [60.5, false],
    [0, false]
  ]
  for (const [every_s, ok] of rows) t.equal(scheduleProblem({ every_s }) === null, ok, String(every_s))
})

t.test('every_s is due that long after the last success', async (t) => {
  t.equal(nextDue({ every_s: 60 }, T0), T0 + MIN)
  t.equal(nextDue({ every_s: 3600 }, T0 + 5 * S), T0 + 5 * S + 3600 * S)
})

interface StateRow {
  title: string
  hb: HeartbeatClock
  at: number
  state: HeartbeatState
  windows?: Window[]
}

const stateRows: StateRow[] = [
  { title: 'never pinged is new, however long', hb: clock({ lastSuccessAt: null, lastPingAt: null }), at: T0 + 86_400 * S, state: 'new' },
  { title: 'before its due time it is up', hb: clock(), at: T0 + 59 * S, state: 'up' },
  { title: 'at its due time it is late', hb: clock(), at: T0 + 60 * S, state: 'late' },
  { title: 'within grace it stays late', hb: clock(), at: T0 + 89 * S, state: 'late' },
  { title: 'at the end of grace it is down', hb: clock(), at: T0 + 90 * S, state: 'down' },
  { title: 'a failure is down at once', hb: clock({ failed: true }), at: T0 + S, state: 'down' },
  { title: 'paused is paused, even overdue', hb: clock({ paused: true }), at: T0 + 86_400 * S, state: 'paused' },
  {
    title: 'a run within its max runtime is up',
    hb: clock({ maxRuntimeS: 20, openRuns: [{ rid: null, at: T0 + 10 * S }] }),
    at: T0 + 29 * S,
    state: 'up'
  },
  {
    title: 'a run past its max runtime is down before the schedule says late',
    hb: clock({ maxRuntimeS: 20, openRuns: [{ rid: null, at: T0 + 10 * S }] }),
    at: T0 + 30 * S,
    state: 'down'
  },
  {
    title: 'a run without max runtime waits for the schedule',
    hb: clock({ openRuns: [{ rid: null, at: T0 + 10 * S }] }),
    at: T0 + 30 * S,
    state: 'up'
  },
  {
    title: 'overdue inside a maintenance window is not late',
    hb: clock(),
    at: T0 + 70 * S,
    windows: [{ start: T0 + 50 * S, end: T0 + 120 * S }],
    state: 'up'
  },
  {
    title: 'after the window it is late from the window end',
    hb: clock(),
    at: T0 + 125 * S,
    windows: [{ start: T0 + 50 * S, end: T0 + 120 * S }],
    state: 'late'
  },
  {
    title: 'and down a grace after the window end',
    hb: clock(),
    at: T0 + 150 * S,
    windows: [{ start: T0 + 50 * S, end: T0 + 120 * S }],
    state: 'down'
  },
  {
    title: 'a window over the end of grace defers down to its end',
    hb: clock(),
    at: T0 + 100 * S,
    windows: [{ start: T0 + 80 * S, end: T0 + 110 * S }],
    state: 'late'
  }
]

t.test('states on a fake clock', async (t) => {
  for (const row of stateRows) t.equal(heartbeatState(row.hb, row.at, row.windows), row.state, row.title)
})

t.test('the next deadline is the next change of state', async (t) => {
  t.equal(nextDeadline(clock(), T0), T0 + 60 * S)
  t.equal(nextDeadline(clock(), T0 + 60 * S), T0 + 90 * S)
  t.equal(nextDeadline(clock(), T0 + 90 * S), null, 'down stays down until a ping')
  t.equal(nextDeadline(clock({ paused: true }), T0), null)
  t.equal(nextDeadline(clock({ lastPingAt: null, lastSuccessAt: null }), T0), null)
})

t.test('pings: rid pairs a start with its end and reports the run', async (t) => {
  let hb = clock({ lastSuccessAt: null, lastPingAt: null })
  hb = applyPing(hb, { kind: 'start', at: T0, rid: 'a' }).after
  hb = applyPing(hb, { kind: 'start', at: T0 + 5 * S, rid: 'b' }).after
  t.equal(heartbeatState(hb, T0 + 6 * S), 'up', 'a start is a sign of life')
  const endA = applyPing(hb, { kind: 'success', at: T0 + 20 * S, rid: 'a' })
  t.equal(endA.runMs, 20 * S, 'the end with rid a ends the run started with rid a')
  t.same(
    endA.after.openRuns.map((r) => r.rid),
    ['b']
  )
  const endNone = applyPing(hb, { kind: 'success', at: T0 + 20 * S })
  t.equal(endNone.runMs, 15 * S, 'an end without rid ends the newest run')
  const endUnknown = applyPing(hb, { kind: 'success', at: T0 + 20 * S, rid: 'zzz' })
  t.equal(endUnknown.runMs, null, 'an end with an unknown rid ends no run')
  t.equal(endUnknown.after.openRuns.length, 2)
  const fail = applyPing(endA.after, { kind: 'fail', at: T0 + 30 * S, rid: 'b' })
  t.equal(fail.runMs, 25 * S)
  t.equal(heartbeatState(fail.after, T0 + 31 * S), 'down', 'a failure ending a run is down')
  const again = applyPing(fail.after, { kind: 'success', at: T0 + 40 * S })
  t.equal(heartbeatState(again.after, T0 + 41 * S), 'up', 'the next success is up')
  t.equal(again.after.lastSuccessAt, T0 + 40 * S)
})

t.test('a ping unpauses; many starts keep only the newest runs', async (t) => {
  const resumed = applyPing(clock({ paused: true }), { kind: 'success', at: T0 + S }).after
  t.equal(heartbeatState(resumed, T0 + 2 * S), 'up')
  let hb = clock()
  for (let i = 0; i < 25; i++) hb = applyPing(hb, { kind: 'start', at: T0 + i * S, rid: `r${i}` }).after
  t.equal(hb.openRuns.length, 10)
  t.equal(hb.openRuns[0]?.rid, 'r15')
})

t.test('ping suffixes name their kind', async (t) => {
  const rows: [string | undefined, string | null][] = [
    [undefined, 'success'],
    ['start', 'start'],
    ['fail', 'fail'],
    ['0', 'success'],
    ['1', 'fail'],
    ['255', 'fail'],
    ['256', null],
    ['-1', null],
    ['log', null],
    ['0001', null]
  ]
  for (const [suffix, kind] of rows) t.equal(pingKindOf(suffix), kind, String(suffix))
})

t.test('down opens an outage and a success closes it', async (t) => {
  t.equal(heartbeatOutageStep(false, 'down'), 'open')
  t.equal(heartbeatOutageStep(true, 'down'), 'none')
  t.equal(heartbeatOutageStep(true, 'late'), 'none')
  t.equal(heartbeatOutageStep(true, 'up'), 'close')
  t.equal(heartbeatOutageStep(false, 'up'), 'none')
})
