import t from 'tap'
import { durationSeconds, outageStep } from '../../../lib/rules/outages.js'
import { uptimePercent, uptimeSummary, UPTIME_WINDOWS } from '../../../lib/rules/uptime.js'

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

t.test('monitored time starts when the site became tracked', async (t) => {
  const since = at('2026-11-22T10:00:00.000Z')
  const outage = { started_at: at('2026-11-22T11:00:00.000Z'), ended_at: at('2026-11-22T11:30:00.000Z') }
  t.same(uptimeSummary([outage], since, NOW), { day: 75, week: 75, month: 75 }, 'tracked two hours ago, down for 30 minutes')
  t.same(uptimeSummary([], NOW, NOW), { day: 100, week: 100, month: 100 }, 'no monitored time yet')
  t.same(
    uptimeSummary([{ started_at: at('2026-11-22T09:00:00.000Z'), ended_at: null }], since, NOW),
    { day: 0, week: 0, month: 0 },
    'an outage from before tracking started counts only from then'
  )
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
