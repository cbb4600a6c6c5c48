// bench/challenge-signatures: the time an actor's thread spends judging a challenge-status answer
// whose 64 KiB body is built to make the signatures backtrack (each unit repeated to fill the cap
// a probe reads), at every status a signature applies to. A ReDoS guard: the unit tests state the
// linear time in counts (test/workers/challenge-signatures.test.ts); this is its figure in time.
// For scale it also times the pattern that once took 330 ms on such a body (`challenge\.js.*awswaf`).
//   npm run build && node bench/challenge-signatures.mjs
// Knobs: BENCH_ROUNDS (200), BENCH_SIZE (65536, a probe's body cap), BENCH_OLD (1: time the old pattern).
import { CHALLENGE_STATUSES, matchChallenge } from '../dist/workers/challenge-signatures.js'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 200)
const SIZE = Number(process.env.BENCH_SIZE ?? 65536)
const OLD = process.env.BENCH_OLD !== '0'
/** The whole set of adversarial bodies at every status within this, as the unit test once bounded it. */
const GOAL_MS = 60

const fill = (unit) => unit.repeat(Math.ceil(SIZE / unit.length)).slice(0, SIZE)
const UNITS = ['challenge.js ', 'Reference&#32;&#35;', 'errors&#46;edgesuite', 'a', '<title>Just a moment..']
const STATUSES = [...CHALLENGE_STATUSES, 202, 405]
const bodies = UNITS.map((unit) => ({ unit, text: fill(unit) }))

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const ms = (from) => Number(process.hrtime.bigint() - from) / 1e6

// Warm-up: the patterns compiled and the code optimised, as in a running actor.
for (let i = 0; i < 20; i++) for (const status of STATUSES) for (const { text } of bodies) matchChallenge(status, {}, text)

const perUnit = new Map(UNITS.map((unit) => [unit, []]))
const wholeSet = []
for (let round = 0; round < ROUNDS; round++) {
  const setStarted = process.hrtime.bigint()
  for (const { unit, text } of bodies) {
    const started = process.hrtime.bigint()
    for (const status of STATUSES) matchChallenge(status, {}, text)
    perUnit.get(unit).push(ms(started) / STATUSES.length)
  }
  wholeSet.push(ms(setStarted))
}

let oldMs = null
if (OLD) {
  const old = /challenge\.js.*awswaf/i
  const text = fill('challenge.js ')
  const times = []
  for (let i = 0; i < 3; i++) {
    const started = process.hrtime.bigint()
    old.test(text)
    times.push(ms(started))
  }
  oldMs = median(times)
}

const round3 = (n) => Math.round(n * 1000) / 1000
const setMs = median(wholeSet)
console.log(
  JSON.stringify(
    {
      body_bytes: SIZE,
      statuses: STATUSES.length,
      rounds: ROUNDS,
      judgement_ms: Object.fromEntries([...perUnit].map(([unit, xs]) => [unit, round3(median(xs))])),
      whole_set_ms: round3(setMs),
      whole_set_p99_ms: round3([...wholeSet].sort((a, b) => a - b)[Math.floor(wholeSet.length * 0.99)]),
      goal_ms: GOAL_MS,
      meets_goal: setMs < GOAL_MS,
      ...(oldMs === null ? {} : { old_pattern_ms: round3(oldMs) })
    },
    null,
    2
  )
)
