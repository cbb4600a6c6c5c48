import t from 'tap'
import { humanDuration, humanMs, humanPercent, humanTime, statusExplanation, statusLabel } from '../../../lib/pages/format.js'

t.test('durations for people: the two largest units', async (t) => {
  const cases: Array<[number, string]> = [
    [0, '0 s'],
    [-5, '0 s'],
    [1, '1 s'],
    [59, '59 s'],
    [60, '1 min'],
    [61, '1 min 1 s'],
    [300, '5 min'],
    [3599, '59 min 59 s'],
    [3600, '1 h'],
    [3660, '1 h 1 min'],
    [3601, '1 h'],
    [7500, '2 h 5 min'],
    [86_400, '1 d'],
    [86_400 * 3 + 4 * 3600 + 59, '3 d 4 h'],
    [86_400 * 40, '40 d']
  ]
  for (const [seconds, text] of cases) t.equal(humanDuration(seconds), text, `${seconds} s`)
})

t.test('times, percentages and milliseconds', async (t) => {
  t.equal(humanTime('2026-11-22T06:25:07.123Z'), '2026-11-22 06:25:07 UTC')
  t.equal(humanPercent(100), '100 %')
  t.equal(humanPercent(99.9504), '99.95 %')
  t.equal(humanPercent(12.3456), '12.346 %')
  t.equal(humanMs(123.6), '124 ms')
  t.equal(humanMs(null), '–')
})

t.test('statuses in words, blocked and partial explained', async (t) => {
  t.equal(statusLabel({ status: 'up', blocked: false, partial: false }), 'up')
  t.equal(statusLabel({ status: 'up', blocked: true, partial: true }), 'up (blocked, partial)')
  t.match(statusExplanation({ status: 'down', blocked: false, partial: false }), [/^Down: at least two/])
  t.match(statusExplanation({ status: 'unconfirmed', blocked: false, partial: false }), [/only one monitoring location/])
  t.match(statusExplanation({ status: 'unavailable', blocked: false, partial: false }), [/no recent check result/])
  t.match(statusExplanation({ status: 'pending', blocked: false, partial: false }), [/has not been checked yet/])
  t.match(statusExplanation({ status: 'up', blocked: true, partial: false }), [/^Up/, /refused the automated check.*not count as downtime/])
  const partial = statusExplanation({ status: 'down', blocked: false, partial: true })
  t.equal(partial.length, 2)
  t.match(partial[1], /some locations reached the site while others could not/)
})
