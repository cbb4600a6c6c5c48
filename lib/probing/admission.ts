/** The most scheduled checks that run at once, whatever the capacity. */
const MAX_SCHEDULED_SLOTS = 500

/**
 * A key holding at most this many on-demand checks (the new one included) is a light consumer: its
 * checks are probed by actors of their own (Locations' `lightActors`), apart from the actors
 * busy with the heavy consumers' backlogs.
 */
export const LIGHT_KEY_CHECKS = 2

/**
 * How long a key that held more than {@link LIGHT_KEY_CHECKS} stays a heavy consumer after it held
 * fewer again. A heavy consumer's checks end in bursts (an actor answers a turn's probes together),
 * and between a burst and its next requests the key holds almost none: counted only at that moment,
 * one in 37 of a 16-deep consumer's checks went to the light actors (docs/decisions.md, Probing).
 */
export const HEAVY_KEY_MEMORY_MS = 1000

export interface AdmissionOptions {
  /** MAX_CHECKS_IN_FLIGHT: checks of both kinds running at once, at least 2. */
  capacity: number
  /** MAX_KEY_SHARE: the share of the on-demand slots one key may hold (0 < share <= 1). */
  keyShare: number
  /** The longest a check can run (probe deadline plus the answer margin): when a slot is free again at the latest. */
  maxCheckMs: number
  now?: () => number
}

/** A slot held by one running check; released once when the check ends, however it ends. */
export interface Ticket {
  release(): void
}

/** Why an on-demand check was not admitted, and when to try again (whole seconds, at least 1). */
export interface Refusal {
  scope: 'instance' | 'key'
  retryAfterS: number
}

/** Current occupancy, for /healthz-style reporting, benchmarks and tests. */
export interface AdmissionStats {
  capacity: number
  scheduledSlots: number
  demandSlots: number
  keySlots: number
  scheduled: number
  demand: number
  /** On-demand checks refused since start, by reason. */
  refusedInstance: number
  refusedKey: number
}

interface Slot extends Ticket {
  startedAt: number
}

/** A check waiting for a slot: `admit` hands it one. */
interface Waiter {
  admit(ticket: Ticket): void
}

/**
 * Admission control for checks: the one shared limit of the probing side (decisions.md, "Check
 * endpoint"). The capacity is split once: the scheduler gets its own slots (a quarter, at most 500), so
 * scheduled checks never wait behind on-demand ones and are never refused; on-demand checks share the
 * rest; a single check is refused at once when it is full, never queued, and a batch's checks wait
 * for a slot (each batch's own domains, so the waiting is bounded by what was admitted to the budget).
 * One key may hold at most `keyShare` of the on-demand slots, so that a consumer flooding hanging
 * domains leaves room for the others. A slot is held until the check's probe run ends.
 */
export class Admission {
  readonly capacity: number
  readonly scheduledSlots: number
  readonly demandSlots: number
  readonly keySlots: number
  readonly #maxCheckMs: number
  readonly #now: () => number
  /** On-demand slots in the order they were taken: the first is the one that frees up soonest. */
  readonly #demand = new Set<Slot>()
  readonly #byKey = new Map<string, Set<Slot>>()
  /**
   * Keys that held more than {@link LIGHT_KEY_CHECKS} lately: until when they count as heavy. An
   * entry goes when its key is next asked about after that; at most one per key.
   */
  readonly #heavyUntil = new Map<string, number>()
  /**
   * Checks waiting for a slot, by key, each key's in the order they came; keys in turn (the one
   * served last goes to the end), so that keys held up by the instance's capacity take turns.
   */
  readonly #waiters = new Map<string | undefined, Set<Waiter>>()
  #waiting = 0
  #scheduled = 0
  #refusedInstance = 0
  #refusedKey = 0

  constructor(opts: AdmissionOptions) {
    if (!(Number.isInteger(opts.capacity) && opts.capacity >= 2)) throw new RangeError('capacity must be an integer of at least 2')
    if (!(opts.keyShare > 0 && opts.keyShare <= 1)) throw new RangeError('keyShare must be in (0, 1]')
    this.capacity = opts.capacity
    this.scheduledSlots = Math.max(1, Math.min(MAX_SCHEDULED_SLOTS, Math.floor(opts.capacity / 4)))
    this.demandSlots = opts.capacity - this.scheduledSlots
    this.keySlots = Math.max(1, Math.floor(this.demandSlots * opts.keyShare))
    this.#maxCheckMs = opts.maxCheckMs
    this.#now = opts.now ?? (() => performance.now())
  }

  /** Takes an on-demand slot for `key` (none: counted against the instance only), or says why not. */
  admitDemand(key: string | undefined): Ticket | Refusal {
    const outcome = this.#take(key)
    if (isRefusal(outcome)) {
      if (outcome.scope === 'key') this.#refusedKey++
      else this.#refusedInstance++
    }
    return outcome
  }

  /**
   * Takes an on-demand slot for `key` as soon as one is free for it: a batch's checks wait here
   * instead of being refused. Each key's waiters are served in the order they came, as slots are
   * released, each within its key's share, so another key's checks keep the rest of the slots;
   * keys waiting for the instance take turns. Rejects with the signal's reason when it aborts first.
   */
  waitDemand(key: string | undefined, signal?: AbortSignal): Promise<Ticket> {
    if (signal?.aborted) return Promise.reject(signal.reason as Error)
    // Behind a waiter of the same key, a new check waits its turn.
    let queue = this.#waiters.get(key)
    if (queue === undefined) {
      const outcome = this.#take(key)
      if (!isRefusal(outcome)) return Promise.resolve(outcome)
      queue = new Set()
      this.#waiters.set(key, queue)
    }
    const mine = queue
    return new Promise<Ticket>((resolve, reject) => {
      const onAbort = (): void => {
        this.#leave(key, mine, waiter)
        reject(signal?.reason as Error)
      }
      const waiter: Waiter = {
        admit: (ticket) => {
          signal?.removeEventListener('abort', onAbort)
          resolve(ticket)
        }
      }
      mine.add(waiter)
      this.#waiting++
      signal?.addEventListener('abort', onAbort, { once: true })
    })
  }

  /** Checks waiting for a slot ({@link waitDemand}). */
  get waiting(): number {
    return this.#waiting
  }

  #leave(key: string | undefined, queue: Set<Waiter>, waiter: Waiter): void {
    if (!queue.delete(waiter)) return
    this.#waiting--
    if (queue.size === 0 && this.#waiters.get(key) === queue) this.#waiters.delete(key)
  }

  #take(key: string | undefined): Ticket | Refusal {
    // The key's own share first: a key over it is told so, whatever the others are doing.
    let mine = key === undefined ? undefined : this.#byKey.get(key)
    if (mine !== undefined && mine.size >= this.keySlots) return { scope: 'key', retryAfterS: this.#retryAfter(mine) }
    if (this.#demand.size >= this.demandSlots) return { scope: 'instance', retryAfterS: this.#retryAfter(this.#demand) }
    let released = false
    const slot: Slot = {
      startedAt: this.#now(),
      release: () => {
        if (released) return
        released = true
        this.#demand.delete(slot)
        if (key !== undefined && mine !== undefined) {
          // A heavy key's memory counts from the moment it stops holding more than a light one.
          if (mine.size > LIGHT_KEY_CHECKS) this.#heavyUntil.set(key, this.#now() + HEAVY_KEY_MEMORY_MS)
          mine.delete(slot)
          if (mine.size === 0 && this.#byKey.get(key) === mine) this.#byKey.delete(key)
        }
        if (this.#waiting > 0) this.#serveWaiters()
      }
    }
    if (key !== undefined && mine === undefined) {
      mine = new Set()
      this.#byKey.set(key, mine)
    }
    mine?.add(slot)
    this.#demand.add(slot)
    return slot
  }

  /**
   * A slot was released: each key in turn gives its first waiters the slots it may take; a key
   * served goes to the end of the turn. Stops once the instance is full.
   */
  #serveWaiters(): void {
    for (const [key, queue] of [...this.#waiters]) {
      if (this.#demand.size >= this.demandSlots) return
      let served = false
      for (const waiter of queue) {
        const outcome = this.#take(key)
        if (isRefusal(outcome)) break
        this.#leave(key, queue, waiter)
        waiter.admit(outcome)
        served = true
      }
      if (served && queue.size > 0) {
        this.#waiters.delete(key)
        this.#waiters.set(key, queue)
      }
    }
  }

  /** On-demand checks `key` holds now. */
  heldBy(key: string): number {
    return this.#byKey.get(key)?.size ?? 0
  }

  /**
   * Whether `key`, having just taken a slot, is a light consumer: it holds at most
   * {@link LIGHT_KEY_CHECKS} checks now and held no more within the last {@link HEAVY_KEY_MEMORY_MS}.
   */
  isLight(key: string): boolean {
    if (this.heldBy(key) > LIGHT_KEY_CHECKS) return false
    const until = this.#heavyUntil.get(key)
    if (until === undefined) return true
    if (this.#now() < until) return false
    this.#heavyUntil.delete(key)
    return true
  }

  /** Counts a scheduled check; never refused (the scheduler keeps itself within {@link scheduledSlots}). */
  admitScheduled(): Ticket {
    this.#scheduled++
    let released = false
    return {
      release: () => {
        if (released) return
        released = true
        this.#scheduled--
      }
    }
  }

  stats(): AdmissionStats {
    return {
      capacity: this.capacity,
      scheduledSlots: this.scheduledSlots,
      demandSlots: this.demandSlots,
      keySlots: this.keySlots,
      scheduled: this.#scheduled,
      demand: this.#demand.size,
      refusedInstance: this.#refusedInstance,
      refusedKey: this.#refusedKey
    }
  }

  /** Seconds until the oldest of `slots` has reached its deadline, when one is free at the latest. */
  #retryAfter(slots: Set<Slot>): number {
    const oldest = slots.values().next().value
    const leftMs = oldest === undefined ? 0 : oldest.startedAt + this.#maxCheckMs - this.#now()
    return Math.max(1, Math.ceil(leftMs / 1000))
  }
}

/** Whether {@link Admission.admitDemand} said no. */
export function isRefusal(outcome: Ticket | Refusal): outcome is Refusal {
  return 'scope' in outcome
}
