import t from 'tap'
import { unionIntervals, type Interval } from '../../../lib/rules/intervals.js'
import {
  maintenanceAt,
  maintenanceIntervals,
  mayOpenOutage,
  parseMaintenanceWindow,
  windowOccurrences,
  type MaintenanceWindow,
  type WeeklySchedule
} from '../../../lib/rules/maintenance.js'
import { outageTransition } from '../../../lib/rules/outages.js'
import { slaFigures, type OutageInterval } from '../../../lib/rules/sla.js'
import { uptimeSummary } from '../../../lib/rules/uptime.js'

const ms = (iso: string): number => Date.parse(iso)
const span = (from: string, to: string): Interval => ({ from: ms(from), to: ms(to) })
const iso = (i: Interval): [string, string] => [new Date(i.from).toISOString(), new Date(i.to).toISOString()]
const once = (from: string, to: string, reason: string | null = null): MaintenanceWindow => ({
  from: new Date(from),
  to: new Date(to),
  reason
})
const weekly = (
  day: WeeklySchedule['day'],
  time: string,
  duration_minutes: number,
  zone: string,
  reason: string | null = null
): MaintenanceWindow => ({
  weekly: { day, time, duration_minutes, zone },
  reason
})
const outage = (started: string, ended: string | null): OutageInterval => ({
  started: ms(started),
  ended: ended === null ? null : ms(ended)
})

t.test('weekly windows keep their local time across DST changes', async (t) => {
  const rows: Array<[string, MaintenanceWindow, string, string, Array<[string, string]>]> = [
    [
      'Europe/Berlin, March: 02:00 CET, then 02:00 skipped (read as 03:00 CEST), then 02:00 CEST',
      weekly('sun', '02:00', 60, 'Europe/Berlin'),
      '2026-03-20T00:00:00Z',
      '2026-04-06T00:00:00Z',
      [
        ['2026-03-22T01:00:00.000Z', '2026-03-22T02:00:00.000Z'],
        ['2026-03-29T01:00:00.000Z', '2026-03-29T02:00:00.000Z'],
        ['2026-04-05T00:00:00.000Z', '2026-04-05T01:00:00.000Z']
      ]
    ],
    [
      'Europe/Berlin, a Tuesday 02:00 window on either side of the March change',
      weekly('tue', '02:00', 30, 'Europe/Berlin'),
      '2026-03-23T00:00:00Z',
      '2026-04-01T00:00:00Z',
      [
        ['2026-03-24T01:00:00.000Z', '2026-03-24T01:30:00.000Z'],
        ['2026-03-31T00:00:00.000Z', '2026-03-31T00:30:00.000Z']
      ]
    ],
    [
      'Europe/Berlin, March: a skipped 02:30 is read with the offset before the gap (03:30 CEST)',
      weekly('sun', '02:30', 30, 'Europe/Berlin'),
      '2026-03-29T00:00:00Z',
      '2026-03-30T00:00:00Z',
      [['2026-03-29T01:30:00.000Z', '2026-03-29T02:00:00.000Z']]
    ],
    [
      'Europe/Berlin, October: the doubled 02:30 is its first occurrence (CEST), once',
      weekly('sun', '02:30', 30, 'Europe/Berlin'),
      '2026-10-17T00:00:00Z',
      '2026-11-02T00:00:00Z',
      [
        ['2026-10-18T00:30:00.000Z', '2026-10-18T01:00:00.000Z'],
        ['2026-10-25T00:30:00.000Z', '2026-10-25T01:00:00.000Z'],
        ['2026-11-01T01:30:00.000Z', '2026-11-01T02:00:00.000Z']
      ]
    ],
    [
      'Europe/Berlin, October: the duration is elapsed time (01:00 CEST plus 3 h ends at 03:00 CET)',
      weekly('sun', '01:00', 180, 'Europe/Berlin'),
      '2026-10-25T00:00:00Z',
      '2026-10-26T00:00:00Z',
      [['2026-10-24T23:00:00.000Z', '2026-10-25T02:00:00.000Z']]
    ],
    [
      'America/New_York, March: the skipped 02:30 on the change day is 03:30 EDT',
      weekly('sun', '02:30', 30, 'America/New_York'),
      '2026-03-01T00:00:00Z',
      '2026-03-16T00:00:00Z',
      [
        ['2026-03-01T07:30:00.000Z', '2026-03-01T08:00:00.000Z'],
        ['2026-03-08T07:30:00.000Z', '2026-03-08T08:00:00.000Z'],
        ['2026-03-15T06:30:00.000Z', '2026-03-15T07:00:00.000Z']
      ]
    ],
    [
      'America/New_York, November: the doubled 01:30 is 01:30 EDT; a week later 01:30 EST',
      weekly('sun', '01:30', 30, 'America/New_York'),
      '2026-10-31T00:00:00Z',
      '2026-11-09T00:00:00Z',
      [
        ['2026-11-01T05:30:00.000Z', '2026-11-01T06:00:00.000Z'],
        ['2026-11-08T06:30:00.000Z', '2026-11-08T07:00:00.000Z']
      ]
    ],
    [
      'a window that started before the range and overlaps it is returned whole',
      weekly('mon', '23:00', 120, 'UTC'),
      '2026-11-03T00:30:00Z',
      '2026-11-04T00:00:00Z',
      [['2026-11-02T23:00:00.000Z', '2026-11-03T01:00:00.000Z']]
    ],
    [
      'a window ending exactly at the start of the range is not in it',
      weekly('mon', '23:00', 120, 'UTC'),
      '2026-11-03T01:00:00Z',
      '2026-11-09T00:00:00Z',
      []
    ],
    [
      'a window starting exactly at the end of the range is not in it',
      weekly('mon', '23:00', 120, 'UTC'),
      '2026-11-03T01:00:00Z',
      '2026-11-09T23:00:00Z',
      []
    ]
  ]
  for (const [name, window, from, to, want] of rows) t.same(windowOccurrences(window, ms(from), ms(to)).map(iso), want, name)
})

t.test('a weekly window over the DST months, as SLA time', async (t) => {
  const hourly = weekly('sun', '02:00', 60, 'Europe/Berlin')
  const seconds = (from: string, to: string) =>
    maintenanceIntervals([hourly], ms(from), ms(to)).reduce((sum, i) => sum + (i.to - i.from) / 1000, 0)
  t.equal(
    seconds('2026-03-01T00:00:00Z', '2026-04-01T00:00:00Z'),
    5 * 3600,
    'March 2026: five Sundays, an hour each, the change day included'
  )
  t.equal(seconds('2026-10-01T00:00:00Z', '2026-11-01T00:00:00Z'), 4 * 3600, 'October 2026: four Sundays, the doubled hour once')
})

t.test('one-off windows hold their start and not their end', async (t) => {
  const w = once('2026-11-03T10:00:00Z', '2026-11-03T11:00:00Z')
  const rows: Array<[string, string, string, number]> = [
    ['overlapping', '2026-11-03T10:30:00Z', '2026-11-03T12:00:00Z', 1],
    ['ending at its start', '2026-11-03T09:00:00Z', '2026-11-03T10:00:00Z', 0],
    ['starting at its end', '2026-11-03T11:00:00Z', '2026-11-03T12:00:00Z', 0],
    ['inside it', '2026-11-03T10:10:00Z', '2026-11-03T10:20:00Z', 1]
  ]
  for (const [name, from, to, n] of rows) t.equal(windowOccurrences(w, ms(from), ms(to)).length, n, name)
})

t.test('overlapping and touching windows merge into sorted, disjoint intervals', async (t) => {
  const windows = [
    once('2026-11-03T12:00:00Z', '2026-11-03T13:00:00Z'),
    once('2026-11-03T10:00:00Z', '2026-11-03T11:00:00Z'),
    once('2026-11-03T10:30:00Z', '2026-11-03T12:00:00Z'),
    once('2026-11-03T15:00:00Z', '2026-11-03T16:00:00Z'),
    weekly('tue', '15:30', 60, 'UTC')
  ]
  t.same(maintenanceIntervals(windows, ms('2026-11-03T00:00:00Z'), ms('2026-11-04T00:00:00Z')).map(iso), [
    ['2026-11-03T10:00:00.000Z', '2026-11-03T13:00:00.000Z'],
    ['2026-11-03T15:00:00.000Z', '2026-11-03T16:30:00.000Z']
  ])
  t.same(
    maintenanceIntervals(windows, ms('2026-11-03T10:30:00Z'), ms('2026-11-03T15:10:00Z')).map(iso),
    [
      ['2026-11-03T10:30:00.000Z', '2026-11-03T13:00:00.000Z'],
      ['2026-11-03T15:00:00.000Z', '2026-11-03T15:10:00.000Z']
    ],
    'cut to the range asked'
  )
  t.same(unionIntervals([span('2026-11-03T10:00:00Z', '2026-11-03T10:00:00Z')]), [], 'an empty interval vanishes')
})

t.test('the maintenance in force at an instant', async (t) => {
  const windows = [
    once('2026-11-03T10:00:00Z', '2026-11-03T11:00:00Z', 'deploy'),
    once('2026-11-03T10:30:00Z', '2026-11-03T12:00:00Z', 'database'),
    once('2026-11-03T12:00:00Z', '2026-11-03T13:00:00Z'),
    weekly('wed', '02:00', 30, 'Europe/Berlin', 'weekly')
  ]
  const rows: Array<[string, string, { until: string; reason: string | null } | null]> = [
    ['before any window', '2026-11-03T09:59:59.999Z', null],
    [
      'at the first start: until the end of the windows joined to it',
      '2026-11-03T10:00:00.000Z',
      { until: '2026-11-03T13:00:00.000Z', reason: 'deploy' }
    ],
    [
      'two in force: the reason of the one that started first',
      '2026-11-03T10:45:00.000Z',
      { until: '2026-11-03T13:00:00.000Z', reason: 'deploy' }
    ],
    [
      'at the end of the first: the second is in force',
      '2026-11-03T11:00:00.000Z',
      { until: '2026-11-03T13:00:00.000Z', reason: 'database' }
    ],
    ['a window without a reason', '2026-11-03T12:00:00.000Z', { until: '2026-11-03T13:00:00.000Z', reason: null }],
    ['at the last end: over', '2026-11-03T13:00:00.000Z', null],
    ['a weekly window, in its zone (02:00 CET)', '2026-11-04T01:10:00.000Z', { until: '2026-11-04T01:30:00.000Z', reason: 'weekly' }],
    ['at the weekly end: over', '2026-11-04T01:30:00.000Z', null]
  ]
  for (const [name, at, want] of rows) {
    const got = maintenanceAt(windows, ms(at))
    t.same(got === null ? null : { until: new Date(got.until).toISOString(), reason: got.reason }, want, name)
  }
  const always = maintenanceAt([weekly('mon', '00:00', 7 * 24 * 60, 'UTC')], ms('2026-11-04T00:00:00Z'))
  t.ok(always !== null && always.until > ms('2026-11-04T00:00:00Z'), 'a whole-week window is always in force, until a time ahead')
})

t.test('outages do not open during maintenance; an open one closes as usual', async (t) => {
  const windows = [once('2026-11-03T10:00:00Z', '2026-11-03T11:00:00Z')]
  t.equal(mayOpenOutage(windows, ms('2026-11-03T09:59:59.999Z')), true, 'just before')
  t.equal(mayOpenOutage(windows, ms('2026-11-03T10:00:00Z')), false, 'at the start')
  t.equal(mayOpenOutage(windows, ms('2026-11-03T10:59:59.999Z')), false, 'just before the end')
  t.equal(mayOpenOutage(windows, ms('2026-11-03T11:00:00Z')), true, 'at the end')

  const at = (iso: string) => ({ status: 'down' as const, checkedAt: new Date(iso) })
  const inWindow = (iso: string) => ({ inMaintenance: !mayOpenOutage(windows, ms(iso)) })
  const quiet = { checkedAt: null, open: null }
  t.same(
    outageTransition(quiet, at('2026-11-03T10:30:00Z'), inWindow('2026-11-03T10:30:00Z')),
    {
      change: { kind: 'none' },
      after: { checkedAt: new Date('2026-11-03T10:30:00Z'), open: null }
    },
    'a down check inside the window opens nothing'
  )
  t.same(
    outageTransition(
      { checkedAt: new Date('2026-11-03T10:59:00Z'), open: null },
      at('2026-11-03T11:00:00Z'),
      inWindow('2026-11-03T11:00:00Z')
    ),
    {
      change: { kind: 'open', at: new Date('2026-11-03T11:00:00Z') },
      after: { checkedAt: new Date('2026-11-03T11:00:00Z'), open: { started_at: new Date('2026-11-03T11:00:00Z') } }
    },
    'still down at the end: the next down check opens it, at its own time'
  )
  const open = { checkedAt: new Date('2026-11-03T09:59:00Z'), open: { started_at: new Date('2026-11-03T09:00:00Z') } }
  t.same(
    outageTransition(open, at('2026-11-03T10:30:00Z'), inWindow('2026-11-03T10:30:00Z')).after.open,
    open.open,
    'an open outage stays open'
  )
  t.same(
    outageTransition(open, { status: 'up', checkedAt: new Date('2026-11-03T10:30:00Z') }, inWindow('2026-11-03T10:30:00Z')).change,
    {
      kind: 'close',
      at: new Date('2026-11-03T10:30:00Z'),
      outage: open.open
    },
    'and closes at the first up check, in the window or not'
  )
})

t.test('SLA figures with maintenance', async (t) => {
  type Want = {
    uptime_percent: number
    monitored_seconds: number
    maintenance_seconds: number
    downtime_seconds: number
    incidents: number
    longest_outage_seconds: number
    mttr_seconds: number | null
  }
  const H = 3600
  const day = { from: '2026-11-03T00:00:00Z', to: '2026-11-04T00:00:00Z' }
  const october = { from: '2026-10-01T00:00:00Z', to: '2026-11-01T00:00:00Z' }
  const november = { from: '2026-11-01T00:00:00Z', to: '2026-12-01T00:00:00Z' }
  const acrossMonths = [once('2026-10-31T22:00:00Z', '2026-11-01T04:00:00Z')]
  const acrossOutage = outage('2026-10-31T21:00:00Z', '2026-11-01T01:00:00Z')
  const rows: Array<[string, { from: string; to: string }, OutageInterval[], MaintenanceWindow[], Want]> = [
    [
      'a window that starts inside an outage: down before it counts, inside it does not',
      day,
      [outage('2026-11-03T10:00:00Z', '2026-11-03T12:00:00Z')],
      [once('2026-11-03T11:00:00Z', '2026-11-03T13:00:00Z')],
      {
        uptime_percent: Math.round(100 * (1 - 1 / 22) * 1000) / 1000,
        monitored_seconds: 22 * H,
        maintenance_seconds: 2 * H,
        downtime_seconds: H,
        incidents: 1,
        longest_outage_seconds: H,
        mttr_seconds: 2 * H
      }
    ],
    [
      'an outage opened before a window and still open after it: down outside the window only',
      day,
      [outage('2026-11-03T10:00:00Z', '2026-11-03T14:00:00Z')],
      [once('2026-11-03T11:00:00Z', '2026-11-03T13:00:00Z')],
      {
        uptime_percent: Math.round(100 * (1 - 2 / 22) * 1000) / 1000,
        monitored_seconds: 22 * H,
        maintenance_seconds: 2 * H,
        downtime_seconds: 2 * H,
        incidents: 1,
        longest_outage_seconds: 2 * H,
        mttr_seconds: 4 * H
      }
    ],
    [
      'a one-off window across a month boundary, October: its two hours out, the outage down until it',
      october,
      [acrossOutage],
      acrossMonths,
      {
        uptime_percent: Math.round(100 * (1 - 1 / (31 * 24 - 2)) * 1000) / 1000,
        monitored_seconds: (31 * 24 - 2) * H,
        maintenance_seconds: 2 * H,
        downtime_seconds: H,
        incidents: 1,
        longest_outage_seconds: H,
        mttr_seconds: null
      }
    ],
    [
      'the same window, November: its four hours out, the outage hidden in it',
      november,
      [acrossOutage],
      acrossMonths,
      {
        uptime_percent: 100,
        monitored_seconds: (30 * 24 - 4) * H,
        maintenance_seconds: 4 * H,
        downtime_seconds: 0,
        incidents: 0,
        longest_outage_seconds: 0,
        mttr_seconds: null
      }
    ],
    [
      'a window covering the whole SLA window: 100%, nothing monitored, all maintenance',
      day,
      [outage('2026-11-03T08:00:00Z', null)],
      [once('2026-11-02T00:00:00Z', '2026-11-05T00:00:00Z')],
      {
        uptime_percent: 100,
        monitored_seconds: 0,
        maintenance_seconds: 24 * H,
        downtime_seconds: 0,
        incidents: 0,
        longest_outage_seconds: 0,
        mttr_seconds: null
      }
    ],
    [
      'overlapping windows count once',
      day,
      [],
      [once('2026-11-03T10:00:00Z', '2026-11-03T12:00:00Z'), once('2026-11-03T11:00:00Z', '2026-11-03T13:00:00Z')],
      {
        uptime_percent: 100,
        monitored_seconds: 21 * H,
        maintenance_seconds: 3 * H,
        downtime_seconds: 0,
        incidents: 0,
        longest_outage_seconds: 0,
        mttr_seconds: null
      }
    ]
  ]
  for (const [name, w, outages, windows, want] of rows) {
    const from = new Date(w.from)
    const to = new Date(w.to)
    const { outages: _listed, ...figures } = slaFigures({
      outages,
      firstCheckedAt: new Date('2026-01-01T00:00:00Z'),
      from,
      to,
      until: new Date('2027-01-01T00:00:00Z'),
      maintenance: maintenanceIntervals(windows, from.getTime(), to.getTime())
    })
    t.same(figures, want, name)
  }
})

t.test('SLA maintenance before the first check is not monitored time either', async (t) => {
  const from = new Date('2026-11-03T00:00:00Z')
  const to = new Date('2026-11-04T00:00:00Z')
  const got = slaFigures({
    outages: [],
    firstCheckedAt: new Date('2026-11-03T12:00:00Z'),
    from,
    to,
    until: to,
    maintenance: maintenanceIntervals([once('2026-11-03T10:00:00Z', '2026-11-03T14:00:00Z')], from.getTime(), to.getTime())
  })
  t.equal(got.monitored_seconds, 10 * 3600)
  t.equal(got.maintenance_seconds, 2 * 3600, 'only the part after the first check')
})

t.test('without maintenance the SLA is what it was, and says nothing of maintenance', async (t) => {
  const input = {
    outages: [outage('2026-11-03T10:00:00Z', '2026-11-03T12:00:00Z')],
    firstCheckedAt: new Date('2026-01-01T00:00:00Z'),
    from: new Date('2026-11-03T00:00:00Z'),
    to: new Date('2026-11-04T00:00:00Z'),
    until: new Date('2027-01-01T00:00:00Z')
  }
  const before = slaFigures(input)
  t.notOk('maintenance_seconds' in before)
  const { maintenance_seconds, ...withNone } = slaFigures({ ...input, maintenance: [] })
  t.equal(maintenance_seconds, 0)
  t.same(withNone, before)
})

t.test('validation of a window', async (t) => {
  const shape =
    'a maintenance window has either "from" and "to", or "weekly" with "day", "time", "duration_minutes" and "zone"; "reason" is optional'
  const accepted: Array<[string, unknown, unknown]> = [
    [
      'a one-off window',
      { from: '2026-11-03T02:00:00Z', to: '2026-11-03T02:30:00+00:00', reason: 'deploy' },
      { from: new Date('2026-11-03T02:00:00Z'), to: new Date('2026-11-03T02:30:00Z'), reason: 'deploy' }
    ],
    [
      'exactly 31 days',
      { from: '2026-10-01', to: '2026-11-01' },
      { from: new Date('2026-10-01T00:00:00Z'), to: new Date('2026-11-01T00:00:00Z'), reason: null }
    ],
    [
      'a weekly window, its zone in canonical spelling',
      { weekly: { day: 'tue', time: '02:00', duration_minutes: 30, zone: 'europe/berlin' } },
      { weekly: { day: 'tue', time: '02:00', duration_minutes: 30, zone: 'Europe/Berlin' }, reason: null }
    ],
    [
      'a whole week in UTC',
      { weekly: { day: 'sun', time: '23:59', duration_minutes: 10_080, zone: 'UTC' }, reason: null },
      { weekly: { day: 'sun', time: '23:59', duration_minutes: 10_080, zone: 'UTC' }, reason: null }
    ]
  ]
  for (const [name, input, value] of accepted) t.same(parseMaintenanceWindow(input), { ok: true, value }, name)
  const weeklyOf = (w: object) => ({ weekly: { day: 'tue', time: '02:00', duration_minutes: 30, zone: 'UTC', ...w } })
  const refused: Array<[string, unknown, string]> = [
    ['not an object', 'tuesdays', shape],
    ['neither kind', { reason: 'x' }, shape],
    ['from without to', { from: '2026-11-03T02:00:00Z' }, shape],
    ['both kinds', { from: '2026-11-03T02:00:00Z', to: '2026-11-03T03:00:00Z', weekly: weeklyOf({}).weekly }, shape],
    [
      'an unknown field',
      { from: '2026-11-03T02:00:00Z', to: '2026-11-03T03:00:00Z', every: 'day' },
      `${shape}; "every" is not one of its fields`
    ],
    [
      'a local time without a zone',
      { from: '2026-11-03T02:00:00', to: '2026-11-03T03:00:00Z' },
      '"from" must be an ISO 8601 date-time with a time zone from 1970 to 9999, such as 2026-11-01T02:00:00Z'
    ],
    [
      'a number for an instant',
      { from: '2026-11-03T02:00:00Z', to: 1_762_000_000 },
      '"to" must be an ISO 8601 date-time with a time zone from 1970 to 9999, such as 2026-11-01T02:00:00Z'
    ],
    ['from after to', { from: '2026-11-03T03:00:00Z', to: '2026-11-03T02:00:00Z' }, '"from" must be before "to"'],
    ['from equal to to', { from: '2026-11-03T03:00:00Z', to: '2026-11-03T03:00:00Z' }, '"from" must be before "to"'],
    ['over 31 days', { from: '2026-10-01', to: '2026-11-01T00:00:01Z' }, '"to" must be at most 31 days after "from"'],
    [
      'an empty reason',
      { from: '2026-11-03T02:00:00Z', to: '2026-11-03T03:00:00Z', reason: '' },
      '"reason" must be 1 to 200 printable characters'
    ],
    [
      'a reason with a control character',
      { from: '2026-11-03T02:00:00Z', to: '2026-11-03T03:00:00Z', reason: 'a\nb' },
      '"reason" must be 1 to 200 printable characters'
    ],
    ['a day by full name', weeklyOf({ day: 'tuesday' }), '"weekly.day" must be one of mon, tue, wed, thu, fri, sat, sun'],
    ['an hour without its zero', weeklyOf({ time: '2:00' }), '"weekly.time" must be a local time HH:MM, such as 02:00'],
    ['24:00', weeklyOf({ time: '24:00' }), '"weekly.time" must be a local time HH:MM, such as 02:00'],
    ['no duration', weeklyOf({ duration_minutes: undefined }), '"weekly.duration_minutes" is required'],
    ['a zero duration', weeklyOf({ duration_minutes: 0 }), '"weekly.duration_minutes" must be a whole number of minutes from 1 to 10080'],
    [
      'a duration as text',
      weeklyOf({ duration_minutes: '30' }),
      '"weekly.duration_minutes" must be a whole number of minutes from 1 to 10080'
    ],
    ['over a week', weeklyOf({ duration_minutes: 10_081 }), '"weekly.duration_minutes" must be a whole number of minutes from 1 to 10080'],
    ['an unknown zone', weeklyOf({ zone: 'Mars/Olympus_Mons' }), '"weekly.zone" must be an IANA time zone such as Europe/Berlin or UTC'],
    ['an offset is not a zone', weeklyOf({ zone: '+01:00' }), '"weekly.zone" must be an IANA time zone such as Europe/Berlin or UTC'],
    ['a weekly field unknown', weeklyOf({ week: 2 }), '"weekly" may hold only "day", "time", "duration_minutes" and "zone", not "week"']
  ]
  for (const [name, input, error] of refused) t.same(parseMaintenanceWindow(input), { ok: false, error }, name)
})

t.test('uptime leaves maintenance out of the monitored and the outage time', async (t) => {
  const now = new Date('2026-11-04T00:00:00Z')
  const outages = [{ started_at: new Date('2026-11-03T10:00:00Z'), ended_at: new Date('2026-11-03T12:00:00Z') }]
  const first = new Date('2026-11-03T00:00:00Z')
  const hidden = maintenanceIntervals(
    [once('2026-11-03T11:00:00Z', '2026-11-03T13:00:00Z')],
    now.getTime() - 30 * 86_400_000,
    now.getTime()
  )
  const round = (p: number) => Math.round(p * 1000) / 1000
  t.same(uptimeSummary(outages, first, now, hidden), {
    day: round(100 * (1 - 1 / 22)),
    week: round(100 * (1 - 1 / 22)),
    month: round(100 * (1 - 1 / 22))
  })
  t.same(
    uptimeSummary(outages, first, now),
    { day: round(100 * (1 - 2 / 24)), week: round(100 * (1 - 2 / 24)), month: round(100 * (1 - 2 / 24)) },
    'without it, as before'
  )
})
