import t from 'tap'
import { BadgeOptionError } from '../../../lib/badge/describe.js'
import {
  BADGE_WINDOWS,
  CHART_WINDOWS,
  meanFigure,
  NO_DATA,
  parseThresholds,
  parseWindow,
  responseTimeContent,
  spanText,
  uptimeContent,
  WINDOW_MS,
  windowUptime,
  type UptimeInputs,
  type WindowFigure
} from '../../../lib/badge/figures.js'
import type { Interval } from '../../../lib/rules/intervals.js'
import { uptimePercent } from '../../../lib/rules/uptime.js'

const MIN = 60_000
const HOUR = 60 * MIN
const DAY = 24 * HOUR
const NOW = Date.parse('2026-11-28T12:30:00.000Z')

const figure = (value: number | null, coveredMs: number | null = null): WindowFigure => ({ value, coveredMs })

t.test('windows: the four for figures, two for the chart, a default for each; anything else is refused', async (t) => {
  t.same(BADGE_WINDOWS, ['24h', '7d', '30d', '90d'])
  t.same(CHART_WINDOWS, ['24h', '7d'])
  t.same(
    BADGE_WINDOWS.map((w) => WINDOW_MS[w] / DAY),
    [1, 7, 30, 90]
  )
  const table: Array<[unknown, string | null]> = [
    [undefined, '30d'],
    ['24h', '24h'],
    ['7d', '7d'],
    ['30d', '30d'],
    ['90d', '90d'],
    ['1d', null],
    ['24H', null],
    ['30', null],
    ['', null],
    [['24h', '7d'], null],
    [7, null]
  ]
  for (const [raw, expected] of table) {
    if (expected === null) t.throws(() => parseWindow(raw, BADGE_WINDOWS, '30d'), BadgeOptionError, `${JSON.stringify(raw)} is refused`)
    else t.equal(parseWindow(raw, BADGE_WINDOWS, '30d'), expected, `${JSON.stringify(raw)} -> ${expected}`)
  }
  t.throws(() => parseWindow('30d', CHART_WINDOWS, '24h'), { message: '"window" must be one of 24h, 7d' }, 'the chart has two windows')
})

t.test('uptime thresholds: green from 99.9, yellow from 99, orange from 95, red below; rounded down, never up to 100', async (t) => {
  const table: Array<[number | null, string, string]> = [
    [100, '100 %', 'green'],
    [99.99999, '99.99 %', 'green'],
    [99.95, '99.95 %', 'green'],
    [99.9, '99.90 %', 'green'],
    [99.89999, '99.89 %', 'yellow'],
    [99.5, '99.50 %', 'yellow'],
    [99, '99.00 %', 'yellow'],
    [98.99999, '98.99 %', 'orange'],
    [95, '95.00 %', 'orange'],
    [94.99999, '94.99 %', 'red'],
    [50, '50.00 %', 'red'],
    [0, '0.00 %', 'red'],
    [null, 'no data', 'lightgrey']
  ]
  for (const [value, message, color] of table) {
    t.same(uptimeContent(figure(value), '30d'), { label: 'uptime 30d', message, color }, `${value}: ${message} in ${color}`)
  }
  t.same(uptimeContent(figure(99.95), '7d', 'Uptime'), { label: 'Uptime', message: '99.95 %', color: 'green' }, 'a label replaced')
  t.same(uptimeContent(figure(99.95), '7d', ''), { label: '', message: '99.95 %', color: 'green' }, 'or left out')
})

t.test('response-time thresholds: below 300 ms green, 1,000 yellow, 3,000 orange, red from there; or as the URL says', async (t) => {
  const table: Array<[number | null, string, string]> = [
    [0, '0 ms', 'green'],
    [182.4, '182 ms', 'green'],
    [299.4, '299 ms', 'green'],
    [299.5, '300 ms', 'yellow'],
    [999.4, '999 ms', 'yellow'],
    [999.5, '1.00 s', 'orange'],
    [1234, '1.23 s', 'orange'],
    [2994, '2.99 s', 'orange'],
    [2995, '3.00 s', 'red'],
    [60_000, '60.00 s', 'red'],
    [null, 'no data', 'lightgrey']
  ]
  for (const [value, message, color] of table) {
    t.same(responseTimeContent(figure(value), '24h'), { label: 'response time 24h', message, color }, `${value} ms: ${message} in ${color}`)
  }
  const custom: Array<[number, string]> = [
    [99, 'green'],
    [100, 'yellow'],
    [249, 'orange'],
    [250, 'red']
  ]
  for (const [value, color] of custom) {
    t.equal(responseTimeContent(figure(value), '7d', [100, 200, 250]).color, color, `${value} ms with 100,200,250: ${color}`)
  }
})

t.test('?thresholds= takes three ascending whole milliseconds from 1 to 60,000', async (t) => {
  const good: Array<[unknown, number[]]> = [
    [undefined, [300, 1000, 3000]],
    ['300,1000,3000', [300, 1000, 3000]],
    ['1,2,60000', [1, 2, 60000]],
    ['050,100,200', [50, 100, 200]]
  ]
  for (const [raw, expected] of good) t.same(parseThresholds(raw), expected, String(raw))
  for (const raw of [
    '0,1,2',
    '3,2,1',
    '1,1,2',
    '1,2,60001',
    '1,2',
    '1,2,3,4',
    'a,b,c',
    ' 1,2,3',
    '1.5,2,3',
    '-1,2,3',
    '',
    '123456,2,3',
    ['1,2,3']
  ]) {
    t.throws(
      () => parseThresholds(raw),
      { message: /^"thresholds" must be three whole numbers of milliseconds from 1 to 60000, ascending/ },
      JSON.stringify(raw)
    )
  }
})

t.test('a window known only in part says how much of it is', async (t) => {
  const spans: Array<[number, string]> = [
    [30_000, '< 1 min'],
    [MIN, '1 min'],
    [59 * MIN, '59 min'],
    [HOUR, '1 h'],
    [47 * HOUR + 59 * MIN, '47 h'],
    [2 * DAY, '2 d'],
    [29 * DAY + 23 * HOUR, '29 d']
  ]
  for (const [ms, text] of spans) t.equal(spanText(ms), text, text)
  t.same(uptimeContent(figure(100, 2 * DAY), '30d'), { label: 'uptime 30d', message: '100 % (2 d of data)', color: 'green' })
  t.same(responseTimeContent(figure(182, 5 * HOUR), '7d').message, '182 ms (5 h of data)')
})

/** A site's history for the uptime rule, relative to NOW. */
function inputs(firstCheckedAgo: number | null, outages: Array<[number, number | null]>, maintenance: Interval[] = []): UptimeInputs {
  return {
    firstCheckedAt: firstCheckedAgo === null ? null : new Date(NOW - firstCheckedAgo),
    outages: outages.map(([startAgo, endAgo]) => ({
      started_at: new Date(NOW - startAgo),
      ended_at: endAgo === null ? null : new Date(NOW - endAgo)
    })),
    maintenance: { recent: () => maintenance }
  }
}

t.test('uptime over a window follows the status record rule, and never calls unmonitored time up', async (t) => {
  const table: Array<[string, UptimeInputs, '24h' | '7d' | '30d' | '90d', string]> = [
    ['never checked', inputs(null, []), '30d', 'no data'],
    ['tracked 2 days, asked for 30', inputs(2 * DAY, []), '30d', '100 % (2 d of data)'],
    ['tracked 2 days, asked for 90', inputs(2 * DAY, []), '90d', '100 % (2 d of data)'],
    ['tracked 2 days, asked for 24 h', inputs(2 * DAY, []), '24h', '100 %'],
    ['tracked 2 days, down 1 h of them', inputs(2 * DAY, [[3 * HOUR, 2 * HOUR]]), '30d', '97.91 % (2 d of data)'],
    ['tracked 30 s', inputs(30_000, []), '24h', '100 % (< 1 min of data)'],
    ['down 6 h in the last 7 days', inputs(100 * DAY, [[3 * DAY, 3 * DAY - 6 * HOUR]]), '7d', '96.42 %'],
    ['an outage across the window start counts inside only', inputs(100 * DAY, [[25 * HOUR, 23 * HOUR]]), '24h', '95.83 %'],
    ['an ongoing outage lasts until now', inputs(100 * DAY, [[2 * HOUR, null]]), '24h', '91.66 %'],
    ['an outage before the window is not in it', inputs(100 * DAY, [[8 * DAY, 7 * DAY + HOUR]]), '7d', '100 %'],
    [
      'down 7 h in 90 days',
      inputs(100 * DAY, [
        [10 * DAY, 10 * DAY - 6 * HOUR],
        [2 * HOUR, HOUR]
      ]),
      '90d',
      '99.67 %'
    ],
    [
      'maintenance is neither monitored nor down',
      inputs(100 * DAY, [[10 * HOUR, 9 * HOUR]], [{ from: NOW - 4 * HOUR, to: NOW - 2 * HOUR }]),
      '24h',
      '95.45 %'
    ],
    [
      'an outage inside maintenance is not down',
      inputs(100 * DAY, [[4 * HOUR, 3 * HOUR]], [{ from: NOW - 5 * HOUR, to: NOW - 2 * HOUR }]),
      '24h',
      '100 %'
    ],
    ['a window all maintenance has no data', inputs(100 * DAY, [], [{ from: NOW - 2 * DAY, to: NOW + HOUR }]), '24h', 'no data']
  ]
  for (const [what, site, window, message] of table) {
    t.equal(uptimeContent(windowUptime(site, WINDOW_MS[window], NOW), window).message, message, `${what} (${window}): ${message}`)
  }
})

t.test("the figure is the status record's uptime, unrounded", async (t) => {
  // A seeded walk of random histories: the record's percentage (three decimals) is the badge's value rounded.
  let seed = 7
  const random = (): number => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31
    return seed / 2 ** 31
  }
  let compared = 0
  for (let i = 0; i < 300; i++) {
    const first = random() < 0.2 ? null : random() * 40 * DAY
    const outages: Array<[number, number | null]> = []
    let at = (first ?? 40 * DAY) * random()
    while (outages.length < 6 && at > HOUR) {
      const length = random() * 12 * HOUR
      outages.push([at, random() < 0.1 && outages.length === 0 ? null : Math.max(0, at - length)])
      at -= length + random() * 5 * DAY
    }
    outages.reverse()
    const site = inputs(first, outages)
    const maintenance: Interval[] = random() < 0.3 ? [{ from: NOW - 3 * DAY, to: NOW - 3 * DAY + 2 * HOUR }] : []
    site.maintenance = { recent: () => maintenance }
    for (const window of ['24h', '7d', '30d'] as const) {
      const badge = windowUptime(site, WINDOW_MS[window], NOW)
      const record = uptimePercent(site.outages, site.firstCheckedAt, new Date(NOW), WINDOW_MS[window], maintenance)
      if (badge.value === null) continue
      compared++
      if (Math.round(badge.value * 1000) / 1000 !== record) t.fail(`history ${i}, ${window}: badge ${badge.value}, record ${record}`)
    }
  }
  t.ok(compared > 500, `${compared} windows compared`)
})

t.test("a page's figure is the mean of its sites' with data", async (t) => {
  t.same(meanFigure([]), NO_DATA, 'no sites: no data')
  t.same(meanFigure([NO_DATA, NO_DATA]), NO_DATA, 'none with data: no data')
  t.same(meanFigure([figure(99), figure(100), NO_DATA]), figure(99.5), 'sites without data are left out')
  t.same(meanFigure([figure(99, 2 * DAY), figure(100)]), figure(99.5), 'one site covering the whole window: the page does')
  t.same(meanFigure([figure(99, 2 * DAY), figure(100, 5 * DAY)]), figure(99.5, 5 * DAY), 'none does: the longest span known')
})
