import type { Logger } from 'pino'
import type { Db } from '../../store/db.js'
import { listChangedStates, loadSiteStates, newestStateAt } from '../../store/site-states.js'
import { UPTIME_HORIZON_MS } from '../../rules/uptime.js'
import type { SiteStates } from './site-state.js'

/** How often the in-memory state is brought in line with what the other instances wrote. */
export const SYNC_EVERY_MS = 500
/**
 * States written this long before the newest one seen are read again: a write that took that long
 * to commit, or a writer whose clock is that far behind, is still seen.
 */
const OVERLAP_MS = 2000
const MAX_RELOAD = 500

/**
 * Keeps one instance's in-memory state (status, badges, pages) in line with the checks every
 * instance records, without a query per request: twice a second it reads the sites' version (one
 * indexed query; the site list only when it moved) and the site rows whose state was written since
 * its last look (`state_at`, indexed) by others (`state_by`: what this process recorded is applied
 * already). A site whose outage may have changed, or that an outage event names, is read again in
 * full. A check recorded anywhere shows everywhere within a second.
 */
export class StateSync {
  readonly #db: Db
  readonly #states: SiteStates
  readonly #logger: Logger
  readonly #now: () => Date
  readonly #everyMs: number
  #since: number
  readonly #reload = new Set<number>()
  #timer: NodeJS.Timeout | undefined
  #running: Promise<void> | null = null
  #again = false
  #failing = false
  #stopped = false

  constructor({
    db,
    states,
    logger,
    now,
    everyMs = SYNC_EVERY_MS
  }: {
    db: Db
    states: SiteStates
    logger: Logger
    now: () => Date
    everyMs?: number
  }) {
    this.#db = db
    this.#states = states
    this.#logger = logger
    this.#now = now
    this.#everyMs = everyMs
    this.#since = now().getTime() - OVERLAP_MS
  }

  start(): void {
    this.#timer = setInterval(() => void this.syncNow(), this.#everyMs)
    this.#timer.unref()
  }

  async stop(): Promise<void> {
    this.#stopped = true
    clearInterval(this.#timer)
    await this.#running
  }

  /** An outage of this site opened or closed (an event said so): its state is read again at the next sync. */
  outageChanged(siteId: number): void {
    this.#reload.add(siteId)
  }

  /** Syncs now, or once more right after the sync under way; resolves when the state holds what was committed before the call. */
  syncNow(): Promise<void> {
    if (this.#running !== null) {
      this.#again = true
      return this.#running.then(() => this.#running ?? Promise.resolve())
    }
    const running = this.#sync().finally(() => {
      this.#running = null
      if (this.#again && !this.#stopped) {
        this.#again = false
        void this.syncNow()
      }
    })
    this.#running = running
    return running
  }

  async #sync(): Promise<void> {
    if (this.#stopped) return
    const now = this.#now()
    try {
      await this.#states.refresh(this.#db, now)
      const rows = await listChangedStates({ db: this.#db, since: new Date(this.#since), except: this.#states.writer })
      // The look moves on with the newest state anyone wrote, this process included: its own are not
      // read back, and without them the look stood still while this process alone wrote, and every
      // poll read the index from the process's start. Read after the rows, so it covers them.
      const newestAt = await newestStateAt({ db: this.#db })
      const newest = Math.max(this.#since + OVERLAP_MS, newestAt?.getTime() ?? -Infinity)
      this.#since = Math.min(newest, now.getTime()) - OVERLAP_MS
      for (const id of this.#states.syncStates(rows)) this.#reload.add(id)
      if (this.#reload.size > 0) {
        const ids = [...this.#reload].slice(0, MAX_RELOAD)
        const stored = await loadSiteStates({ db: this.#db, since: new Date(now.getTime() - UPTIME_HORIZON_MS), siteIds: ids })
        for (const id of ids) this.#reload.delete(id)
        for (const id of this.#states.adoptStates(stored)) this.#reload.add(id)
      }
      if (this.#failing) {
        this.#failing = false
        this.#logger.info("reading the other instances' checks again")
      }
    } catch (err) {
      if (!this.#failing) this.#logger.warn({ err }, "reading the other instances' checks failed; retrying")
      this.#failing = true
    }
  }
}
