import t from 'tap'
import { dailyUptime, firstDayStart, PAGE_DAYS, type DayUptime, type OutageMs } from '../../../lib/rules/daily-uptime.js'
import type { Interval } from '../../../lib/rules/intervals.js'
import { monitoredTime, uptimeFigure } from '../../../lib/rules/uptime.js'

const HOUR = 3_600_000
const DAY = 24 * HOUR
const at = (iso: string) => Date.parse(iso)
/** Noon on the page's last day: today is half over. */
const NOW = at('2026-11-28T12:00:00.000Z')
const LONG_AGO = at('2025-01-01T00:00:00.000Z')

/** The bar of one date. */
function day(days: readonly DayUptime[], date: string): DayUptime | undefined {
  return days.find((d) => d.date === date)
}

t.test('the 90 days run oldest first to today', async (t) => {
  const days = dailyUptime({ outages: [], firstCheckedAt: LONG_AGO, now: NOW })
  t.equal(days.length, PAGE_DAYS)
  t.equal(days[0]?.date, '2026-08-31', 'the oldest is 89 days before today')
  t.equal(days.at(-1)?.date, '2026-11-28', 'the newest is today')
  t.ok(
    days.every((d) => d.uptime_percent === 100 && d.down_seconds === 0 && d.outages === 0),
    'no outage: every day 100'
  )
  t.equal(firstDayStart(NOW), at('2026-08-31T00:00:00.000Z'))
})

t.test('the must-have rows', async (t) => {
  const rows: Array<{
    name: string
    outages: OutageMs[]
    first?: number | null
    maintenance?: Interval[]
    expect: Record<string, Partial<DayUptime>>
  }> = [
    {
      name: 'a day with a 6-hour outage shows 75',
      outages: [{ started: at('2026-11-20T06:00:00Z'), ended: at('2026-11-20T12:00:00Z') }],
      expect: {
        '2026-11-19': { uptime_percent: 100, outages: 0 },
        '2026-11-20': { uptime_percent: 75, down_seconds: 6 * 3600, outages: 1 },
        '2026-11-21': { uptime_percent: 100, outages: 0 }
      }
    },
    {
      name: 'an outage across midnight splits between the two days',
      outages: [{ started: at('2026-11-20T21:00:00Z'), ended: at('2026-11-21T03:00:00Z') }],
      expect: {
        '2026-11-20': { uptime_percent: 87.5, down_seconds: 3 * 3600, outages: 1 },
        '2026-11-21': { uptime_percent: 87.5, down_seconds: 3 * 3600, outages: 1 }
      }
    },
    {
      name: 'a day before the first check has no data; the first day counts from it',
      outages: [],
      first: at('2026-11-10T18:00:00Z'),
      expect: {
        '2026-08-31': { uptime_percent: null, down_seconds: 0, outages: 0 },
        '2026-11-09': { uptime_percent: null },
        '2026-11-10': { uptime_percent: 100 },
        '2026-11-11': { uptime_percent: 100 }
      }
    },
    {
      name: 'a site never checked has no data on any day',
      outages: [],
      first: null,
      expect: { '2026-11-28': { uptime_percent: null }, '2026-11-01': { uptime_percent: null } }
    },
    {
      name: 'a maintenance hour inside a 6-hour outage is neither monitored nor down: 5 of 23 hours',
      outages: [{ started: at('2026-11-20T06:00:00Z'), ended: at('2026-11-20T12:00:00Z') }],
      maintenance: [{ from: at('2026-11-20T08:00:00Z'), to: at('2026-11-20T09:00:00Z') }],
      expect: { '2026-11-20': { uptime_percent: uptimeFigure(5 * HOUR, 23 * HOUR), down_seconds: 5 * 3600, outages: 1 } }
    },
    {
      name: 'an outage wholly inside maintenance is not counted',
      outages: [{ started: at('2026-11-20T08:00:00Z'), ended: at('2026-11-20T08:30:00Z') }],
      maintenance: [{ from: at('2026-11-20T08:00:00Z'), to: at('2026-11-20T09:00:00Z') }],
      expect: { '2026-11-20': { uptime_percent: 100, down_seconds: 0, outages: 0 } }
    },
    {
      name: 'a day wholly under maintenance has no data',
      outages: [],
      maintenance: [{ from: at('2026-11-19T00:00:00Z'), to: at('2026-11-20T00:00:00Z') }],
      expect: { '2026-11-19': { uptime_percent: null }, '2026-11-20': { uptime_percent: 100 } }
    },
    {
      name: 'today counts only so far: an ongoing outage since 09:00 is 3 of 12 hours',
      outages: [{ started: at('2026-11-28T09:00:00Z'), ended: null }],
      expect: { '2026-11-28': { uptime_percent: 75, down_seconds: 3 * 3600, outages: 1 } }
    },
    {
      name: 'an ongoing outage since before the 90 days makes every day 0',
      outages: [{ started: at('2026-06-01T00:00:00Z'), ended: null }],
      expect: {
        '2026-08-31': { uptime_percent: 0, down_seconds: 86_400, outages: 1 },
        '2026-11-28': { uptime_percent: 0, down_seconds: 12 * 3600, outages: 1 }
      }
    },
    {
      name: 'two outages in a day both count',
      outages: [
        { started: at('2026-11-20T01:00:00Z'), ended: at('2026-11-20T02:00:00Z') },
        { started: at('2026-11-20T05:00:00Z'), ended: at('2026-11-20T06:00:00Z') }
      ],
      expect: { '2026-11-20': { down_seconds: 7200, outages: 2 } }
    },
    {
      name: 'an outage ending exactly at midnight does not reach the next day',
      outages: [{ started: at('2026-11-20T18:00:00Z'), ended: at('2026-11-21T00:00:00Z') }],
      expect: { '2026-11-20': { uptime_percent: 75, outages: 1 }, '2026-11-21': { uptime_percent: 100, outages: 0 } }
    }
  ]
  for (const row of rows) {
    const days = dailyUptime({
      outages: row.outages,
      firstCheckedAt: row.first === undefined ? LONG_AGO : row.first,
      maintenance: row.maintenance,
      now: NOW
    })
    for (const [date, want] of Object.entries(row.expect)) t.match(day(days, date), { date, ...want }, `${row.name}: ${date}`)
  }
})

t.test('each day agrees with the status record rule over the same span', async (t) => {
  // A deterministic flapping history: outages of 1 s to 30 h, some across midnight, with maintenance.
  let x = 20261128
  const next = () => {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    return (x >>> 0) / 2 ** 32
  }
  const outages: OutageMs[] = []
  for (let start = at('2026-08-01T00:00:00Z') + next() * DAY; start < NOW;) {
    const end = start + 1000 + next() * 30 * HOUR
    outages.push({ started: start, ended: end >= NOW ? null : end })
    start = end + next() * 3 * DAY
  }
  const maintenance: Interval[] = []
  for (let s = at('2026-09-02T02:00:00Z'); s < NOW; s += 7 * DAY) maintenance.push({ from: s, to: s + 2 * HOUR })
  const first = at('2026-09-10T10:17:00Z')
  const days = dailyUptime({ outages, firstCheckedAt: first, maintenance, now: NOW })
  const spans = outages.map((o) => ({ started_at: new Date(o.started), ended_at: o.ended === null ? null : new Date(o.ended) }))
  let mismatches = 0
  days.forEach((d, i) => {
    const from = firstDayStart(NOW) + i * DAY
    const want = monitoredTime(spans, new Date(first), from, from + DAY, NOW, maintenance)
    const percent = want.monitoredMs > 0 ? uptimeFigure(want.downMs, want.monitoredMs) : null
    if (d.uptime_percent !== percent || d.down_seconds !== Math.floor(want.downMs / 1000)) mismatches++
  })
  t.equal(mismatches, 0, 'every one of the 90 days as monitoredTime says')
  t.ok(
    days.some((d) => d.uptime_percent !== null && d.uptime_percent < 100),
    'the history has down days'
  )
})
