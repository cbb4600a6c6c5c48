import t from 'tap'
import { currentVerdict, verdictStatus, isFresh, type StoredVerdict } from '../../../../lib/monitoring/state/status-record.js'

const T0 = Date.parse('2026-11-28T06:00:00.000Z')
const SEC = 1000
const DEFAULT_MS = 60 * SEC

const site = (checkedAgoS: number | null, intervalS: number | null): StoredVerdict => ({
  status: 'down',
  blocked: true,
  partial: true,
  response_ms: 12,
  checked_at: checkedAgoS === null ? null : new Date(T0 - checkedAgoS * SEC),
  interval_s: intervalS
})

t.test("a site's verdict stands for three of its own intervals, the service's when it has none", async (t) => {
  const rows: Array<[string, StoredVerdict, boolean]> = [
    ['the default interval: three minutes', site(180, null), true],
    ['the default interval: past three minutes', site(181, null), false],
    ['30 s: 90 s', site(90, 30), true],
    ['30 s: past 90 s, though within three default intervals', site(91, 30), false],
    ['300 s: 15 minutes', site(900, 300), true],
    ['300 s: 10 minutes, past three default intervals', site(600, 300), true],
    ['300 s: past 15 minutes', site(901, 300), false],
    ['3600 s: nearly three hours', site(3 * 3600 - 1, 3600), true],
    ['never checked', site(null, 300), false]
  ]
  for (const [title, stored, fresh] of rows) {
    t.equal(isFresh(stored, new Date(T0), DEFAULT_MS), fresh, title)
    // Never checked is `pending`; checked, but too long ago, `unavailable`.
    const stale = stored.checked_at === null ? 'pending' : 'unavailable'
    t.same(
      currentVerdict(stored, new Date(T0), DEFAULT_MS),
      fresh
        ? { status: 'down', blocked: true, partial: true, response_ms: 12 }
        : { status: stale, blocked: false, partial: false, response_ms: null },
      `${title}: ${fresh ? 'the stored verdict' : stale}`
    )
    t.equal(verdictStatus(stored, new Date(T0), DEFAULT_MS), fresh ? 'down' : stale, `${title}: the status alone agrees`)
  }
})
