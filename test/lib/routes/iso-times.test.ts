import t from 'tap'
import { isoTimes } from '../../../lib/routes/iso-times.js'

t.test('timestamps are written exactly as toISOString writes them', async (t) => {
  const iso = isoTimes()
  const fixed = [
    0,
    1,
    999,
    86_399_999,
    86_400_000,
    Date.parse('2026-11-22T06:25:07.123Z'),
    Date.parse('2024-02-29T23:59:59.999Z'),
    Date.parse('2024-03-01T00:00:00.000Z'),
    Date.parse('1969-12-31T23:59:59.999Z'),
    Date.parse('0099-01-01T00:00:00.000Z'),
    Date.parse('9999-12-31T23:59:59.999Z'),
    Date.parse('+010000-01-01T00:00:00.000Z')
  ]
  for (const ms of fixed) t.equal(iso(ms), new Date(ms).toISOString(), new Date(ms).toISOString())
  // A year of times in order (the same day met again and again) and out of order (days changing).
  let mismatches = 0
  let x = 12345
  const start = Date.parse('2026-01-01T00:00:00.000Z')
  for (let i = 0; i < 20_000; i++) {
    x = (x * 1103515245 + 12345) % 2 ** 31
    const ms = i % 2 === 0 ? start + i * 1_576_800 + (x % 1000) : start + (x % 31_536_000) * 1000 + (x % 997)
    if (iso(ms) !== new Date(ms).toISOString()) mismatches++
  }
  t.equal(mismatches, 0, '20,000 times in and out of order')
})
