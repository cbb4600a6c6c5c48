import { announced, appendToOutbox } from '../events/outbox.js'
import type { NewEvent } from '../rules/events.js'
import type { Db } from '../store/db.js'
import { lockOverdueHeartbeats } from '../store/heartbeats.js'
import { listMaintenanceWindows } from '../store/maintenance.js'
import { listOpenOutages } from '../store/outages.js'
import { clockOf, judgeHeartbeat, writeSettled, type HeartbeatWrite } from './settle.js'

/** Heartbeats judged per transaction. */
const BATCH = 200
/** How often the loop looks for passed deadlines. */
const EVERY_MS = 1000

/**
 * Moves heartbeats whose deadline has passed to `late` or `down` (opening their outage), in
 * batches: each transaction locks the overdue rows it takes with `SKIP LOCKED`, so instances
 * sweeping at once share the rows and each deadline is judged once; the unique open outage per
 * `sites` row makes "one outage" hold even so. Returns how many heartbeats were judged.
 */
export async function sweepDeadlines({ db, now }: { db: Db; now: () => Date }): Promise<number> {
  let judged = 0
  let opened = false
  for (;;) {
    const at = now().getTime()
    const { taken, changed } = await db.transaction(async (trx) => {
      const rows = await lockOverdueHeartbeats({ db: trx, before: new Date(at), limit: BATCH })
      const siteIds = rows.map((r) => r.site_id)
      const windows = await listMaintenanceWindows({ db: trx, siteIds })
      const open = await listOpenOutages({ db: trx, siteIds })
      const events: NewEvent[] = []
      const writes: HeartbeatWrite[] = []
      for (const row of rows) {
        const known = { windows: windows.get(row.site_id) ?? [], open: open.get(row.site_id) ?? null }
        const { settled, write } = await judgeHeartbeat({ db: trx, row, clock: clockOf(row), now: at, at, known })
        events.push(...settled.events)
        writes.push(write)
      }
      await writeSettled({ db: trx, writes, now: new Date(at) })
      if (events.length > 0) await appendToOutbox({ db: trx, events })
      return { taken: rows.length, changed: events.length > 0 }
    })
    opened ||= changed
    judged += taken
    if (taken < BATCH) break
  }
  if (opened) announced()
  return judged
}

/** Runs {@link sweepDeadlines} every second until stopped; a failed sweep is logged and retried. */
export class DeadlineLoop {
  readonly #db: Db
  readonly #now: () => Date
  readonly #onError: (err: unknown) => void
  readonly #everyMs: number
  #timer: NodeJS.Timeout | undefined
  #running: Promise<void> = Promise.resolve()
  #stopped = false

  constructor({ db, now, onError, everyMs = EVERY_MS }: { db: Db; now: () => Date; onError: (err: unknown) => void; everyMs?: number }) {
    this.#db = db
    this.#now = now
    this.#onError = onError
    this.#everyMs = everyMs
  }

  start(): void {
    this.#schedule()
  }

  /** Sweeps now, after any sweep under way; resolves when done (tests and the bench drive it so). */
  sweep(): Promise<void> {
    this.#running = this.#running.then(async () => {
      try {
        await sweepDeadlines({ db: this.#db, now: this.#now })
      } catch (err) {
        this.#onError(err)
      }
    })
    return this.#running
  }

  #schedule(): void {
    if (this.#stopped) return
    this.#timer = setTimeout(() => {
      void this.sweep().then(() => {
        this.#schedule()
      })
    }, this.#everyMs)
    this.#timer.unref()
  }

  async stop(): Promise<void> {
    this.#stopped = true
    clearTimeout(this.#timer)
    await this.#running
  }
}
