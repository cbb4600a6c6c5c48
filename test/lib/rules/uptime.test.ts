import t from 'tap'
import { durationSeconds, outageStep } from '../../../lib/rules/outages.js'
import { monitoredTime, uptimePercent, uptimeSummary, UPTIME_WINDOWS } from '../../../lib/rules/uptime.js'

const at = (iso: string) => new Date(iso)
const NOW = at('2026-11-22T12:00:00.000Z')
const DAY = UPTIME_WINDOWS.day

t.test('outage transitions follow the decisions table', async (t) => {
  const rows: Array<[boolean, 'up' | 'down' | 'unconfirmed' | 'unavailable', string]> = [
    [false, 'down', 'open'],
    [false, 'up', 'none'],
    [false, 'unconfirmed', 'none'],
    [false, 'unavailable', 'none'],
    [true, 'up', 'close'],
    [true, 'down', 'none'],
    [true, 'unconfirmed', 'none'],
    [true, 'unavailable', 'none']
  ]
  for (const [open, status, step] of rows)
    t.equal(outageStep(open, status), step, `${status} with ${open ? 'an' : 'no'} open outage -> ${step}`)
})

t.test('durations are whole seconds and grow while ongoing', async (t) => {
  t.equal(durationSeconds(at('2026-11-22T10:00:00.000Z'), at('2026-11-22T10:01:30.999Z'), NOW), 90)
  t.equal(durationSeconds(at('2026-11-22T11:59:00.000Z'), null, NOW), 60)
  t.equal(durationSeconds(at('2026-11-22T11:59:00.000Z'), null, new Date(NOW.getTime() + 5000)), 65)
})

t.test('uptime over a window', async (t) => {
  const since = at('2026-01-01T00:00:00.000Z')
  t.equal(uptimePercent([], since, NOW, DAY), 100, 'no outage')
  t.equal(
    uptimePercent([{ started_at: at('2026-11-22T06:00:00.000Z'), ended_at: at('2026-11-22T07:12:00.000Z') }], since, NOW, DAY),
    95,
    '72 minutes of 24 hours down'
  )
  t.equal(
    uptimePercent([{ started_at: at('2026-11-21T11:00:00.000Z'), ended_at: at('2026-11-21T13:00:00.000Z') }], since, NOW, DAY),
    Math.round(100 * (1 - 3600 / 86400) * 1000) / 1000,
    'an outage straddling the window edge counts only inside it'
  )
  t.equal(
    uptimePercent([{ started_at: at('2026-11-22T11:00:00.000Z'), ended_at: null }], since, NOW, DAY),
    Math.round(100 * (1 - 3600 / 86400) * 1000) / 1000,
    'an ongoing outage counts up to now'
  )
  t.equal(
    uptimePercent([{ started_at: at('2026-11-20T00:00:00.000Z'), ended_at: at('2026-11-20T01:00:00.000Z') }], since, NOW, DAY),
    100,
    'an outage before the window does not count'
  )
})

t.test('monitored time starts at the first recorded check', async (t) => {
  const first = at('2026-11-22T10:00:00.000Z')
  const outage = { started_at: at('2026-11-22T11:00:00.000Z'), ended_at: at('2026-11-22T11:30:00.000Z') }
  const rows: Array<[string, Parameters<typeof uptimeSummary>, number]> = [
    ['first check two hours ago, down for 30 minutes', [[outage], first, NOW], 75],
    ['no check yet: nothing monitored', [[], null, NOW], 100],
    ['an ongoing outage since the first check', [[{ started_at: first, ended_at: null }], first, NOW], 0],
    ['the first check is now: nothing monitored yet', [[], NOW, NOW], 100],
    [
      'an outage from before the first check counts only from it',
      [[{ started_at: at('2026-11-22T09:00:00.000Z'), ended_at: null }], first, NOW],
      0
    ],
    [
      'a first check older than every window',
      [[outage], at('2026-01-01T00:00:00.000Z'), NOW],
      Math.round(100 * (1 - 1800 / 86400) * 1000) / 1000
    ]
  ]
  for (const [name, args, day] of rows) t.equal(uptimeSummary(...args).day, day, name)
  t.same(uptimeSummary([outage], first, NOW), { day: 75, week: 75, month: 75 }, 'every window starts at the first check')
})

t.test('a site added 30 s before its first check, down since: 0%, not 40%', async (t) => {
  const added = at('2026-11-22T11:59:00.000Z')
  const firstCheck = new Date(added.getTime() + 30_000)
  const now = new Date(firstCheck.getTime() + 20_000)
  const outage = { started_at: firstCheck, ended_at: null }
  t.equal(uptimePercent([outage], firstCheck, now, DAY), 0, 'monitored from the first check')
  t.equal(uptimePercent([outage], added, now, DAY), 60, 'counting from when it was added would have shown 60%')
})

t.test('monitored time inside a window', async (t) => {
  const ms = (iso: string) => at(iso).getTime()
  const from = ms('2026-11-01T00:00:00.000Z')
  const to = ms('2026-11-02T00:00:00.000Z')
  const rows: Array<[string, Parameters<typeof monitoredTime>, { monitoredMs: number; downMs: number }]> = [
    ['whole window, no outage', [[], at('2026-10-01T00:00:00.000Z'), from, to, to], { monitoredMs: DAY, downMs: 0 }],
    ['first check mid-window', [[], at('2026-11-01T18:00:00.000Z'), from, to, to], { monitoredMs: 6 * 3_600_000, downMs: 0 }],
    ['window before the first check', [[], at('2026-11-05T00:00:00.000Z'), from, to, to], { monitoredMs: 0, downMs: 0 }],
    ['never checked', [[], null, from, to, to], { monitoredMs: 0, downMs: 0 }],
    [
      'now inside the window ends it',
      [[], at('2026-10-01T00:00:00.000Z'), from, to, ms('2026-11-01T12:00:00.000Z')],
      { monitoredMs: DAY / 2, downMs: 0 }
    ],
    [
      'an ongoing outage lasts until now',
      [
        [{ started_at: at('2026-11-01T10:00:00.000Z'), ended_at: null }],
        at('2026-10-01T00:00:00.000Z'),
        from,
        to,
        ms('2026-11-01T12:00:00.000Z')
      ],
      { monitoredMs: DAY / 2, downMs: 2 * 3_600_000 }
    ]
  ]
  for (const [name, args, want] of rows) t.match(monitoredTime(...args), want, name)
})

t.test('uptime is rounded to three decimals and never above 100', async (t) => {
  const since = at('2026-01-01T00:00:00.000Z')
  const blip = { started_at: at('2026-11-22T11:59:59.990Z'), ended_at: at('2026-11-22T11:59:59.999Z') }
  t.equal(uptimePercent([blip], since, NOW, DAY), 100, '9 ms of a day rounds to 100')
  const oneSecond = { started_at: at('2026-11-22T11:00:00.000Z'), ended_at: at('2026-11-22T11:00:01.000Z') }
  t.equal(uptimePercent([oneSecond], since, NOW, DAY), 99.999, 'one second of a day')
  t.equal(uptimePercent([oneSecond], since, NOW, UPTIME_WINDOWS.week), 100, 'one second of a week rounds to 100')
  const future = { started_at: at('2026-11-23T00:00:00.000Z'), ended_at: null }
  t.equal(uptimePercent([future], since, NOW, DAY), 100, 'nothing counts after now')
})
