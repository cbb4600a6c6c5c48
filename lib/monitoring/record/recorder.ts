import { setImmediate as nextTurn } from 'node:timers/promises'
import type { Logger } from 'pino'
import { isDatabaseUnavailable, isPoolSaturated, isRowRefused, pingDatabase, type Db } from '../../store/db.js'
import type { CheckRecord } from '../../store/checks.js'
import { recordChecks } from './record-check.js'
import { dropIndex, outageTransitions, RecordingBacklog } from './backlog.js'
import type { SiteStatus } from '../../rules/consensus.js'
import { siteCertificate } from '../../rules/certificates.js'
import type { SiteStates } from '../state/site-state.js'
import type { CheckResult } from '../../probing/supervisor.js'

/** Waits between attempts of a write the database refused (it answered, with an error); the last one repeats. */
const RETRY_DELAYS_MS = [250, 1000, 2000, 5000]
/** Waits between pings while the database cannot be reached; the last one repeats. */
const PING_DELAYS_MS = [250, 500, 1000]
/** Checks kept per site while the database is down; beyond that one is dropped (see {@link droppable}). */
const MAX_QUEUED_PER_SITE = 30
/**
 * Checks waiting to be recorded, all sites together, at most (about 60 MB with three locations
 * each); beyond that the ones that change no outage are dropped first. About 50 s of checks at
 * 60,000 sites a minute.
 */
const MAX_BACKLOG = 50_000
/** At most one warning this often about checks dropped because the backlog is full. */
const DROP_WARNING_EVERY_MS = 60_000
/** Checks written per transaction at most: one multi-row insert, one update of the sites. */
const BATCH_SIZE = 500

/**
 * Which waiting check to drop when a site's queue is full. `statuses[0]` is being written and is
 * never chosen. The oldest check that cannot open or close an outage goes first: one that is
 * neither up nor down, or that repeats the up/down status before it. Only when every waiting check
 * is a transition (the site flapped at every check) does the oldest waiting one go. Either way the
 * gap shows as missing checks, never as downtime. The rule of {@link RecordingBacklog}, told in
 * statuses: a head that is neither up nor down leaves the outage state unknown, so a waiting check
 * is kept when it would be a transition in either state.
 */
export function droppable(statuses: readonly SiteStatus[]): number {
  const head = statuses[0]
  const checks = statuses.slice(1).map((status) => ({ status, checkedAt: new Date(0) }))
  // Every check at one time: none is stale, and only the statuses decide.
  const flags = (open: boolean): boolean[] =>
    outageTransitions({ checkedAt: new Date(0), open: open ? { started_at: new Date(0) } : null }, checks).transitions
  const closed = flags(false)
  const open = flags(true)
  const transitions = head === 'down' ? open : head === 'up' ? closed : closed.map((c, i) => c || (open[i] as boolean))
  return 1 + dropIndex(transitions)
}

/** A check the database refused for what it holds, set aside so that the checks behind it are recorded. */
export interface SetAside {
  count: number
  /** The last one: its site, when it was checked, the database's code. */
  last: { siteId: number; checkedAt: string; code: string; at: string } | null
}

/**
 * Records checks of tracked sites, in batches: one writer takes what waits (up to 500 checks) and
 * writes it in one transaction, so a site's checks are written in order and recording costs a
 * fraction of one transaction per check. A failing write is retried until the database takes it,
 * and is never turned into target downtime (the site's state only changes once its check is
 * committed). While the database cannot be reached, one ping loop watches for its return; once it
 * answers, the waiting checks are written at once. A batch the database refuses for a value it
 * holds (one too long or out of range: {@link isRowRefused}) is split in halves, in order, down to
 * the one check it refuses, which is set aside (logged, counted, shown by /healthz and /metrics):
 * one bad row never blocks the rows behind it.
 */
export class CheckRecorder {
  readonly #db: Db
  readonly #states: SiteStates
  readonly #logger: Logger
  readonly #backlog: RecordingBacklog
  readonly #idle = new Set<() => void>()
  readonly #sleepers = new Set<() => void>()
  readonly #delays: readonly number[]
  readonly #pingDelays: readonly number[]
  #failing = false
  #writing = false
  /** The writer's current run, or its last one. */
  #lastRun: Promise<void> = Promise.resolve()
  /** Writes that found every pool connection busy and waited for one (see `stats`). */
  #poolWaits = 0
  /** Set while the database cannot be reached; resolves once it answers again. */
  #unreachable: Promise<void> | null = null
  #closed = false
  /** When the last warning about a full backlog was logged, and the drops since. */
  #dropWarnedAt = -Infinity
  #droppedUnwarned = 0
  readonly #setAside: SetAside = { count: 0, last: null }

  constructor({
    db,
    states,
    logger,
    retryDelaysMs = RETRY_DELAYS_MS,
    pingDelaysMs = PING_DELAYS_MS,
    maxBacklog = MAX_BACKLOG
  }: {
    db: Db
    states: SiteStates
    logger: Logger
    retryDelaysMs?: readonly number[]
    pingDelaysMs?: readonly number[]
    /** Checks waiting to be recorded at most, all sites together. */
    maxBacklog?: number
  }) {
    this.#db = db
    this.#states = states
    this.#logger = logger
    this.#delays = retryDelaysMs
    this.#pingDelays = pingDelaysMs
    this.#backlog = new RecordingBacklog({
      perSite: MAX_QUEUED_PER_SITE,
      total: maxBacklog,
      context: (siteId) => states.outageSnapshot(siteId)
    })
  }

  /** Hands a merged check over for recording; a domain that is not tracked is ignored. */
  record(result: CheckResult, source: CheckRecord['source']): void {
    if (this.#closed) return
    const siteId = this.#states.siteId(result.domain)
    if (siteId === undefined) return
    const dropped = this.#backlog.add({
      siteId,
      checkedAt: new Date(result.checked_at),
      status: result.status,
      blocked: result.blocked,
      partial: result.partial,
      responseMs: result.response_ms,
      locationsAnswered: result.locations_answered,
      locationsTotal: result.locations_total,
      source,
      locations: result.locations,
      tls: siteCertificate(result.locations)
    })
    if (dropped?.reason === 'site') {
      const { check } = dropped
      this.#logger.warn(
        { siteId: check.siteId, checkedAt: check.checkedAt, status: check.status },
        'check dropped: too many waiting for the database'
      )
    } else if (dropped) {
      this.#droppedUnwarned++
      const now = Date.now()
      if (now - this.#dropWarnedAt >= DROP_WARNING_EVERY_MS) {
        this.#dropWarnedAt = now
        this.#logger.warn(
          { dropped: this.#droppedUnwarned, ...this.#backlog.dropped, pending: this.pending() },
          'checks dropped: the recording backlog is full'
        )
        this.#droppedUnwarned = 0
      }
    }
    if (!this.#writing) this.#lastRun = this.#run()
  }

  /** The one writer: batch after batch until nothing waits, yielding between them. */
  async #run(): Promise<void> {
    this.#writing = true
    try {
      for (;;) {
        const batch = this.#backlog.take(BATCH_SIZE)
        if (batch.length === 0) break
        if (!(await this.#write(batch))) return
        this.#backlog.done(batch)
        // Requests and probe results go first between two batches.
        await nextTurn()
      }
    } finally {
      this.#writing = false
    }
    if (this.#backlog.size === 0) for (const resolve of this.#idle) resolve()
  }

  /**
   * Writes one batch, retrying until it is committed, or splitting it when the database refuses a
   * value it holds; false when the recorder was closed first.
   */
  async #write(batch: readonly CheckRecord[]): Promise<boolean> {
    const outcome = await this.#attempt(batch)
    if (outcome === 'written' || outcome === 'closed') return outcome === 'written'
    const [check] = batch
    if (batch.length === 1 && check !== undefined) {
      this.#putAside(check, outcome.code)
      return true
    }
    const half = Math.ceil(batch.length / 2)
    return (await this.#write(batch.slice(0, half))) && (await this.#write(batch.slice(half)))
  }

  #putAside(check: CheckRecord, code: string): void {
    const last = { siteId: check.siteId, checkedAt: check.checkedAt.toISOString(), code, at: new Date().toISOString() }
    this.#setAside.count++
    this.#setAside.last = last
    this.#logger.error(
      { ...last, setAside: this.#setAside.count },
      'a check the database refuses was set aside; the checks behind it are recorded'
    )
  }

  /** Checks the database refused for what they hold, and the last of them. */
  setAside(): Readonly<SetAside> {
    return this.#setAside
  }

  /** Tries one batch until it is committed, the recorder is closed, or the database refuses a value it holds. */
  async #attempt(batch: readonly CheckRecord[]): Promise<'written' | 'closed' | { code: string }> {
    // Set once an attempt may have reached the database, so a retry looks for its committed checks.
    let sent = false
    for (let attempt = 0; ; attempt++) {
      while (this.#unreachable !== null) await this.#unreachable
      if (this.#closed) return 'closed'
      try {
        await recordChecks({
          db: this.#db,
          checks: batch,
          retried: sent,
          writer: this.#states.writer,
          committed: (recorded) => {
            batch.forEach((check, i) => {
              const r = recorded[i]
              if (r) this.#states.apply(check, r)
            })
          }
        })
        if (this.#failing) {
          this.#failing = false
          this.#logger.info('recording checks again')
        }
        return 'written'
      } catch (err) {
        // The same rows would be refused again: the caller splits the batch to find the one.
        if (isRowRefused(err)) return { code: (err as { code: string }).code }
        // Every connection is busy with work the database is doing: wait for one, quietly. This
        // attempt never got a connection, so it reached nothing.
        if (isPoolSaturated(this.#db, err)) {
          this.#poolWaits++
          attempt--
          await this.#sleep(this.#pingDelays[0] ?? 250)
          continue
        }
        sent = true
        if (isDatabaseUnavailable(err)) {
          this.#waitForDatabase(err)
          continue
        }
        if (!this.#failing || attempt === 0) this.#logger.warn({ err, checks: batch.length, attempt }, 'recording a check failed; retrying')
        this.#failing = true
        await this.#sleep(this.#delays[Math.min(attempt, this.#delays.length - 1)] ?? 1000)
      }
    }
  }

  /** Starts the one ping loop that finds out when the database is back, unless it already runs. */
  #waitForDatabase(err: unknown): void {
    if (this.#unreachable !== null) return
    this.#logger.warn({ err, pending: this.pending() }, 'database unreachable; checks wait to be recorded')
    this.#unreachable = (async () => {
      for (let i = 0; !this.#closed; i++) {
        await this.#sleep(this.#pingDelays[Math.min(i, this.#pingDelays.length - 1)] ?? 1000)
        // close() may run during the sleep; TypeScript keeps the loop condition's narrowing across it.
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition
        if (!this.#closed && (await pingDatabase(this.#db))) break
      }
      this.#unreachable = null
      if (!this.#closed) this.#logger.info({ pending: this.pending() }, 'database reachable again; recording the waiting checks')
    })()
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer)
        this.#sleepers.delete(wake)
        resolve()
      }
      const timer = setTimeout(wake, ms)
      this.#sleepers.add(wake)
    })
  }

  /**
   * Checks waiting, how often a write waited for a pool connection because all were busy (not an
   * outage), and the checks dropped so far: those that changed no outage and those that did.
   */
  stats(): { pending: number; poolWaits: number; dropped: { harmless: number; transitions: number } } {
    return { pending: this.pending(), poolWaits: this.#poolWaits, dropped: this.#backlog.dropped }
  }

  /** Checks waiting to be recorded. */
  pending(): number {
    return this.#backlog.size
  }

  /** Resolves once nothing is waiting, or after `timeoutMs`; true when everything was recorded. */
  async flush(timeoutMs: number): Promise<boolean> {
    if (this.#backlog.size === 0) return true
    let resolveIdle!: () => void
    const idle = new Promise<boolean>((resolve) => {
      resolveIdle = () => {
        resolve(true)
      }
    })
    this.#idle.add(resolveIdle)
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => {
        resolve(false)
      }, timeoutMs)
    })
    try {
      return await Promise.race([idle, late])
    } finally {
      clearTimeout(timer)
      this.#idle.delete(resolveIdle)
    }
  }

  /** Resolves once the writer is idle: nothing left to write, or closed and its write in hand given up. */
  async settled(): Promise<void> {
    await this.#lastRun
  }

  /** Takes no more checks and stops retrying; what still waits is left unrecorded (see `pending`). */
  close(): void {
    this.#closed = true
    for (const wake of [...this.#sleepers]) wake()
  }
}
