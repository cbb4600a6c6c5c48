/**
 * How an alert message's attempts are judged and retried. A 2xx delivers; 408, 429 and 5xx, or
 * no answer, are tried again after 5 s, doubling to at most 2 minutes, for a day; any other status
 * is a refusal that retrying cannot change (a wrong URL or key): the message fails at once and the
 * channel's next one is sent. A channel whose attempts keep failing is marked failing.
 */

const SECOND = 1000
export const FIRST_RETRY_MS = 5 * SECOND
export const MAX_RETRY_MS = 120 * SECOND
/** A message still undelivered this long after it was made fails. */
export const GIVE_UP_MS = 24 * 3600 * SECOND
/** Attempts failed in a row after which a channel is marked failing. */
export const FAILING_AFTER = 3
const JITTER = 0.1

export type AlertVerdict = 'delivered' | 'retry' | 'refused'

export function judgeAlertAnswer(status: number | null): AlertVerdict {
  if (status === null) return 'retry'
  if (status >= 200 && status < 300) return 'delivered'
  if (status === 408 || status === 429 || status >= 500) return 'retry'
  return 'refused'
}

/** The wait after `attempts` failed attempts, jittered with `random` (0 <= r < 1). */
export function alertRetryDelayMs(attempts: number, random: () => number): number {
  const base = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.max(0, attempts - 1))
  return Math.round(base * (1 - JITTER + 2 * JITTER * random()))
}

/** Whether a message made at `created` is past retrying at `now`. */
export function pastRetrying(created: Date, now: Date): boolean {
  return now.getTime() - created.getTime() >= GIVE_UP_MS
}

/** What a channel's health becomes after an attempt: its run of failures, and whether it is now failing. */
export function channelHealthAfter(
  health: { failures: number; failing_since: Date | null },
  delivered: boolean,
  now: Date
): { failures: number; failing_since: Date | null; became: 'failing' | 'recovered' | null } {
  if (delivered) return { failures: 0, failing_since: null, became: health.failing_since === null ? null : 'recovered' }
  const failures = health.failures + 1
  if (health.failing_since === null && failures >= FAILING_AFTER) return { failures, failing_since: now, became: 'failing' }
  return { failures, failing_since: health.failing_since, became: null }
}
