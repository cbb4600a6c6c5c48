import t from 'tap'
import type { SiteStatus } from '../../../lib/rules/consensus.js'
import { isSlowCheck, NOT_SLOW, slowStep, type SlowCheck, type SlowEvent, type SlowState } from '../../../lib/rules/slow.js'

const LIMIT = 2000
/** A check by letter: `S` up and slow, `F` up and fast, `D` down, `U` unconfirmed, `N` unavailable, `C` up and slow with the setting cleared. */
function check(letter: string): SlowCheck {
  const status: Record<string, SiteStatus> = { S: 'up', F: 'up', D: 'down', U: 'unconfirmed', N: 'unavailable', C: 'up' }
  const ms: Record<string, number | null> = { S: 2500, F: 300, D: 2500, U: 2500, N: null, C: 2500 }
  return { status: status[letter]!, response_ms: ms[letter]!, max_response_ms: letter === 'C' ? null : LIMIT }
}

/** Runs the checks from a state: the event each check caused ('-' for none) and the state after. */
function run(letters: string, from: SlowState = NOT_SLOW): { events: Array<SlowEvent | '-'>; state: SlowState } {
  let state = from
  const events: Array<SlowEvent | '-'> = []
  for (const letter of letters) {
    const step = slowStep(state, check(letter))
    state = step.state
    events.push(step.event ?? '-')
  }
  return { events, state }
}

const SLOW: SlowState = { slow: true, streak: 0 }
const on = 'site.slow'
const off = 'site.slow_ended'

t.test('slow onset and recovery, one event each way', async (t) => {
  const rows: Array<[string, string, SlowState, Array<SlowEvent | '-'>, boolean]> = [
    ['one slow check changes nothing', 'S', NOT_SLOW, ['-'], false],
    ['two slow checks in a row make it slow, at the second', 'SS', NOT_SLOW, ['-', on], true],
    ['a third slow check sends nothing more', 'SSS', NOT_SLOW, ['-', on, '-'], true],
    ['one slow check between fast ones changes nothing', 'FSFSF', NOT_SLOW, ['-', '-', '-', '-', '-'], false],
    ['one fast check while slow changes nothing', 'F', SLOW, ['-'], true],
    ['two fast checks in a row end it, at the second', 'FF', SLOW, ['-', off], false],
    ['one fast check between slow ones keeps it slow', 'SFSFS', SLOW, ['-', '-', '-', '-', '-'], true],
    ['slow, back, slow again: one event each time', 'SSFFSS', NOT_SLOW, ['-', on, '-', off, '-', on], true],
    ['a down check breaks a streak: slow, down, slow is not two in a row', 'SDS', NOT_SLOW, ['-', '-', '-'], false],
    ['an unconfirmed check breaks a streak', 'SUS', NOT_SLOW, ['-', '-', '-'], false],
    ['an unavailable check breaks a streak', 'SNS', NOT_SLOW, ['-', '-', '-'], false],
    ['down checks alone never make a site slow, however long they take', 'DDDD', NOT_SLOW, ['-', '-', '-', '-'], false],
    ['a slow site that goes down is slow no more, said once', 'DDD', SLOW, [off, '-', '-'], false],
    ['a slow site whose checks are unconfirmed stays slow and sends nothing', 'UUU', SLOW, ['-', '-', '-'], true],
    ['... and ends only after two fast up checks in a row', 'UFUFF', SLOW, ['-', '-', '-', '-', off], false],
    ['a down check between fast ones ends it at once', 'FDFF', SLOW, ['-', off, '-', '-'], false],
    ['the setting cleared while slow: ended at the next check, whatever its speed', 'C', SLOW, [off], false],
    ['the setting cleared while not slow: nothing', 'CC', NOT_SLOW, ['-', '-'], false],
    ['the setting cleared halfway through a streak: the streak is gone', 'SCS', NOT_SLOW, ['-', '-', '-'], false]
  ]
  for (const [name, letters, from, events, slow] of rows) {
    const got = run(letters, from)
    t.same(got.events, events, name)
    t.equal(got.state.slow, slow, `${name}: slow after`)
  }
})

t.test('a check at exactly the threshold is not slow', async (t) => {
  const rows: Array<[SlowCheck, boolean]> = [
    [{ status: 'up', response_ms: 2000, max_response_ms: 2000 }, false],
    [{ status: 'up', response_ms: 2000.1, max_response_ms: 2000 }, true],
    [{ status: 'up', response_ms: 5000, max_response_ms: null }, false],
    [{ status: 'down', response_ms: 5000, max_response_ms: 2000 }, false],
    [{ status: 'up', response_ms: null, max_response_ms: 2000 }, false]
  ]
  for (const [c, want] of rows) t.equal(isSlowCheck(c), want, JSON.stringify(c))
  let state: SlowState = NOT_SLOW
  for (let i = 0; i < 5; i++) state = slowStep(state, { status: 'up', response_ms: 2000, max_response_ms: 2000 }).state
  t.equal(state.slow, false, 'five checks at the threshold leave it fast')
})

t.test('a raised threshold needs two checks under it to end slowness', async (t) => {
  let step = slowStep(SLOW, { status: 'up', response_ms: 2500, max_response_ms: 3000 })
  t.same(step, { state: { slow: true, streak: 1 }, event: null })
  step = slowStep(step.state, { status: 'up', response_ms: 2500, max_response_ms: 3000 })
  t.same(step, { state: { slow: false, streak: 0 }, event: off })
})
