import type { CheckRecord } from '../../store/checks.js'
import { outageTransition, type OutageCheck, type OutageSnapshot } from '../../rules/outages.js'

/**
 * Which of `checks`, recorded in this order after `snapshot`, would open or close an outage, as
 * `recordChecks` applies them (`outageTransition`: a stale check changes nothing). Returns the flags
 * and the snapshot after them.
 */
export function outageTransitions(
  snapshot: OutageSnapshot,
  checks: readonly OutageCheck[]
): { transitions: boolean[]; after: OutageSnapshot } {
  let after = snapshot
  const transitions = checks.map((c) => {
    const step = outageTransition(after, c)
    after = step.after
    return step.change.kind === 'open' || step.change.kind === 'close'
  })
  return { transitions, after }
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
  base: OutageSnapshot
  /** The outage record once every waiting check is committed too. */
  tail: OutageSnapshot
}

/** Why a check was dropped: its site had too many waiting, or the whole backlog was full. */
export type DropReason = 'site' | 'total'

/**
 * The checks waiting to be recorded, per site and in order. A site keeps at most `perSite` checks
 * (waiting or being written), and the whole backlog at most `total`; beyond either bound a waiting
 * check is dropped, and one that changes no outage goes first (the site's oldest such for its own
 * bound, the oldest such anywhere for the total), so the transitions survive. Only when every
 * waiting check opens or closes an outage does one of those go: the oldest of the site that waited
 * longest. Writes take batches (`take`) and hand them back once committed (`done`).
 */
export class RecordingBacklog {
  readonly #sites = new Map<number, SiteQueue>()
  /** The waiting checks that change no outage, roughly oldest first: the first to drop. */
  readonly #harmless = new Set<CheckRecord>()
  readonly #perSite: number
  readonly #total: number
  readonly #context: (siteId: number) => OutageSnapshot
  #waiting = 0
  #inFlight = 0
  readonly #dropped = { harmless: 0, transitions: 0 }

  /** `context` tells a site's outage record as committed, for a site with nothing waiting or being written. */
  constructor({ perSite, total, context }: { perSite: number; total: number; context: (siteId: number) => OutageSnapshot }) {
    this.#perSite = perSite
    this.#total = total
    this.#context = context
  }

  /** Checks waiting or being written. */
  get size(): number {
    return this.#waiting + this.#inFlight
  }

  /** Checks dropped so far: those that changed no outage, and those that did (only when nothing else could go). */
  get dropped(): { harmless: number; transitions: number } {
    return { ...this.#dropped }
  }

  /** Queues a check; returns the check dropped to make room and why, if one was. */
  add(check: CheckRecord): { check: CheckRecord; reason: DropReason } | undefined {
    let queue = this.#sites.get(check.siteId)
    if (!queue) {
      const base = this.#context(check.siteId)
      queue = { waiting: [], inFlight: 0, base, tail: base }
      this.#sites.set(check.siteId, queue)
    }
    const {
      transitions: [transition],
      after
    } = outageTransitions(queue.tail, [check])
    queue.tail = after
    queue.waiting.push(check)
    if (transition === false) this.#harmless.add(check)
    this.#waiting++
    if (queue.waiting.length + queue.inFlight > this.#perSite) {
      const index = dropIndex(queue.waiting.map((c) => !this.#harmless.has(c)))
      return { check: this.#drop(queue, index), reason: 'site' }
    }
    if (this.size > this.#total) {
      const [oldest] = this.#harmless
      if (oldest !== undefined) {
        const own = this.#sites.get(oldest.siteId) as SiteQueue
        return { check: this.#drop(own, own.waiting.indexOf(oldest)), reason: 'total' }
      }
      for (const longest of this.#sites.values()) {
        if (longest.waiting.length > 0) return { check: this.#drop(longest, 0), reason: 'total' }
      }
    }
    return undefined
  }

  /** Drops a waiting check; the site's others are told again what they change without it. */
  #drop(queue: SiteQueue, index: number): CheckRecord {
    const [dropped] = queue.waiting.splice(index, 1) as [CheckRecord]
    this.#waiting--
    if (this.#harmless.delete(dropped)) this.#dropped.harmless++
    else this.#dropped.transitions++
    const { transitions, after } = outageTransitions(queue.base, queue.waiting)
    queue.waiting.forEach((c, i) => {
      if (transitions[i]) this.#harmless.delete(c)
      else this.#harmless.add(c)
    })
    queue.tail = after
    if (queue.waiting.length === 0 && queue.inFlight === 0) this.#sites.delete(dropped.siteId)
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
      for (const check of taken) {
        this.#harmless.delete(check)
        batch.push(check)
      }
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
