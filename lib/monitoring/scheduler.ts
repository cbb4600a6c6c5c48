import { LoadWindow, type LoadEvent, type ScheduleLoad } from './schedule-load.js'

/** A tracked site as the scheduler knows it. */
export interface ScheduledSite {
  id: number
  domain: string
}

/** Counters since start, plus the current load. */
export interface SchedulerStats {
  /** Checks started. */
  started: number
  /** Started within `onTimeMs` of their due time. */
  onTime: number
  /** Started more than `onTimeMs` after their due time (they waited for a free slot). */
  late: number
  /** Due again while the previous check still ran or waited for a slot: not started twice. */
  skipped: number
  /** Could not start within one interval of their due time, or found the queue full: never started. */
  shed: number
  /** Checks running now. */
  running: number
  /** Due checks waiting for a free slot. */
  queued: number
  /** Sites in the current list. */
  sites: number
  /** The same over the last minute, with rates and whether the scheduler is behind. */
  lastMinute: ScheduleLoad
}

/** How a {@link Scheduler} finds its sites, runs their checks and paces itself. */
export interface SchedulerOptions {
  /** Every site is due once per interval. */
  intervalMs: number
  /** The tracked sites now; when it fails the last known list is kept and retried on the next refresh. */
  listSites: () => Promise<ScheduledSite[]>
  /** One check of one site; a rejection is counted and reported, never thrown. */
  runCheck: (site: ScheduledSite, dueAt: number) => Promise<void>
  /** Checks running at once at most. */
  concurrency: number
  /** How often the site list is re-read; default min(intervalMs / 2, 10 s). */
  refreshMs?: number
  /** Scheduling granularity; default 250 ms. */
  tickMs?: number
  /** A check started within this long of its due time is on time; default 5 s. */
  onTimeMs?: number
  /** Due checks waiting for a slot at most; beyond it a due check is shed. Default 10,000. */
  maxQueued?: number
  /** Told at most once a minute, while the scheduler is behind (see `isBehind`), what the last minute looked like. */
  onBehind?: (load: ScheduleLoad) => void
  /** The clock, in ms; default `Date.now`. */
  now?: () => number
  onError?: (err: unknown, what: 'list' | 'check') => void
}

/** A site that appeared while the scheduler ran, waiting for its first check (see {@link Scheduler}). */
interface First {
  entry: Entry
  dueAt: number
}

/** A due check waiting for a slot; dead once its entry no longer points at it (shed or stopped). */
interface Waiting {
  entry: Entry
  dueAt: number
}

interface Entry {
  site: ScheduledSite
  /** Offset of this site's due times within each interval. */
  phase: number
  running: boolean
  /** Its check waiting in the queue, if any. */
  waiting: Waiting | null
  removed: boolean
}

const WARN_EVERY_MS = 60_000

/** FNV-1a with a murmur3 finaliser: a stable, evenly spread phase per domain, the same after every restart. */
export function phaseOf(domain: string, intervalMs: number): number {
  const name = domain.toLowerCase()
  let h = 0x811c9dc5
  for (let i = 0; i < name.length; i++) {
    h ^= name.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return Math.floor(((h >>> 0) / 2 ** 32) * intervalMs)
}

const byPhase = (a: Entry, b: Entry): number => a.phase - b.phase || a.site.id - b.site.id

/**
 * Checks every site once per interval at its own phase, so the load is spread evenly instead of
 * bursting at the top of the interval. Sites are kept sorted by phase and a cursor walks them as
 * time passes, so a tick costs only the sites that fall due. At most `concurrency` checks run at
 * once; due sites beyond that wait in order, and a site still running or waiting is not started again.
 *
 * Past capacity it sheds instead of piling up: a check that cannot start within one interval of its
 * due time is dropped and counted (by then the site is due again, so a fresher check replaces it),
 * and at most `maxQueued` checks wait, so memory is bounded whatever the number of sites.
 *
 * A site that appears in the list while the scheduler runs is first checked within one interval of
 * being added: it was added after the previous read of the list began, so its first check is due by
 * that read's start plus one interval. If its phase comes before then it simply waits for it;
 * otherwise its first check is placed at its phase scaled into the time left, so that a large import
 * is spread out rather than started at once. After that it keeps its phase.
 */
export class Scheduler {
  readonly #opts: Required<Omit<SchedulerOptions, 'onError' | 'onBehind'>> & Pick<SchedulerOptions, 'onError' | 'onBehind'>
  #entries: Entry[] = []
  /** Entries running or queued, so a site removed and re-added meanwhile is not checked twice at once. */
  #busy = new Map<number, Entry>()
  #cycleStart = 0
  #cursor = 0
  /** Every due time up to here has been handled. */
  #processedUntil = 0
  /** Waiting checks in due order, dead ones included until the head passes them. */
  #queue: Waiting[] = []
  #queueHead = 0
  /** Live checks in the queue. */
  #queued = 0
  /** First checks of newly seen sites, by due time. */
  #firsts: First[] = []
  #firstsHead = 0
  /** When the last successful read of the site list began; null before the first one. */
  #listedAt: number | null = null
  #running = 0
  #stats = { started: 0, onTime: 0, late: 0, skipped: 0, shed: 0 }
  #window: LoadWindow
  #warnedAt = -Infinity
  #timers: NodeJS.Timeout[] = []
  #started = false
  #stopped = false
  #refreshing = false
  #idle: Array<() => void> = []

  constructor(opts: SchedulerOptions) {
    if (!(opts.intervalMs > 0) || !(opts.concurrency >= 1)) throw new RangeError('intervalMs and concurrency must be positive')
    this.#opts = {
      ...opts,
      refreshMs: opts.refreshMs ?? Math.min(opts.intervalMs / 2, 10_000),
      tickMs: opts.tickMs ?? 250,
      onTimeMs: opts.onTimeMs ?? 5000,
      maxQueued: opts.maxQueued ?? 10_000,
      now: opts.now ?? Date.now
    }
    if (!(this.#opts.maxQueued >= 0)) throw new RangeError('maxQueued must not be negative')
    this.#window = new LoadWindow({ since: this.#opts.now() })
  }

  /** Loads the site list once, then checks each site at its phase until {@link stop}. */
  async start(): Promise<void> {
    if (this.#started) return
    this.#started = true
    await this.#refresh()
    if (this.#stopped) return
    const { intervalMs, tickMs, refreshMs } = this.#opts
    const now = this.#opts.now()
    this.#window = new LoadWindow({ since: now })
    // Cycles are aligned to the epoch, so a restart keeps every site's due times; sites whose
    // phase has passed in the current cycle wait for the next one.
    this.#cycleStart = now - (((now % intervalMs) + intervalMs) % intervalMs)
    this.#processedUntil = now
    this.#seek()
    this.#timers.push(setInterval(() => this.#tick(), tickMs), setInterval(() => void this.#refresh(), refreshMs))
    for (const timer of this.#timers) timer.unref()
  }

  /** Starts no further check and resolves once the running ones have finished. */
  async stop(): Promise<void> {
    this.#stopped = true
    for (const timer of this.#timers) clearInterval(timer)
    this.#timers = []
    for (let i = this.#queueHead; i < this.#queue.length; i++) {
      const waiting = this.#queue[i] as Waiting
      if (waiting.entry.waiting !== waiting) continue
      waiting.entry.waiting = null
      this.#release(waiting.entry)
    }
    this.#queue = []
    this.#queueHead = 0
    this.#queued = 0
    this.#firsts = []
    this.#firstsHead = 0
    if (this.#running > 0) await new Promise<void>((resolve) => this.#idle.push(resolve))
  }

  stats(): SchedulerStats {
    return { ...this.#stats, running: this.#running, queued: this.#queued, sites: this.#entries.length, lastMinute: this.load() }
  }

  /** The last minute's figures: due and started per second, late, skipped, shed, and whether it is behind. */
  load(): ScheduleLoad {
    return this.#window.read(this.#opts.now())
  }

  async #refresh(): Promise<void> {
    // A slow database must not pile up overlapping reads, nor let an older list win over a newer one.
    if (this.#refreshing) return
    this.#refreshing = true
    const readAt = this.#opts.now()
    let sites: ScheduledSite[]
    try {
      sites = await this.#opts.listSites()
    } catch (err) {
      this.#report(err, 'list')
      return
    } finally {
      this.#refreshing = false
    }
    if (this.#stopped) return
    // Sites new in this list were added after the previous read began (the first list is no news).
    this.#apply(sites, this.#listedAt === null ? null : this.#listedAt + this.#opts.intervalMs)
    this.#listedAt = readAt
  }

  /**
   * Costs O(n) for an unchanged list; only added sites are sorted, then merged. `firstBy` is when
   * the added sites' first checks are due at the latest; null at start, when every site waits for its phase.
   */
  #apply(sites: ScheduledSite[], firstBy: number | null): void {
    const incoming = new Map<number, ScheduledSite>()
    for (const site of sites) if (!incoming.has(site.id)) incoming.set(site.id, site)
    const kept: Entry[] = []
    for (const entry of this.#entries) {
      const site = incoming.get(entry.site.id)
      if (site !== undefined && site.domain === entry.site.domain) {
        entry.site = site
        kept.push(entry)
        incoming.delete(site.id)
      } else {
        entry.removed = true
      }
    }
    const added: Entry[] = []
    for (const site of incoming.values()) {
      const busy = this.#busy.get(site.id)
      if (busy !== undefined && busy.site.domain === site.domain) {
        busy.removed = false
        added.push(busy)
      } else {
        added.push({ site, phase: phaseOf(site.domain, this.#opts.intervalMs), running: false, waiting: null, removed: false })
      }
    }
    if (firstBy !== null) this.#placeFirsts(added, firstBy)
    added.sort(byPhase)
    const next: Entry[] = []
    let i = 0
    let j = 0
    while (i < kept.length || j < added.length) {
      const a = kept[i]
      const b = added[j]
      if (b === undefined || (a !== undefined && byPhase(a, b) <= 0)) {
        next.push(a as Entry)
        i++
      } else {
        next.push(b)
        j++
      }
    }
    this.#entries = next
    this.#seek()
  }

  /** Gives each added site whose phase comes after `firstBy` a first check before then, spread by phase. */
  #placeFirsts(added: Entry[], firstBy: number): void {
    const { intervalMs } = this.#opts
    const now = this.#opts.now()
    const left = Math.max(0, firstBy - now)
    const placed: First[] = []
    for (const entry of added) {
      if (entry.running || entry.waiting !== null) continue
      let due = this.#cycleStart + entry.phase
      if (due <= this.#processedUntil) due += intervalMs
      if (due > firstBy) placed.push({ entry, dueAt: now + Math.floor((entry.phase / intervalMs) * left) })
    }
    if (placed.length === 0) return
    this.#firsts = [...this.#firsts.slice(this.#firstsHead), ...placed].sort((a, b) => a.dueAt - b.dueAt)
    this.#firstsHead = 0
  }

  /** Points the cursor past every phase already handled in this cycle, so a new site waits for its phase. */
  #seek(): void {
    const done = this.#processedUntil - this.#cycleStart
    let lo = 0
    let hi = this.#entries.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if ((this.#entries[mid] as Entry).phase <= done) lo = mid + 1
      else hi = mid
    }
    this.#cursor = lo
  }

  #tick(): void {
    if (this.#stopped) return
    const now = this.#opts.now()
    const { intervalMs } = this.#opts
    this.#shedExpired(now)
    for (let first = this.#firsts[this.#firstsHead]; first !== undefined && first.dueAt <= now; first = this.#firsts[this.#firstsHead]) {
      this.#firstsHead++
      if (!first.entry.removed) this.#due(first.entry, first.dueAt)
    }
    if (this.#firstsHead > 0 && this.#firstsHead === this.#firsts.length) {
      this.#firsts = []
      this.#firstsHead = 0
    }
    for (;;) {
      const entry = this.#entries[this.#cursor]
      if (entry !== undefined && this.#cycleStart + entry.phase <= now) {
        this.#due(entry, this.#cycleStart + entry.phase)
        this.#cursor++
      } else if (entry === undefined && now >= this.#cycleStart + intervalMs) {
        this.#cycleStart += intervalMs
        this.#cursor = 0
      } else {
        break
      }
    }
    this.#processedUntil = now
    this.#warnIfBehind(now)
  }

  #due(entry: Entry, dueAt: number): void {
    const now = this.#opts.now()
    this.#count(now, 'due')
    // A check still waiting a whole interval after its due time gives way to the one due now.
    if (entry.waiting !== null && now - entry.waiting.dueAt >= this.#opts.intervalMs) this.#shed(entry.waiting, now)
    if (entry.running || entry.waiting !== null) {
      this.#stats.skipped++
      this.#count(now, 'skipped')
    } else if (this.#running < this.#opts.concurrency) {
      this.#start(entry, dueAt)
    } else if (this.#queued >= this.#opts.maxQueued) {
      this.#stats.shed++
      this.#count(now, 'shed')
    } else {
      const waiting = { entry, dueAt }
      entry.waiting = waiting
      this.#busy.set(entry.site.id, entry)
      this.#queue.push(waiting)
      this.#queued++
    }
  }

  /** Drops the waiting checks at the head of the queue that can no longer start within one interval of due. */
  #shedExpired(now: number): void {
    for (let head = this.#queue[this.#queueHead]; head !== undefined; head = this.#queue[this.#queueHead]) {
      if (head.entry.waiting === head) {
        if (now - head.dueAt < this.#opts.intervalMs) break
        this.#shed(head, now)
      }
      this.#queueHead++
    }
    this.#compact()
  }

  /** Takes a live waiting check out of the queue; counted as shed unless its site was removed meanwhile. */
  #shed(waiting: Waiting, now: number): void {
    const { entry } = waiting
    entry.waiting = null
    this.#queued--
    this.#release(entry)
    if (entry.removed) return
    this.#stats.shed++
    this.#count(now, 'shed')
  }

  #count(now: number, what: LoadEvent): void {
    this.#window.add(now, what)
  }

  #warnIfBehind(now: number): void {
    if (this.#opts.onBehind === undefined || now - this.#warnedAt < WARN_EVERY_MS) return
    const load = this.#window.read(now)
    if (!load.behind) return
    this.#warnedAt = now
    try {
      this.#opts.onBehind(load)
    } catch {
      // A failing handler must not stop the scheduler.
    }
  }

  #start(entry: Entry, dueAt: number): void {
    this.#running++
    entry.running = true
    this.#busy.set(entry.site.id, entry)
    this.#stats.started++
    const now = this.#opts.now()
    this.#count(now, 'started')
    if (now - dueAt <= this.#opts.onTimeMs) {
      this.#stats.onTime++
    } else {
      this.#stats.late++
      this.#count(now, 'late')
    }
    let work: Promise<void>
    try {
      work = Promise.resolve(this.#opts.runCheck(entry.site, dueAt))
    } catch (err) {
      work = Promise.reject(err)
    }
    work.then(undefined, (err: unknown) => this.#report(err, 'check')).then(() => {
      this.#running--
      entry.running = false
      this.#release(entry)
      this.#pump()
      if (this.#running === 0) for (const resolve of this.#idle.splice(0)) resolve()
    })
  }

  #pump(): void {
    const now = this.#opts.now()
    while (!this.#stopped && this.#running < this.#opts.concurrency && this.#queueHead < this.#queue.length) {
      const waiting = this.#queue[this.#queueHead] as Waiting
      this.#queueHead++
      const { entry } = waiting
      if (entry.waiting !== waiting) continue
      if (entry.removed || now - waiting.dueAt >= this.#opts.intervalMs) {
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

  #release(entry: Entry): void {
    if (!entry.running && entry.waiting === null && this.#busy.get(entry.site.id) === entry) this.#busy.delete(entry.site.id)
  }

  #report(err: unknown, what: 'list' | 'check'): void {
    try {
      this.#opts.onError?.(err, what)
    } catch {
      // A failing error handler must not stop the scheduler.
    }
  }
}
