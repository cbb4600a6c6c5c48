import t from 'tap'
import { SiteMaintenance } from '../../../../lib/monitoring/state/site-maintenance.js'
import { coveredMs } from '../../../../lib/rules/intervals.js'
import { maintenanceAt, maintenanceIntervals, type MaintenanceWindow } from '../../../../lib/rules/maintenance.js'
import { UPTIME_HORIZON_MS } from '../../../../lib/rules/uptime.js'

const MIN = 60_000
const HOUR = 60 * MIN
const DAY = 24 * HOUR
// A Sunday, three weeks before Berlin's clocks go back (25 October 2026).
const START = Date.parse('2026-10-04T00:00:00.000Z')

const WINDOWS: MaintenanceWindow[] = [
  { weekly: { day: 'sun', time: '02:30', duration_minutes: 90, zone: 'Europe/Berlin' }, reason: 'weekly' },
  { weekly: { day: 'sun', time: '03:30', duration_minutes: 30, zone: 'UTC' }, reason: 'overlapping' },
  { from: new Date(START + 3 * DAY), to: new Date(START + 3 * DAY + 2 * HOUR), reason: 'one-off' },
  { from: new Date(START + 3 * DAY + 2 * HOUR), to: new Date(START + 3 * DAY + 3 * HOUR), reason: null },
  { weekly: { day: 'wed', time: '23:50', duration_minutes: 20, zone: 'America/New_York' }, reason: 'across midnight' }
]

/** A deterministic sequence of moments: mostly small steps forward, some leaps, some steps back. */
function* moments(count: number): Generator<number> {
  let at = START
  let seed = 42
  const random = (): number => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31
    return seed / 2 ** 31
  }
  for (let i = 0; i < count; i++) {
    const r = random()
    at += r < 0.7 ? Math.floor(random() * 10 * MIN) : r < 0.9 ? Math.floor(random() * DAY) : -Math.floor(random() * 2 * HOUR)
    yield at
  }
}

t.test('the maintenance in force is what the rule says, at every moment asked, in any order', async (t) => {
  const kept = new SiteMaintenance(WINDOWS, 'test')
  let asked = 0
  let inForce = 0
  let wrong = 0
  for (const at of moments(1500)) {
    asked++
    const expected = maintenanceAt(WINDOWS, at)
    if (expected !== null) inForce++
    if (JSON.stringify(kept.at(at)) !== JSON.stringify(expected)) wrong++
    // Both edges of every window: its start holds, its end does not.
    for (const edge of [at - 1, at + 1]) if (JSON.stringify(kept.at(edge)) !== JSON.stringify(maintenanceAt(WINDOWS, edge))) wrong++
  }
  t.equal(wrong, 0, `the same answer at ${asked * 3} moments`)
  t.ok(inForce > 15, `with maintenance in force at ${inForce} of them`)
  for (const w of WINDOWS) {
    if ('weekly' in w) continue
    t.same(kept.at(w.from.getTime()), maintenanceAt(WINDOWS, w.from.getTime()), 'at a one-off start')
    t.same(kept.at(w.to.getTime()), maintenanceAt(WINDOWS, w.to.getTime()), 'at a one-off end')
  }
  t.same(kept.at(START + 3 * DAY + 30 * MIN), { until: START + 3 * DAY + 3 * HOUR, reason: 'one-off' }, 'touching windows join')
})

t.test('the maintenance time uptime needs covers the horizon (90 days) before any moment', async (t) => {
  const kept = new SiteMaintenance(WINDOWS, 'test')
  let wrong = 0
  for (const at of moments(400)) {
    const from = at - UPTIME_HORIZON_MS
    const expected = maintenanceIntervals(WINDOWS, from, at)
    const total = expected.reduce((ms, i) => ms + i.to - i.from, 0)
    if (coveredMs(from, at, kept.recent(at)) !== total) wrong++
    if (coveredMs(at - DAY, at, kept.recent(at)) !== coveredMs(at - DAY, at, expected)) wrong++
  }
  t.equal(wrong, 0)
})
