/**
 * What an alert sends, and when: a policy evaluated over an alert's timeline at `now`. An outage
 * alert opens once it has lasted `after_min` (one that ends sooner sends nothing), is repeated
 * every `remind_every_min` to every channel it reached, escalates to each step's channels once the
 * outage is that old, and says it is resolved to every channel it reached. A notice (slow,
 * certificate expiring, heartbeat late) is sent once, and a slow spell's end too. While the
 * monitor is silenced (a maintenance window, its parent down) nothing opens, reminds or escalates;
 * a resolution of something already said is still sent.
 */

const MINUTE_MS = 60_000
/** How soon a silenced alert is looked at again (the end of a silence is not known in advance). */
export const SILENCE_RECHECK_MS = 30_000

/** What an alert is about: an outage (with a timeline) or a notice (sent once). */
export type AlertKind = 'outage' | 'slow' | 'certificate' | 'late'

/** One escalation step: after the outage has lasted `after_min`, also these channels. */
export interface EscalationStep {
  after_min: number
  channels: readonly number[]
}

/** The timing part of a policy. `on_resolved` false: no resolution is sent. */
export interface PolicyTiming {
  channels: readonly number[]
  after_min: number
  remind_every_min: number | null
  escalate: readonly EscalationStep[]
  on_resolved: boolean
}

/** Where an alert stands: what it has sent so far. */
export interface AlertProgress {
  /** When it opened (its first message was made); null before. */
  opened_at: Date | null
  /** Reminders made so far (the n-th is due `n * remind_every_min` after opening). */
  reminders: number
  /** Escalation steps taken so far, in order. */
  escalated: number
  /** Channels reached, in the order first reached. */
  reached: readonly number[]
  /** Nothing more will be sent. */
  done: boolean
}

/** What a step says. */
export type StepWhat = 'opened' | 'reminder' | 'escalated' | 'resolved' | 'notice'

/** A step to send now: its key (unique per alert), what it says, to which channels. */
export interface AlertStep {
  step: string
  what: StepWhat
  channels: number[]
}

export interface AlertPlan {
  steps: AlertStep[]
  progress: AlertProgress
  /** When to look again; null: only when something happens (the alert ends), or never once done. */
  next: Date | null
}

export const NEW_PROGRESS: AlertProgress = Object.freeze({ opened_at: null, reminders: 0, escalated: 0, reached: [], done: false })

const union = (a: readonly number[], b: readonly number[]): number[] => [...a, ...b.filter((c) => !a.includes(c))]
const earliest = (...dates: Array<Date | null>): Date | null =>
  dates.reduce<Date | null>((m, d) => (d !== null && (m === null || d < m) ? d : m), null)

/**
 * The steps due at `now` for an alert of `kind` that started at `started` (and ended at `ended`,
 * if it has), given its `progress` and whether it is `silenced` now; and what it will have sent.
 */
export function planAlert({
  policy,
  kind,
  started,
  ended,
  progress,
  silenced,
  now
}: {
  policy: PolicyTiming
  kind: AlertKind
  started: Date
  ended: Date | null
  progress: AlertProgress
  silenced: boolean
  now: Date
}): AlertPlan {
  if (progress.done) return { steps: [], progress, next: null }
  return kind === 'outage'
    ? planOutage(policy, started, ended, progress, silenced, now)
    : planNotice(policy, kind, ended, progress, silenced, now)
}

function planNotice(policy: PolicyTiming, kind: AlertKind, ended: Date | null, p: AlertProgress, silenced: boolean, now: Date): AlertPlan {
  const done = (steps: AlertStep[], progress: AlertProgress): AlertPlan => ({ steps, progress: { ...progress, done: true }, next: null })
  if (p.opened_at === null) {
    // A notice is about a moment: one that comes during a silence is dropped, not postponed.
    if (silenced || policy.channels.length === 0) return done([], p)
    const steps = [{ step: 'notice', what: 'notice' as const, channels: [...policy.channels] }]
    const opened = { ...p, opened_at: now, reached: [...policy.channels] }
    // Only a slow spell has an end to tell; the others are done once said.
    return kind === 'slow' && ended === null ? { steps, progress: opened, next: null } : finishNotice(policy, kind, ended, steps, opened)
  }
  return finishNotice(policy, kind, ended, [], p)
}

function finishNotice(policy: PolicyTiming, kind: AlertKind, ended: Date | null, steps: AlertStep[], p: AlertProgress): AlertPlan {
  if (kind !== 'slow') return { steps, progress: { ...p, done: true }, next: null }
  if (ended === null) return { steps, progress: p, next: null }
  const resolved = policy.on_resolved ? [{ step: 'resolved', what: 'resolved' as const, channels: [...p.reached] }] : []
  return { steps: [...steps, ...resolved], progress: { ...p, done: true }, next: null }
}

function planOutage(policy: PolicyTiming, started: Date, ended: Date | null, p: AlertProgress, silenced: boolean, now: Date): AlertPlan {
  const openAt = new Date(started.getTime() + policy.after_min * MINUTE_MS)
  if (p.opened_at === null) {
    // Over before it was worth saying: nothing was said, so nothing is resolved either.
    if (ended !== null) return { steps: [], progress: { ...p, done: true }, next: null }
    if (now < openAt) return { steps: [], progress: p, next: openAt }
    if (silenced) return { steps: [], progress: p, next: new Date(now.getTime() + SILENCE_RECHECK_MS) }
    const opened: AlertProgress = { ...p, opened_at: now, reached: [...policy.channels] }
    const steps: AlertStep[] = policy.channels.length > 0 ? [{ step: 'opened', what: 'opened', channels: [...policy.channels] }] : []
    const escalation = escalate(policy, started, opened, now)
    return { steps: [...steps, ...escalation.steps], progress: escalation.progress, next: nextLook(policy, started, escalation.progress) }
  }
  if (ended !== null) {
    const steps: AlertStep[] =
      policy.on_resolved && p.reached.length > 0 ? [{ step: 'resolved', what: 'resolved', channels: [...p.reached] }] : []
    return { steps, progress: { ...p, done: true }, next: null }
  }
  if (silenced) {
    const later = nextLook(policy, started, p)
    const recheck = new Date(now.getTime() + SILENCE_RECHECK_MS)
    return { steps: [], progress: p, next: later !== null && later > recheck ? recheck : (later ?? recheck) }
  }
  const escalation = escalate(policy, started, p, now)
  const steps = [...escalation.steps]
  let progress = escalation.progress
  const every = policy.remind_every_min
  if (every !== null && every > 0 && progress.opened_at !== null) {
    const due = Math.floor((now.getTime() - progress.opened_at.getTime()) / (every * MINUTE_MS))
    if (due > progress.reminders) {
      // Channels that were just escalated to have heard it this instant: no reminder for them.
      const fresh = new Set(escalation.steps.flatMap((s) => s.channels))
      const channels = progress.reached.filter((c) => !fresh.has(c))
      if (channels.length > 0) steps.unshift({ step: `reminder:${due}`, what: 'reminder', channels })
      progress = { ...progress, reminders: due }
    }
  }
  return { steps, progress, next: nextLook(policy, started, progress) }
}

/** The escalation steps whose time has come, in order; each reaches only channels not reached yet. */
function escalate(policy: PolicyTiming, started: Date, p: AlertProgress, now: Date): { steps: AlertStep[]; progress: AlertProgress } {
  const steps: AlertStep[] = []
  let { escalated, reached } = p
  while (escalated < policy.escalate.length) {
    const step = policy.escalate[escalated]
    if (step === undefined || started.getTime() + step.after_min * MINUTE_MS > now.getTime()) break
    const fresh = step.channels.filter((c) => !reached.includes(c))
    if (fresh.length > 0) steps.push({ step: `escalate:${escalated}`, what: 'escalated', channels: fresh })
    reached = union(reached, step.channels)
    escalated++
  }
  return { steps, progress: { ...p, escalated, reached } }
}

/** When an open outage alert next has something to send: its next reminder or escalation step. */
function nextLook(policy: PolicyTiming, started: Date, p: AlertProgress): Date | null {
  const every = policy.remind_every_min
  const reminder =
    every !== null && every > 0 && p.opened_at !== null ? new Date(p.opened_at.getTime() + (p.reminders + 1) * every * MINUTE_MS) : null
  const step = policy.escalate[p.escalated]
  const escalation = step === undefined ? null : new Date(started.getTime() + step.after_min * MINUTE_MS)
  return earliest(reminder, escalation)
}
