import type { CheckRecord } from '../store/checks.js'
import { outageStep } from './outages.js'

/** A site's outage record as the checks before some point leave it: an outage open or not, and its newest check's time. */
export interface OutageContext {
  open: boolean
  /** Epoch milliseconds of the newest check applied; -Infinity before any. */
  at: number
}

/**
 * Which of `checks`, recorded in this order after `context`, would open or close an outage, as
 * `recordChecks` applies them: a check older than the newest before it changes nothing (it is
 * stored late), the others step the outage as `outageStep` says. Returns the flags and the context
 * after them.
 */
export function outageTransitions(
  context: OutageContext, checks: ReadonlyArray<Pick<CheckRecord, 'status' | 'checkedAt'>>
): { transitions: boolean[]; after: OutageContext } {
  let { open, at } = context
  const transitions = checks.map((c) => {
    const t = c.checkedAt.getTime()
    if (t < at) return false
    at = t
    const step = outageStep(open, c.status)
    if (step === 'open') open = true
    else if (step === 'close') open = false
    return step !== 'none'
  })
  return { transitions, after: { open, at } }
}

/** Which waiting check to drop when only some can stay: the oldest that changes no outage, else the oldest. */
export function dropIndex(transitions: readonly boolean[]): number {
  const harmless = transitions.indexOf(false)
  return harmless === -1 ? 0 : harmless
}

interface SiteQueue {
  /** Checks not yet handed to a write, oldest first. */
  waiting: CheckRecord[]
  /** Checks of this site in the batch being written. */
  inFlight: number
  /** The outage record once every check handed to a write so far is committed. */
  base: OutageContext
}

/**
 * The checks waiting to be recorded, per site and in order. A site keeps at most `perSite` checks
 * (waiting or being written); beyond that one of its waiting checks is dropped, the oldest that
 * changes no outage first, so the transitions survive. Writes take batches (`take`) and hand them
 * back once committed (`done`).
 */
export class RecordingBacklog {
  readonly #sites = new Map<number, SiteQueue>()
  readonly #perSite: number
  readonly #context: (siteId: number) => OutageContext
  #waiting = 0
  #inFlight = 0

  /** `context` tells a site's outage record as committed, for a site with nothing waiting or being written. */
  constructor({ perSite, context }: { perSite: number; context: (siteId: number) => OutageContext }) {
    this.#perSite = perSite
    this.#context = context
  }

  /** Checks waiting or being written. */
  get size(): number {
    return this.#waiting + this.#inFlight
  }

  /** Queues a check; returns the check dropped to make room, if one was. */
  add(check: CheckRecord): CheckRecord | undefined {
    let queue = this.#sites.get(check.siteId)
    if (!queue) {
      queue = { waiting: [], inFlight: 0, base: this.#context(check.siteId) }
      this.#sites.set(check.siteId, queue)
    }
    queue.waiting.push(check)
    this.#waiting++
    if (queue.waiting.length + queue.inFlight <= this.#perSite) return undefined
    return this.#drop(queue, dropIndex(outageTransitions(queue.base, queue.waiting).transitions))
  }

  #drop(queue: SiteQueue, index: number): CheckRecord | undefined {
    const [dropped] = queue.waiting.splice(index, 1)
    if (dropped) this.#waiting--
    return dropped
  }

  /**
   * Takes up to `max` waiting checks for one write, each site's in order and the sites that waited
   * longest first. A site's next checks are only taken once this batch is `done`.
   */
  take(max: number): CheckRecord[] {
    const batch: CheckRecord[] = []
    for (const queue of this.#sites.values()) {
      if (batch.length >= max) break
      if (queue.waiting.length === 0 || queue.inFlight > 0) continue
      const taken = queue.waiting.splice(0, max - batch.length)
      queue.base = outageTransitions(queue.base, taken).after
      queue.inFlight = taken.length
      this.#waiting -= taken.length
      this.#inFlight += taken.length
      for (const check of taken) batch.push(check)
    }
    return batch
  }

  /** Hands back a batch from `take` once it is committed (or its sites are gone). */
  done(batch: readonly CheckRecord[]): void {
    for (const check of batch) {
      const queue = this.#sites.get(check.siteId)
      if (!queue) continue
      queue.inFlight--
      this.#inFlight--
      if (queue.inFlight === 0 && queue.waiting.length === 0) this.#sites.delete(check.siteId)
    }
  }
}
