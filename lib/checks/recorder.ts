import type { Logger } from 'pino'
import type { Db } from '../store/db.js'
import { recordCheck, type CheckRecord } from '../store/checks.js'
import type { SiteStates } from './site-state.js'
import type { CheckResult } from './supervisor.js'

/** Waits between attempts while the database is failing; the last one repeats. */
const RETRY_DELAYS_MS = [250, 1000, 2000, 5000]
/** Checks kept per site while the database is down; beyond that the oldest go (a gap, reported as unavailable). */
const MAX_QUEUED_PER_SITE = 30

/**
 * Records checks of tracked sites. Writes for one site happen in order, one at a time; a failing
 * write is retried until the database takes it, and is never turned into target downtime (the
 * site's state only changes once its check is committed).
 */
export class CheckRecorder {
  readonly #db: Db
  readonly #states: SiteStates
  readonly #logger: Logger
  readonly #queues = new Map<number, CheckRecord[]>()
  readonly #idle = new Set<() => void>()
  readonly #delays: readonly number[]
  #failing = false

  constructor({ db, states, logger, retryDelaysMs = RETRY_DELAYS_MS }: { db: Db; states: SiteStates; logger: Logger; retryDelaysMs?: readonly number[] }) {
    this.#db = db
    this.#states = states
    this.#logger = logger
    this.#delays = retryDelaysMs
  }

  /** Hands a merged check over for recording; a domain that is not tracked is ignored. */
  record(result: CheckResult, source: CheckRecord['source']): void {
    const siteId = this.#states.siteId(result.domain)
    if (siteId === undefined) return
    const check: CheckRecord = {
      siteId,
      checkedAt: new Date(result.checked_at),
      status: result.status,
      blocked: result.blocked,
      partial: result.partial,
      responseMs: result.response_ms,
      locationsAnswered: result.locations_answered,
      locationsTotal: result.locations_total,
      source,
      locations: result.locations
    }
    let queue = this.#queues.get(siteId)
    if (queue) {
      queue.push(check)
      if (queue.length > MAX_QUEUED_PER_SITE) {
        queue.splice(1, 1) // the head is being written; drop the oldest waiting one
        this.#logger.warn({ siteId }, 'check dropped: too many waiting for the database')
      }
      return
    }
    queue = [check]
    this.#queues.set(siteId, queue)
    void this.#drain(siteId, queue)
  }

  async #drain(siteId: number, queue: CheckRecord[]): Promise<void> {
    while (queue.length > 0) {
      await this.#write(queue[0] as CheckRecord)
      queue.shift()
    }
    this.#queues.delete(siteId)
    if (this.#queues.size === 0) for (const resolve of this.#idle) resolve()
  }

  async #write(check: CheckRecord): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        const recorded = await recordCheck({ db: this.#db, check })
        this.#states.apply(check, recorded)
        if (this.#failing) {
          this.#failing = false
          this.#logger.info('recording checks again')
        }
        return
      } catch (err) {
        if ((err as Error).message === 'site not found') return
        if (!this.#failing || attempt === 0) this.#logger.warn({ err, siteId: check.siteId, attempt }, 'recording a check failed; retrying')
        this.#failing = true
        const delay = this.#delays[Math.min(attempt, this.#delays.length - 1)] ?? 1000
        await new Promise((resolve) => setTimeout(resolve, delay))
      }
    }
  }

  /** Checks waiting to be recorded. */
  pending(): number {
    let n = 0
    for (const q of this.#queues.values()) n += q.length
    return n
  }

  /** Resolves once nothing is waiting, or after `timeoutMs`; true when everything was recorded. */
  async flush(timeoutMs: number): Promise<boolean> {
    if (this.#queues.size === 0) return true
    let resolveIdle!: () => void
    const idle = new Promise<boolean>((resolve) => { resolveIdle = () => resolve(true) })
    this.#idle.add(resolveIdle)
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(false), timeoutMs) })
    try {
      return await Promise.race([idle, late])
    } finally {
      clearTimeout(timer)
      this.#idle.delete(resolveIdle)
    }
  }
}
