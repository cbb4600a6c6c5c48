import t from 'tap'
import {
  NEW_PROGRESS,
  planAlert,
  SILENCE_RECHECK_MS,
  type AlertKind,
  type AlertProgress,
  type PolicyTiming
} from '../../../lib/rules/alert-timeline.js'

const T0 = Date.parse('2026-11-29T10:00:00.000Z')
const min = (m: number): Date => new Date(T0 + m * 60_000)
const SLACK = 1
const MAIL = 2
const PAGER = 3

const POLICY: PolicyTiming = {
  channels: [SLACK, MAIL],
  after_min: 5,
  remind_every_min: 5,
  escalate: [{ after_min: 15, channels: [PAGER] }],
  on_resolved: true
}

/**
 * Runs the rule on a fake clock, a look every `stepMin` minutes from 0 to `untilMin`, as the
 * evaluator would (it looks when `next` comes, or when the alert ends); returns every step sent,
 * as `minute what channels`.
 */
function run({
  policy = POLICY,
  kind = 'outage',
  endMin = null,
  untilMin,
  silenced = () => false,
  stepMin = 0.5
}: {
  policy?: PolicyTiming
  kind?: AlertKind
  endMin?: number | null
  untilMin: number
  silenced?: (m: number) => boolean
  stepMin?: number
}): string[] {
  let progress: AlertProgress = NEW_PROGRESS
  let next: Date | null = min(0)
  const sent: string[] = []
  let endedSeen = false
  for (let m = 0; m <= untilMin; m += stepMin) {
    const ended = endMin !== null && m >= endMin ? min(endMin) : null
    const due = (next !== null && min(m) >= next) || (ended !== null && !endedSeen)
    if (!due || progress.done) continue
    if (ended !== null) endedSeen = true
    const plan = planAlert({ policy, kind, started: min(0), ended, progress, silenced: silenced(m), now: min(m) })
    for (const s of plan.steps) sent.push(`${m} ${s.step} ${s.channels.join(',')}`)
    progress = plan.progress
    next = plan.next
  }
  return sent
}

t.test('down for 16 minutes: after 5, reminders every 5, escalation at 15, then resolved everywhere', async (t) => {
  t.same(run({ endMin: 16, untilMin: 20 }), [
    '5 opened 1,2',
    '10 reminder:1 1,2',
    '15 reminder:2 1,2',
    '15 escalate:0 3',
    '16 resolved 1,2,3'
  ])
})

t.test('an outage shorter than `after` sends nothing at all, its end included', async (t) => {
  t.same(run({ endMin: 4.5, untilMin: 10 }), [])
  t.same(
    run({ endMin: 4.5, untilMin: 10, policy: { ...POLICY, after_min: 0 } }),
    ['0 opened 1,2', '4.5 resolved 1,2'],
    'with after 0 it opens at once'
  )
})

t.test('no reminders, no escalation, no resolution when the policy asks for none', async (t) => {
  const plain = { ...POLICY, remind_every_min: null, escalate: [], on_resolved: false }
  t.same(run({ policy: plain, endMin: 30, untilMin: 40 }), ['5 opened 1,2'])
})

t.test('escalation steps come in order, each reaching only channels not reached yet', async (t) => {
  const steps = {
    ...POLICY,
    remind_every_min: null,
    escalate: [
      { after_min: 10, channels: [SLACK, PAGER] },
      { after_min: 20, channels: [4] }
    ]
  }
  t.same(run({ policy: steps, endMin: 25, untilMin: 30 }), ['5 opened 1,2', '10 escalate:0 3', '20 escalate:1 4', '25 resolved 1,2,3,4'])
})

t.test('an escalation already due when the alert opens goes with the opening', async (t) => {
  const late = { ...POLICY, after_min: 20, remind_every_min: null }
  t.same(run({ policy: late, endMin: 22, untilMin: 30 }), ['20 opened 1,2', '20 escalate:0 3', '22 resolved 1,2,3'])
})

t.test('a silence (maintenance, a parent down) holds the opening, reminders and escalation; a resolution still goes', async (t) => {
  // Silenced from minute 0 to 12: opens at 12, its first reminder 5 minutes later, to every channel reached by then.
  t.same(run({ untilMin: 20, silenced: (m) => m < 12, endMin: 19 }), [
    '12 opened 1,2',
    '15 escalate:0 3',
    '17 reminder:1 1,2,3',
    '19 resolved 1,2,3'
  ])
  // Silenced the whole time: nothing, and no resolution since nothing was said.
  t.same(run({ untilMin: 30, silenced: () => true, endMin: 20 }), [])
  // Silenced after opening, for 7 to 16: the reminder of 10 and escalation of 15 wait, then one catch-up each.
  t.same(run({ untilMin: 20, silenced: (m) => m >= 7 && m < 16, endMin: 18 }), [
    '5 opened 1,2',
    '16 reminder:2 1,2',
    '16 escalate:0 3',
    '18 resolved 1,2,3'
  ])
})

t.test('a silenced alert is looked at again soon, since a silence has no known end', async (t) => {
  const plan = planAlert({
    policy: POLICY,
    kind: 'outage',
    started: min(0),
    ended: null,
    progress: NEW_PROGRESS,
    silenced: true,
    now: min(6)
  })
  t.same(plan.steps, [])
  t.same(plan.next, new Date(min(6).getTime() + SILENCE_RECHECK_MS))
})

t.test('notices go once, at once; a slow spell also says when it ends; a silenced notice is dropped', async (t) => {
  t.same(run({ kind: 'certificate', untilMin: 30 }), ['0 notice 1,2'], 'no after, no reminder, no escalation')
  t.same(run({ kind: 'late', untilMin: 30 }), ['0 notice 1,2'])
  t.same(run({ kind: 'slow', endMin: 7, untilMin: 30 }), ['0 notice 1,2', '7 resolved 1,2'])
  t.same(run({ kind: 'slow', endMin: 7, untilMin: 30, policy: { ...POLICY, on_resolved: false } }), ['0 notice 1,2'])
  t.same(run({ kind: 'certificate', untilMin: 30, silenced: () => true }), [])
  t.same(
    run({ kind: 'slow', endMin: 7, untilMin: 30, silenced: (m) => m < 1 }),
    [],
    'a slow spell that began in maintenance, not even its end'
  )
})

t.test('looks missed (the service was down) catch up with one reminder, not a burst', async (t) => {
  const first = planAlert({
    policy: POLICY,
    kind: 'outage',
    started: min(0),
    ended: null,
    progress: NEW_PROGRESS,
    silenced: false,
    now: min(5)
  })
  const later = planAlert({
    policy: { ...POLICY, escalate: [] },
    kind: 'outage',
    started: min(0),
    ended: null,
    progress: first.progress,
    silenced: false,
    now: min(27)
  })
  t.same(
    later.steps.map((s) => s.step),
    ['reminder:4']
  )
  t.same(later.next, min(30))
})

t.test('a done alert does nothing more', async (t) => {
  const done = { ...NEW_PROGRESS, done: true }
  t.same(planAlert({ policy: POLICY, kind: 'outage', started: min(0), ended: null, progress: done, silenced: false, now: min(9) }), {
    steps: [],
    progress: done,
    next: null
  })
})
