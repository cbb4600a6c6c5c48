import { monitorEventLoopDelay } from 'node:perf_hooks'
/**
 * How fast scheduled checks may start, from how late the main thread's event loop runs. Past
 * capacity, every check started costs the thread that also answers status, badges and pages; when
 * the loop's delay climbs, the starts per second are cut (the checks that then cannot start within
 * an interval are shed and counted, as for a full gate), and raised again once it is low. A limit
 * on starts, not on slots: against fast targets a check holds its slot for milliseconds, so fewer
 * slots would hardly slow the starts down.
 */

/** The thresholds of {@link nextPace}. */
export interface PaceRule {
  /** A loop delay p99 above this cuts the rate. */
  highMs: number
  /** Below this the rate grows again. */
  lowMs: number
  /** Never fewer starts per second than this, so a busy machine still checks a modest list on time. */
  floorPerS: number
  /** The cut: the new rate is this share of what was started in the last second. */
  decrease: number
  /** The growth per second, as a share of the current rate. */
  increase: number
}

/** The service's rule: status p99 under 50 ms needs the loop's own p99 well below it. */
export const PACE_RULE: PaceRule = { highMs: 30, lowMs: 15, floorPerS: 50, decrease: 0.75, increase: 0.1 }

/**
 * The next limit on scheduled starts per second, null for none, from the last second's loop delay
 * p99 and the checks started in it. The limit is lifted once it is well above what is started.
 */
export function nextPace(limit: number | null, delayP99Ms: number, startedPerS: number, rule: PaceRule = PACE_RULE): number | null {
  if (delayP99Ms > rule.highMs) return Math.max(rule.floorPerS, Math.min(limit ?? Infinity, startedPerS) * rule.decrease)
  if (limit === null || delayP99Ms >= rule.lowMs) return limit
  const raised = limit * (1 + rule.increase) + 1
  return raised > 2 * startedPerS + rule.floorPerS ? null : raised
}

/** A token bucket over starts: `limit` per second, up to half a second's worth at once. */
export class StartBucket {
  #limit: number | null = null
  #tokens = 0
  #at = 0

  get limit(): number | null {
    return this.#limit
  }

  set(limit: number | null, now: number): void {
    this.#refill(now)
    this.#limit = limit
    if (limit !== null) this.#tokens = Math.min(this.#tokens, limit / 2)
  }

  /** Takes one start if the rate allows it now. */
  take(now: number): boolean {
    if (this.#limit === null) return true
    this.#refill(now)
    if (this.#tokens < 1) return false
    this.#tokens--
    return true
  }

  #refill(now: number): void {
    if (this.#limit !== null) this.#tokens = Math.min(this.#limit / 2, this.#tokens + ((now - this.#at) * this.#limit) / 1000)
    this.#at = now
  }
}

/** The histogram's timer period: its samples include it, so it is taken off. */
const LOOP_RESOLUTION_MS = 10

/** The main thread's event-loop delay p99 since the last read, in ms beyond the timer's own period. */
export function loopDelaySampler(): { p99Ms: () => number; close: () => void } {
  const histogram = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS })
  histogram.enable()
  return {
    p99Ms: () => {
      const p99 = histogram.count > 0 ? histogram.percentile(99) / 1e6 - LOOP_RESOLUTION_MS : 0
      histogram.reset()
      return Math.max(0, p99)
    },
    close: () => {
      histogram.disable()
    }
  }
}
