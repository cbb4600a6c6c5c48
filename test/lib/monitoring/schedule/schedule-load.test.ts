import t from 'tap'
import { isBehind, LoadWindow } from '../../../../lib/monitoring/schedule/schedule-load.js'

t.test('behind means a check shed, or more than 1% of the started ones late, in the last minute', async (t) => {
  const cases: Array<[shed: number, late: number, started: number, behind: boolean]> = [
    [0, 0, 0, false],
    [0, 0, 1000, false],
    [0, 10, 1000, false],
    [0, 11, 1000, true],
    [1, 0, 1000, true],
    [1, 0, 0, true],
    [0, 1, 1, true]
  ]
  for (const [shed, late, started, behind] of cases) {
    t.equal(isBehind({ shed, late, started }), behind, `shed ${shed}, late ${late} of ${started}`)
  }
})

t.test('the window counts the last minute and forgets what is older', async (t) => {
  const start = 10_000_000
  const window = new LoadWindow({ since: start })
  const second = (s: number): void => {
    window.add(start + s * 1000, 'due')
    window.add(start + s * 1000, 'due')
    window.add(start + s * 1000, 'started')
  }
  for (let s = 0; s <= 30; s++) second(s)
  window.add(start + 30_000, 'shed')
  t.match(
    window.read(start + 30_500),
    { seconds: 31, due: 62, started: 31, shed: 1, behind: true },
    'early on, rates over the time run so far'
  )
  t.equal(window.read(start + 30_500).duePerS, 2)
  for (let s = 31; s < 120; s++) second(s)
  const later = window.read(start + 119_999)
  t.match(later, { seconds: 61, due: 122, started: 61, shed: 0, late: 0, behind: false }, 'the shed check has left the window')
  t.equal(later.duePerS, 2)
  t.equal(later.runPerS, 1)
  t.match(window.read(start + 400_000), { due: 0, started: 0, behind: false }, 'nothing left after a quiet minute')
})
