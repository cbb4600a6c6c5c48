/** A tracked site as the scheduler knows it. */
export interface ScheduledSite {
  id: number
  domain: string
}

/** Counters since start; `onTime` means started within `onTimeMs` of the due time. */
export interface SchedulerStats {
  started: number
  onTime: number
  late: number
  /** Due again while the previous check still ran or waited: not started twice. */
  skipped: number
  running: number
  queued: number
  sites: number
}

export interface SchedulerOptions {
  intervalMs: number
  /** The tracked sites now; when it fails the last known list is kept. */
  listSites: () => Promise<ScheduledSite[]>
  runCheck: (site: ScheduledSite, dueAt: number) => Promise<void>
  /** Checks running at once at most. */
  concurrency: number
  /** How often the site list is re-read; default min(intervalMs, 10 s). */
  refreshMs?: number
  /** Scheduling granularity; default 250 ms. */
  tickMs?: number
  onTimeMs?: number
  now?: () => number
  onError?: (err: unknown, what: 'list' | 'check') => void
}

interface Entry {
  site: ScheduledSite
  /** Offset of this site's due times within each interval. */
  phase: number
  running: boolean
  queued: boolean
  removed: boolean
}

/** FNV-1a: a stable, well-spread phase per domain, the same after every restart. */
function phaseOf(domain: string, intervalMs: number): number {
  let h = 0x811c9dc5
  for (let i = 0; i < domain.length; i++) {
    h ^= domain.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return Math.floor(((h >>> 0) / 2 ** 32) * intervalMs)
}

/**
 * Checks every site once per interval at its own phase, so the load is spread evenly instead of
 * bursting at the top of the interval. Sites are kept sorted by phase and a cursor walks them as
 * time passes, so a tick costs only the sites that fall due. At most `concurrency` checks run at once;
 * due sites beyond that wait in order, and a site still running or waiting is not started again.
 */
export class Scheduler {
  readonly #opts: Required<Omit<SchedulerOptions, 'onError'>> & Pick<SchedulerOptions, 'onError'>
  #entries: Entry[] = []
  #cycleStart = 0
  #cursor = 0
  #processedUntil = 0
  #queue: Array<{ entry: Entry; dueAt: number }> = []
  #queueHead = 0
  #running = 0
  #stats = { started: 0, onTime: 0, late: 0, skipped: 0 }
  #timers: NodeJS.Timeout[] = []
  #stopped = false
  #idle: (() => void) | null = null

  constructor(opts: SchedulerOptions) {
    this.#opts = {
      refreshMs: Math.min(opts.intervalMs, 10_000),
      tickMs: 250,
      onTimeMs: 5000,
      now: Date.now,
      ...opts
    }
  }

  async start(): Promise<void> {
    const now = this.#opts.now()
    // Cycles are aligned to the epoch, so a restart keeps every site's due times.
    this.#cycleStart = now - (now % this.#opts.intervalMs)
    this.#processedUntil = now
    await this.#refresh()
    this.#timers.push(setInterval(() => this.#tick(), this.#opts.tickMs), setInterval(() => void this.#refresh(), this.#opts.refreshMs))
    for (const timer of this.#timers) timer.unref()
  }

  async stop(): Promise<void> {
    this.#stopped = true
    for (const timer of this.#timers) clearInterval(timer)
    this.#timers = []
    for (let i = this.#queueHead; i < this.#queue.length; i++) (this.#queue[i] as { entry: Entry }).entry.queued = false
    this.#queue = []
    this.#queueHead = 0
    if (this.#running > 0) await new Promise<void>((resolve) => { this.#idle = resolve })
  }

  stats(): SchedulerStats {
    return { ...this.#stats, running: this.#running, queued: this.#queue.length - this.#queueHead, sites: this.#entries.length }
  }

  async #refresh(): Promise<void> {
    let sites: ScheduledSite[]
    try {
      sites = await this.#opts.listSites()
    } catch (err) {
      this.#opts.onError?.(err, 'list')
      return
    }
    if (this.#stopped) return
    const known = new Map(this.#entries.map((e) => [e.site.id, e]))
    const next: Entry[] = []
    for (const site of sites) {
      const old = known.get(site.id)
      known.delete(site.id)
      next.push(old && old.site.domain === site.domain
        ? old
        : { site, phase: phaseOf(site.domain, this.#opts.intervalMs), running: false, queued: false, removed: false })
    }
    for (const gone of known.values()) gone.removed = true
    next.sort((a, b) => a.phase - b.phase || a.site.id - b.site.id)
    this.#entries = next
    // Resume after what has been handled: a new site whose phase already passed waits for the next cycle.
    const done = this.#processedUntil - this.#cycleStart
    let lo = 0
    let hi = next.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if ((next[mid] as Entry).phase <= done) lo = mid + 1
      else hi = mid
    }
    this.#cursor = lo
  }

  #tick(): void {
    if (this.#stopped) return
    const now = this.#opts.now()
    const { intervalMs } = this.#opts
    for (;;) {
      const entry = this.#entries[this.#cursor]
      if (entry !== undefined && this.#cycleStart + entry.phase <= now) {
        this.#due(entry, this.#cycleStart + entry.phase)
        this.#cursor++
        continue
      }
      if (entry === undefined && now >= this.#cycleStart + intervalMs) {
        this.#cycleStart += intervalMs
        this.#cursor = 0
        continue
      }
      break
    }
    this.#processedUntil = now
  }

  #due(entry: Entry, dueAt: number): void {
    if (entry.running || entry.queued) {
      this.#stats.skipped++
      return
    }
    if (this.#running < this.#opts.concurrency) {
      this.#start(entry, dueAt)
      return
    }
    entry.queued = true
    this.#queue.push({ entry, dueAt })
  }

  #start(entry: Entry, dueAt: number): void {
    this.#running++
    entry.running = true
    this.#stats.started++
    if (this.#opts.now() - dueAt <= this.#opts.onTimeMs) this.#stats.onTime++
    else this.#stats.late++
    let work: Promise<void>
    try {
      work = this.#opts.runCheck(entry.site, dueAt)
    } catch (err) {
      work = Promise.reject(err)
    }
    work.catch((err: unknown) => this.#opts.onError?.(err, 'check')).finally(() => {
      this.#running--
      entry.running = false
      this.#pump()
      if (this.#running === 0 && this.#idle) {
        this.#idle()
        this.#idle = null
      }
    })
  }

  #pump(): void {
    while (!this.#stopped && this.#running < this.#opts.concurrency && this.#queueHead < this.#queue.length) {
      const { entry, dueAt } = this.#queue[this.#queueHead++] as { entry: Entry; dueAt: number }
      entry.queued = false
      if (!entry.removed) this.#start(entry, dueAt)
    }
    if (this.#queueHead > 1024 && this.#queueHead * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#queueHead)
      this.#queueHead = 0
    }
  }
}
