import t from 'tap'
import { monitoredSpan, SLA_DEFAULT_MS, slaFigures, slaWindow, type OutageInterval } from '../../../lib/rules/sla.js'

const at = (iso: string) => new Date(iso)
const H = 3_600_000
const D = 24 * H
const FROM = at('2026-11-01T00:00:00.000Z')
const TO = at('2026-11-11T00:00:00.000Z')
const NOW = at('2026-11-20T00:00:00.000Z')
const LONG_AGO = at('2026-01-01T00:00:00.000Z')
const span = (start: string, end: string | null): OutageInterval => ({
  started: Date.parse(start),
  ended: end === null ? null : Date.parse(end)
})

t.test('SLA figures over a window', async (t) => {
  type Row = [
    string,
    { outages: OutageInterval[]; first: Date | null; from?: Date; to?: Date; until?: Date },
    {
      uptime_percent: number
      monitored_seconds: number
      downtime_seconds: number
      incidents: number
      longest_outage_seconds: number
      mttr_seconds: number | null
    }
  ]
  const tenDays = 10 * 86_400
  const rows: Row[] = [
    [
      'no outages',
      { outages: [], first: LONG_AGO },
      { uptime_percent: 100, monitored_seconds: tenDays, downtime_seconds: 0, incidents: 0, longest_outage_seconds: 0, mttr_seconds: null }
    ],
    [
      'one outage inside the window',
      { outages: [span('2026-11-02T00:00:00.000Z', '2026-11-02T02:00:00.000Z')], first: LONG_AGO },
      {
        uptime_percent: Math.round(100 * (1 - 2 / 240) * 1000) / 1000,
        monitored_seconds: tenDays,
        downtime_seconds: 7200,
        incidents: 1,
        longest_outage_seconds: 7200,
        mttr_seconds: 7200
      }
    ],
    [
      'an outage cut by the start of the window: its time inside counts, its whole length is its recovery time',
      { outages: [span('2026-10-31T23:00:00.000Z', '2026-11-01T01:00:00.000Z')], first: LONG_AGO },
      {
        uptime_percent: Math.round(100 * (1 - 1 / 240) * 1000) / 1000,
        monitored_seconds: tenDays,
        downtime_seconds: 3600,
        incidents: 1,
        longest_outage_seconds: 3600,
        mttr_seconds: 7200
      }
    ],
    [
      'an outage cut by the end of the window has not recovered inside it',
      { outages: [span('2026-11-10T23:00:00.000Z', '2026-11-11T03:00:00.000Z')], first: LONG_AGO },
      {
        uptime_percent: Math.round(100 * (1 - 1 / 240) * 1000) / 1000,
        monitored_seconds: tenDays,
        downtime_seconds: 3600,
        incidents: 1,
        longest_outage_seconds: 3600,
        mttr_seconds: null
      }
    ],
    [
      'an open outage lasts until now',
      { outages: [span('2026-11-19T00:00:00.000Z', null)], first: LONG_AGO, from: at('2026-11-18T00:00:00.000Z'), to: NOW },
      {
        uptime_percent: 50,
        monitored_seconds: 2 * 86_400,
        downtime_seconds: 86_400,
        incidents: 1,
        longest_outage_seconds: 86_400,
        mttr_seconds: null
      }
    ],
    [
      'a window reaching past now ends now',
      {
        outages: [span('2026-11-19T00:00:00.000Z', null)],
        first: LONG_AGO,
        from: at('2026-11-18T00:00:00.000Z'),
        to: at('2026-11-25T00:00:00.000Z')
      },
      {
        uptime_percent: 50,
        monitored_seconds: 2 * 86_400,
        downtime_seconds: 86_400,
        incidents: 1,
        longest_outage_seconds: 86_400,
        mttr_seconds: null
      }
    ],
    [
      'a site tracked mid-window is monitored from its first check',
      { outages: [span('2026-11-06T00:00:00.000Z', '2026-11-06T12:00:00.000Z')], first: at('2026-11-06T00:00:00.000Z') },
      {
        uptime_percent: 90,
        monitored_seconds: 5 * 86_400,
        downtime_seconds: 12 * 3600,
        incidents: 1,
        longest_outage_seconds: 12 * 3600,
        mttr_seconds: 12 * 3600
      }
    ],
    [
      'the first-check rule: added 30 s before a first down check, down since',
      {
        outages: [span('2026-11-10T23:59:00.000Z', null)],
        first: at('2026-11-10T23:59:00.000Z'),
        from: at('2026-11-10T23:58:30.000Z'),
        to: at('2026-11-10T23:59:20.000Z')
      },
      { uptime_percent: 0, monitored_seconds: 20, downtime_seconds: 20, incidents: 1, longest_outage_seconds: 20, mttr_seconds: null }
    ],
    [
      'a window entirely before the first check: nothing monitored, nothing counted',
      { outages: [span('2026-11-15T00:00:00.000Z', '2026-11-15T01:00:00.000Z')], first: at('2026-11-12T00:00:00.000Z') },
      { uptime_percent: 100, monitored_seconds: 0, downtime_seconds: 0, incidents: 0, longest_outage_seconds: 0, mttr_seconds: null }
    ],
    [
      'never checked',
      { outages: [], first: null },
      { uptime_percent: 100, monitored_seconds: 0, downtime_seconds: 0, incidents: 0, longest_outage_seconds: 0, mttr_seconds: null }
    ],
    [
      'an outage from an earlier tracking period, before the first check, is not counted',
      {
        outages: [
          span('2026-11-02T00:00:00.000Z', '2026-11-02T01:00:00.000Z'),
          span('2026-11-08T00:00:00.000Z', '2026-11-08T06:00:00.000Z')
        ],
        first: at('2026-11-06T00:00:00.000Z')
      },
      {
        uptime_percent: 95,
        monitored_seconds: 5 * 86_400,
        downtime_seconds: 6 * 3600,
        incidents: 1,
        longest_outage_seconds: 6 * 3600,
        mttr_seconds: 6 * 3600
      }
    ],
    [
      'monitoring ended at a removal inside the window',
      { outages: [span('2026-11-04T00:00:00.000Z', '2026-11-05T00:00:00.000Z')], first: LONG_AGO, until: at('2026-11-06T00:00:00.000Z') },
      {
        uptime_percent: 80,
        monitored_seconds: 5 * 86_400,
        downtime_seconds: 86_400,
        incidents: 1,
        longest_outage_seconds: 86_400,
        mttr_seconds: 86_400
      }
    ],
    [
      'several outages: downtime adds up, the longest and the mean recovery',
      {
        outages: [
          span('2026-10-31T22:00:00.000Z', '2026-11-01T00:30:00.000Z'),
          span('2026-11-03T00:00:00.000Z', '2026-11-03T00:00:10.400Z'),
          span('2026-11-05T00:00:00.000Z', '2026-11-05T01:00:00.000Z'),
          span('2026-11-10T23:00:00.000Z', null)
        ],
        first: LONG_AGO
      },
      {
        uptime_percent: Math.round(100 * (1 - (1800 + 10.4 + 3600 + 3600) / (10 * 86_400)) * 1000) / 1000,
        monitored_seconds: tenDays,
        downtime_seconds: 9010,
        incidents: 4,
        longest_outage_seconds: 3600,
        mttr_seconds: Math.round((9000 + 10.4 + 3600) / 3)
      }
    ],
    [
      'an outage ending exactly at the start of the window is not in it',
      { outages: [span('2026-10-31T00:00:00.000Z', '2026-11-01T00:00:00.000Z')], first: LONG_AGO },
      { uptime_percent: 100, monitored_seconds: tenDays, downtime_seconds: 0, incidents: 0, longest_outage_seconds: 0, mttr_seconds: null }
    ]
  ]
  for (const [name, input, want] of rows) {
    const got = slaFigures({
      outages: input.outages,
      firstCheckedAt: input.first,
      from: input.from ?? FROM,
      to: input.to ?? TO,
      until: input.until ?? NOW
    })
    const { outages, ...figures } = got
    t.same(figures, want, name)
    t.equal(outages.length, want.incidents, `${name}: the outages listed are the ones counted`)
  }
})

t.test('the monitored span of a window', async (t) => {
  t.same(monitoredSpan(at('2026-11-06T00:00:00.000Z'), FROM, TO, NOW), { start: at('2026-11-06T00:00:00.000Z'), end: TO })
  t.same(monitoredSpan(LONG_AGO, FROM, TO, at('2026-11-02T00:00:00.000Z')), { start: FROM, end: at('2026-11-02T00:00:00.000Z') })
  const empty = monitoredSpan(null, FROM, TO, NOW)
  t.equal(empty.start.getTime(), empty.end.getTime(), 'never checked: empty')
})

t.test('the window a query asks for', async (t) => {
  const now = at('2026-11-24T12:00:00.000Z')
  const rows: Array<[string, { from?: string; to?: string }, { from: string; to: string } | string]> = [
    ['defaults: the last 30 days', {}, { from: new Date(now.getTime() - SLA_DEFAULT_MS).toISOString(), to: now.toISOString() }],
    ['from alone: up to now', { from: '2026-11-01' }, { from: '2026-11-01T00:00:00.000Z', to: now.toISOString() }],
    ['to alone: 30 days before it', { to: '2026-11-01' }, { from: '2026-10-02T00:00:00.000Z', to: '2026-11-01T00:00:00.000Z' }],
    ['both', { from: '2026-01-01', to: '2026-04-01' }, { from: '2026-01-01T00:00:00.000Z', to: '2026-04-01T00:00:00.000Z' }],
    [
      'exactly 400 days',
      { from: '2025-01-01', to: new Date(Date.parse('2025-01-01') + 400 * D).toISOString() },
      {
        from: '2025-01-01T00:00:00.000Z',
        to: new Date(Date.parse('2025-01-01') + 400 * D).toISOString()
      }
    ],
    ['401 days', { from: '2025-01-01', to: new Date(Date.parse('2025-01-01') + 401 * D).toISOString() }, 'at most 400 days'],
    ['from after to', { from: '2026-11-02', to: '2026-11-01' }, '"from" must be before "to"'],
    ['from equal to to', { from: '2026-11-01', to: '2026-11-01T00:00:00Z' }, '"from" must be before "to"'],
    ['from in the future, to defaulted', { from: '2026-12-01' }, '"from" must be before "to"'],
    ['a bad from', { from: 'last week' }, '"from" must be an ISO 8601'],
    ['a bad to', { to: '2026-11-01T00:00:00' }, '"to" must be an ISO 8601']
  ]
  for (const [name, query, want] of rows) {
    const got = slaWindow(query, now)
    if (typeof want === 'string') t.match(got, { ok: false, error: new RegExp(want.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')) }, name)
    else t.same(got.ok ? { from: got.from.toISOString(), to: got.to.toISOString() } : got, want, name)
  }
})
