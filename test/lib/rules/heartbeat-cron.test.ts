import t from 'tap'
import {
  heartbeatState,
  nextDeadline,
  nextDue,
  scheduleProblem,
  type HeartbeatClock,
  type HeartbeatState
} from '../../../lib/rules/heartbeat.js'

const at = (iso: string): number => Date.parse(iso)
const BERLIN = { cron: '0 3 * * *', zone: 'Europe/Berlin' }
const HALF_PAST_TWO = { cron: '30 2 * * *', zone: 'Europe/Berlin' }

t.test('cron schedules are validated by croner, each problem naming its field', async (t) => {
  const now = at('2026-11-29T05:00:00Z')
  const rows: [string, string, RegExp | null][] = [
    ['0 3 * * *', 'Europe/Berlin', null],
    ['*/5 * * * *', 'UTC', null],
    ['*/30 * * * * *', 'UTC', null],
    ['*/10 * * * * *', 'UTC', /schedule\.cron.*30 s/],
    ['* * * * * *', 'UTC', /schedule\.cron.*30 s/],
    ['0 0 30 2 *', 'UTC', /schedule\.cron.*never/],
    ['bad', 'UTC', /schedule\.cron.*cron expression/],
    ['0 25 * * *', 'UTC', /schedule\.cron.*cron expression/],
    ['', 'UTC', /schedule\.cron.*characters/],
    [`0 3 * * * ${' '.repeat(100)}`, 'UTC', /schedule\.cron.*characters/],
    ['0 3 * * *', 'Mars/Olympus', /schedule\.zone/],
    ['0 3 * * *', '', /schedule\.zone/]
  ]
  for (const [cron, zone, problem] of rows) {
    const got = scheduleProblem({ cron, zone }, now)
    if (problem === null) t.equal(got, null, `${cron} in ${zone}`)
    else t.match(got, problem, `${cron} in ${zone}`)
  }
})

t.test('cron is due at the first occurrence after the last success, in its zone', async (t) => {
  const rows: [string, { cron: string; zone: string }, string, string][] = [
    ['winter: 03:00 CET is 02:00 UTC', BERLIN, '2026-01-10T12:00:00Z', '2026-01-11T02:00:00Z'],
    ['summer: 03:00 CEST is 01:00 UTC', BERLIN, '2026-07-10T12:00:00Z', '2026-07-11T01:00:00Z'],
    ['a ping at the occurrence waits for the next', BERLIN, '2026-07-11T01:00:00Z', '2026-07-12T01:00:00Z'],
    ['03:00 on 29 March 2026 exists (after the gap): 01:00 UTC', BERLIN, '2026-03-28T12:00:00Z', '2026-03-29T01:00:00Z'],
    ['03:00 on 25 October 2026 is CET: 02:00 UTC', BERLIN, '2026-10-24T12:00:00Z', '2026-10-25T02:00:00Z'],
    ['02:30 in the spring gap fires at 03:00 CEST (01:00 UTC)', HALF_PAST_TWO, '2026-03-28T12:00:00Z', '2026-03-29T01:00:00Z'],
    ['after the gap, 02:30 CEST again (00:30 UTC)', HALF_PAST_TWO, '2026-03-29T01:00:00Z', '2026-03-30T00:30:00Z'],
    ['02:30 twice in autumn fires once, the first (CEST, 00:30 UTC)', HALF_PAST_TWO, '2026-10-24T12:00:00Z', '2026-10-25T00:30:00Z'],
    ['the second 02:30 (CET, 01:30 UTC) is skipped', HALF_PAST_TWO, '2026-10-25T00:30:00Z', '2026-10-26T01:30:00Z']
  ]
  for (const [title, schedule, after, due] of rows) t.equal(nextDue(schedule, at(after)), at(due), title)
})

const clock = (over: Partial<HeartbeatClock>): HeartbeatClock => ({
  schedule: BERLIN,
  graceS: 600,
  maxRuntimeS: null,
  paused: false,
  lastSuccessAt: null,
  lastPingAt: null,
  failed: false,
  openRuns: [],
  ...over
})

const pinged = (iso: string, over: Partial<HeartbeatClock> = {}): HeartbeatClock =>
  clock({ lastSuccessAt: at(iso), lastPingAt: at(iso), ...over })

t.test('cron states on a fake clock across both DST changes of 2026 in Europe/Berlin', async (t) => {
  const rows: [string, HeartbeatClock, string, HeartbeatState][] = [
    ['spring: pinged 28 March 03:00 CET, up before 29 March 03:00 CEST', pinged('2026-03-28T02:00:00Z'), '2026-03-29T00:59:59Z', 'up'],
    ['spring: late at 03:00 CEST (01:00 UTC), one hour less than a day', pinged('2026-03-28T02:00:00Z'), '2026-03-29T01:00:00Z', 'late'],
    ['spring: late within grace', pinged('2026-03-28T02:00:00Z'), '2026-03-29T01:09:59Z', 'late'],
    ['spring: down once grace has passed', pinged('2026-03-28T02:00:00Z'), '2026-03-29T01:10:00Z', 'down'],
    ['spring: a ping at 03:00 CEST makes it up again', pinged('2026-03-29T01:00:30Z'), '2026-03-29T12:00:00Z', 'up'],
    ['autumn: pinged 24 October 03:00 CEST, up at 02:00 CEST', pinged('2026-10-24T01:00:00Z'), '2026-10-25T00:59:59Z', 'up'],
    ['autumn: up an hour on, at the repeated 02:xx CET', pinged('2026-10-24T01:00:00Z'), '2026-10-25T01:59:59Z', 'up'],
    ['autumn: late at 03:00 CET (02:00 UTC), one hour more than a day', pinged('2026-10-24T01:00:00Z'), '2026-10-25T02:00:00Z', 'late'],
    ['autumn: down at 03:10 CET', pinged('2026-10-24T01:00:00Z'), '2026-10-25T02:10:00Z', 'down'],
    ['02:30 autumn: late at the first 02:30', pinged('2026-10-24T00:30:00Z', { schedule: HALF_PAST_TWO }), '2026-10-25T00:30:00Z', 'late'],
    [
      '02:30 autumn: down before the second 02:30 comes',
      pinged('2026-10-24T00:30:00Z', { schedule: HALF_PAST_TWO }),
      '2026-10-25T01:29:59Z',
      'down'
    ],
    ['never pinged is new', clock({}), '2026-10-25T12:00:00Z', 'new'],
    ['paused is paused', pinged('2026-10-24T01:00:00Z', { paused: true }), '2026-10-30T00:00:00Z', 'paused'],
    ['an explicit failure is down before its due time', pinged('2026-10-24T01:00:00Z', { failed: true }), '2026-10-24T02:00:00Z', 'down']
  ]
  for (const [title, hb, now, state] of rows) t.equal(heartbeatState(hb, at(now)), state, title)
})

t.test('cron deadlines: late at the occurrence, down after grace, windows push both', async (t) => {
  const hb = pinged('2026-03-28T02:00:00Z')
  t.equal(nextDeadline(hb, at('2026-03-28T12:00:00Z')), at('2026-03-29T01:00:00Z'))
  t.equal(nextDeadline(hb, at('2026-03-29T01:00:00Z')), at('2026-03-29T01:10:00Z'))
  t.equal(nextDeadline(hb, at('2026-03-29T01:10:00Z')), null)
  const windows = [{ start: at('2026-03-29T00:30:00Z'), end: at('2026-03-29T02:00:00Z') }]
  t.equal(heartbeatState(hb, at('2026-03-29T01:30:00Z'), windows), 'up', 'inside maintenance it is not late')
  t.equal(heartbeatState(hb, at('2026-03-29T02:00:00Z'), windows), 'late', 'late from the window end')
  t.equal(heartbeatState(hb, at('2026-03-29T02:10:00Z'), windows), 'down', 'down grace after the window end')
})

t.test('a cron that fires no more is never due', async (t) => {
  const hb = pinged('2027-06-01T00:00:00Z', { schedule: { cron: '0 0 3 1 1 * 2026', zone: 'UTC' } })
  t.equal(nextDue(hb.schedule, hb.lastSuccessAt as number), Number.POSITIVE_INFINITY)
  t.equal(heartbeatState(hb, at('2030-01-01T00:00:00Z')), 'up')
  t.equal(nextDeadline(hb, at('2030-01-01T00:00:00Z')), null)
})
