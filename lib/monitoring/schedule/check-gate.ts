import type { LoadEvent } from './schedule-load.js'

/** A tracked site as the scheduler knows it. */
export interface ScheduledSite {
  id: number
  domain: string
  /** Its own check interval in seconds; null or absent: the scheduler's `intervalMs`. */
  interval_s?: number | null
}

/** A site as the gate sees it: whether its check runs or waits, and whether it left the list meanwhile. */
export interface GateEntry {
  site: ScheduledSite
  /** The site's interval: a check still waiting this long after its due time is shed. */
  intervalMs: number
  running: boolean
  /** Its check waiting in the queue, if any. */
  waiting: Waiting<GateEntry> | null
  removed: boolean
}

/** A due check waiting for a slot; dead once its entry no longer points at it (shed or stopped). */
export interface Waiting<E extends GateEntry> {
  entry: E
  dueAt: number
}

/** What became of the checks offered to a {@link CheckGate}, since it was made. */
export interface GateCounters {
  started: number
  onTime: number
  late: number
  skipped: number
  shed: number
}

/** How a {@link CheckGate} runs checks and when it gives up on one. */
export interface CheckGateOptions {
  /** Checks running at once at most. */
  concurrency: number
  /** Due checks waiting for a slot at most; beyond it a due check is shed. */
  maxQueued: number
  /** A check started within this long of its due time is on time. */
  onTimeMs: number
  runCheck: (site: ScheduledSite, dueAt: number) => Promise<void>
  now: () => number
  /** Told of every check started, late, skipped or shed, for the load window. */
  count: (now: number, what: LoadEvent) => void
  /** A check's failure; never thrown. */
  onError: (err: unknown) => void
}

/**
 * The concurrency gate: at most `concurrency` checks run at once, due checks beyond that wait in
 * due order, and a site still running or waiting is not started again.
 *
 * Past capacity it sheds instead of piling up: a check that cannot start within one interval (the
 * site's own) of its due time is dropped and counted (by then the site is due again, so a fresher
 * check replaces it),
 * and at most `maxQueued` checks wait, so memory is bounded whatever the number of sites.
 */
export class CheckGate<E extends GateEntry> {
  readonly #opts: CheckGateOptions
  /** Entries running or queued, so a site removed and re-added meanwhile is not checked twice at once. */
  #busy = new Map<number, E>()
  /** Waiting checks in due order, dead ones included until the head passes them. */
  #queue: Array<Waiting<E>> = []
  #queueHead = 0
  /** Live checks in the queue. */
  #queued = 0
  #running = 0
  #counters: GateCounters = { started: 0, onTime: 0, late: 0, skipped: 0, shed: 0 }
  #closed = false
  #idle: Array<() => void> = []

  constructor(opts: CheckGateOptions) {
    this.#opts = opts
  }

  get running(): number {
    return this.#running
  }

  get queued(): number {
    return this.#queued
  }

  counters(): GateCounters {
    return { ...this.#counters }
  }

  /** The entry of a site whose check runs or waits now, if any. */
  busyWith(siteId: number): E | undefined {
    return this.#busy.get(siteId)
  }

  /** A site fell due: start its check, queue it, or count it skipped or shed. */
  offer(entry: E, dueAt: number): void {
    const now = this.#opts.now()
    // A check still waiting a whole interval after its due time gives way to the one due now.
    if (entry.waiting !== null && now - entry.waiting.dueAt >= entry.intervalMs) this.#shed(entry.waiting as Waiting<E>, now)
    if (entry.running || entry.waiting !== null) {
      this.#counters.skipped++
      this.#opts.count(now, 'skipped')
    } else if (this.#running < this.#opts.concurrency) {
      this.#start(entry, dueAt)
    } else if (this.#queued >= this.#opts.maxQueued) {
      this.#counters.shed++
      this.#opts.count(now, 'shed')
    } else {
      const waiting = { entry, dueAt }
      entry.waiting = waiting
      this.#busy.set(entry.site.id, entry)
      this.#queue.push(waiting)
      this.#queued++
    }
  }

  /**
   * Drops the waiting checks at the head of the queue that can no longer start within one interval of
   * due. The first that still can stops the walk: one behind it with a shorter interval is shed when
   * it reaches a slot or falls due again.
   */
  shedExpired(now: number): void {
    for (let head = this.#queue[this.#queueHead]; head !== undefined; head = this.#queue[this.#queueHead]) {
      if (head.entry.waiting === head) {
        if (now - head.dueAt < head.entry.intervalMs) break
        this.#shed(head, now)
      }
      this.#queueHead++
    }
    this.#compact()
  }

  /** Starts no further check, drops the waiting ones uncounted, and resolves once the running ones have finished. */
  async close(): Promise<void> {
    this.#closed = true
    for (let i = this.#queueHead; i < this.#queue.length; i++) {
      const waiting = this.#queue[i] as Waiting<E>
      if (waiting.entry.waiting !== waiting) continue
      waiting.entry.waiting = null
      this.#release(waiting.entry)
    }
    this.#queue = []
    this.#queueHead = 0
    this.#queued = 0
    if (this.#running > 0) await new Promise<void>((resolve) => this.#idle.push(resolve))
  }

  /** Takes a live waiting check out of the queue; counted as shed unless its site was removed meanwhile. */
  #shed(waiting: Waiting<E>, now: number): void {
    const { entry } = waiting
    entry.waiting = null
    this.#queued--
    this.#release(entry)
    if (entry.removed) return
    this.#counters.shed++
    this.#opts.count(now, 'shed')
  }

  #start(entry: E, dueAt: number): void {
    this.#running++
    entry.running = true
    this.#busy.set(entry.site.id, entry)
    this.#counters.started++
    const now = this.#opts.now()
    this.#opts.count(now, 'started')
    if (now - dueAt <= this.#opts.onTimeMs) {
      this.#counters.onTime++
    } else {
      this.#counters.late++
      this.#opts.count(now, 'late')
    }
    // A check that throws at once fails like one that rejects, and finishes asynchronously all the same.
    const work = new Promise<void>((resolve) => {
      resolve(this.#opts.runCheck(entry.site, dueAt))
    })
    void work
      .catch((err: unknown) => {
        this.#opts.onError(err)
      })
      .then(() => {
        this.#running--
        entry.running = false
        this.#release(entry)
        this.#pump()
        if (this.#running === 0) for (const resolve of this.#idle.splice(0)) resolve()
      })
  }

  #pump(): void {
    const now = this.#opts.now()
    while (!this.#closed && this.#running < this.#opts.concurrency && this.#queueHead < this.#queue.length) {
      const waiting = this.#queue[this.#queueHead] as Waiting<E>
      this.#queueHead++
      const { entry } = waiting
      if (entry.waiting !== waiting) continue
      if (entry.removed || now - waiting.dueAt >= entry.intervalMs) {
        this.#shed(waiting, now)
        continue
      }
      entry.waiting = null
      this.#queued--
      this.#start(entry, waiting.dueAt)
    }
    this.#compact()
  }

  #compact(): void {
    if (this.#queueHead === this.#queue.length) {
      this.#queue = []
      this.#queueHead = 0
    } else if (this.#queueHead > 1024 && this.#queueHead * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#queueHead)
      this.#queueHead = 0
    }
  }

  #release(entry: E): void {
    if (!entry.running && entry.waiting === null && this.#busy.get(entry.site.id) === entry) this.#busy.delete(entry.site.id)
  }
}
