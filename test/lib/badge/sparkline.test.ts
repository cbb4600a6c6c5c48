import t from 'tap'
import sax from 'sax'
import { HOUR_MS, HourlySeries } from '../../../lib/badge/response-history.js'
import { sparkline, type SparklineInput } from '../../../lib/badge/sparkline.js'
import type { ResponseTimeBucket } from '../../../lib/store/response-times.js'

const NOW = Date.parse('2026-11-28T12:30:00.000Z')
const HOUR0 = Math.floor(NOW / HOUR_MS) * HOUR_MS

/** A series of one mean per hour, the newest last; null: no answered check that hour. */
function seriesOf(means: Array<number | null>, at = NOW): HourlySeries {
  const series = new HourlySeries(at - 100 * 24 * HOUR_MS, at)
  const buckets: ResponseTimeBucket[] = []
  means.forEach((ms, k) => {
    if (ms === null) return
    const start = new Date(HOUR0 - (means.length - 1 - k) * HOUR_MS)
    buckets.push({ start, avg_ms: ms, max_ms: ms, checks: 2, answered: 2, down: 0 })
  })
  series.apply(buckets, series.base, at)
  return series
}

/** The chart's elements by name, with their attributes; throws unless it is well-formed XML. */
function elements(svg: string): Array<{ name: string; attributes: Record<string, string>; text: string }> {
  const parser = sax.parser(true)
  const found: Array<{ name: string; attributes: Record<string, string>; text: string }> = []
  parser.onopentag = (tag) => found.push({ name: tag.name, attributes: tag.attributes as Record<string, string>, text: '' })
  parser.ontext = (text) => {
    const last = found.at(-1)
    if (last) last.text += text
  }
  parser.onerror = (err) => {
    throw err
  }
  parser.write(svg).close()
  return found
}

const base = (over: Partial<SparklineInput> = {}): SparklineInput => ({
  series: seriesOf(Array.from({ length: 25 }, () => 100)),
  outages: [],
  window: '24h',
  at: NOW,
  name: 'Web shop',
  domain: 'shop.example.com',
  ...over
})

t.test('a day of hourly means is one line of 25 points, with its title and figures', async (t) => {
  const means = Array.from({ length: 25 }, (_, k) => 100 + k * 10)
  const svg = sparkline(base({ series: seriesOf(means) }))
  const els = elements(svg)
  t.match(els[0], { name: 'svg', attributes: { role: 'img', 'aria-labelledby': 'chart-title chart-desc', width: '240', height: '48' } })
  t.equal(els.find((e) => e.name === 'title')?.text, 'Web shop: response time, last 24 hours')
  t.equal(
    els.find((e) => e.name === 'desc')?.text,
    'Hourly mean response time of Web shop (shop.example.com) from 2026-11-27 12:00 UTC to 2026-11-28 12:30 UTC: mean 220 ms, fastest hour 100 ms, slowest hour 340 ms. No outage.'
  )
  const lines = els.filter((e) => e.name === 'polyline')
  t.equal(lines.length, 1)
  const points = (lines[0]?.attributes.points ?? '').split(' ').map((p) => p.split(',').map(Number))
  t.equal(points.length, 25)
  t.ok(
    points.every(([x], i) => i === 0 || (x as number) > (points[i - 1]?.[0] as number)),
    'left to right'
  )
  t.ok((points[24]?.[1] as number) < (points[0]?.[1] as number), 'the slowest hour is drawn highest')
  t.notMatch(svg, /<script|href=|url\(|on[a-z]+=/i, 'no script, no link, nothing loaded')
})

t.test('gaps: no line through an hour without an answer or across an outage; outages in red', async (t) => {
  const means: Array<number | null> = Array.from({ length: 25 }, () => 100)
  means[5] = null
  const outage = { started_at: new Date(HOUR0 - 10 * HOUR_MS + 20 * 60_000), ended_at: new Date(HOUR0 - 10 * HOUR_MS + 25 * 60_000) }
  const svg = sparkline(base({ series: seriesOf(means), outages: [outage] }))
  const els = elements(svg)
  const lines = els.filter((e) => e.name === 'polyline').map((e) => (e.attributes.points ?? '').split(' ').length)
  t.same(lines, [5, 8, 11], 'three runs: before the empty hour, up to the outage (10 h ago), after it')
  const red = els.filter((e) => e.name === 'rect' && e.attributes.fill === '#cf222e')
  t.same(
    red.map((r) => r.attributes['fill-opacity'] ?? 'solid'),
    ['0.15', 'solid'],
    'the outage shaded behind the line and marked under it'
  )
  t.ok(
    red.every((r) => Number(r.attributes.width) >= 1),
    'at least a pixel wide'
  )
  t.match(els.find((e) => e.name === 'desc')?.text, /1 outage, 5 min down, marked in red\.$/)

  const ongoing = sparkline(base({ outages: [{ started_at: new Date(NOW - 90 * 60_000), ended_at: null }] }))
  t.match(elements(ongoing).find((e) => e.name === 'desc')?.text, /1 outage, 1 h 30 min down/, 'an ongoing outage lasts until now')
  const single = sparkline(base({ series: seriesOf([100, null, 100, null]) }))
  t.equal(elements(single).filter((e) => e.name === 'circle').length, 2, 'an hour with no neighbour is a dot')
})

t.test('partly known, nothing known, and names that are markup', async (t) => {
  const young = sparkline(base({ series: seriesOf([300, 300, 300]), window: '7d' }))
  const desc = elements(young).find((e) => e.name === 'desc')?.text ?? ''
  t.match(desc, /from 2026-11-21 12:00 UTC to 2026-11-28 12:30 UTC: mean 300 ms/)
  t.match(desc, /Data from 2026-11-28 10:00 UTC on\./)
  t.equal(elements(young).find((e) => e.name === 'title')?.text, 'Web shop: response time, last 7 days')

  const empty = sparkline(base({ series: null }))
  t.match(elements(empty).find((e) => e.name === 'desc')?.text, /no check answered in this period\.$/)
  t.equal(elements(empty).find((e) => e.name === 'text')?.text, 'no data')

  const hostile = sparkline(base({ name: '<script>alert(1)</script> & "co"\u0007' }))
  t.equal(elements(hostile).find((e) => e.name === 'title')?.text, '<script>alert(1)</script> & "co" : response time, last 24 hours')
  t.notMatch(hostile, /<script>/)
})

t.test('the drawing moves with the data, not with the clock', async (t) => {
  const series = seriesOf(Array.from({ length: 25 }, () => 100))
  t.equal(
    sparkline(base({ series, at: NOW })).replace(/<desc.*<\/desc>/, ''),
    sparkline(base({ series, at: NOW + 20 * 60_000 })).replace(/<desc.*<\/desc>/, '')
  )
})
