import t from 'tap'
import { isStorableInstant, LATEST_INSTANT, parseIsoInstant } from '../../../lib/rules/instants.js'

t.test('ISO 8601 instants', async (t) => {
  const rows: Array<[string, string | null]> = [
    ['2026-11-01', '2026-11-01T00:00:00.000Z'],
    ['2026-11-01T06:25:07Z', '2026-11-01T06:25:07.000Z'],
    ['2026-11-01T06:25:07.123Z', '2026-11-01T06:25:07.123Z'],
    ['2026-11-01t06:25:07.123456z', '2026-11-01T06:25:07.123Z'],
    ['2026-11-01T06:25Z', '2026-11-01T06:25:00.000Z'],
    ['2026-11-01T08:25:07+02:00', '2026-11-01T06:25:07.000Z'],
    ['2026-11-01T01:25:07-0500', '2026-11-01T06:25:07.000Z'],
    ['2024-02-29', '2024-02-29T00:00:00.000Z'],
    ['2026-11-01T06:25:07', null],
    ['2026-02-29', null],
    ['2026-02-30T00:00:00Z', null],
    ['2026-13-01', null],
    ['2026-11-01T24:00:00Z', null],
    ['2026-11-01T06:60:00Z', null],
    ['2026-11-01T06:00:00+24:00', null],
    ['1763000000', null],
    ['yesterday', null],
    ['2026-11-01 06:25:07Z', null],
    ['', null],
    // Within what both engines store: the epoch to MySQL's last DATETIME(3) millisecond.
    ['1970-01-01T00:00:00Z', '1970-01-01T00:00:00.000Z'],
    ['1970-01-01T00:59:59+01:00', null],
    ['1969-12-31T23:59:59.999Z', null],
    ['0099-01-01', null],
    ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
    ['9999-12-31T23:59:59.9999Z', '9999-12-31T23:59:59.999Z'],
    ['9999-12-31T23:00:00-01:00', null],
    ['+275760-09-13T00:00:00.000Z', null]
  ]
  for (const [text, want] of rows) t.equal(parseIsoInstant(text)?.toISOString() ?? null, want, JSON.stringify(text))
})

t.test('the storable range is the same rule for numbers', async (t) => {
  t.ok(isStorableInstant(0))
  t.ok(isStorableInstant(LATEST_INSTANT.getTime()))
  t.notOk(isStorableInstant(-1))
  t.notOk(isStorableInstant(LATEST_INSTANT.getTime() + 1))
  t.notOk(isStorableInstant(Number.NaN))
})
