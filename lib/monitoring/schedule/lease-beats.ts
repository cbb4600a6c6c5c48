import type { Db } from '../../store/db.js'
import { beat, forgetInstances, listInstances, retireInstance } from '../../store/leases.js'

/**
 * An instance not heard from for this long is dead and the others take its claims over: a quarter
 * of the interval, between 2 and 10 s, so that a check it claimed and never ran still runs within
 * one interval of its due time. Instances beat four times as often.
 */
export function deadAfterMs(intervalMs: number): number {
  return Math.min(10_000, Math.max(2000, intervalMs / 4))
}

/** One instance's beats in the database, and the other instances it finds silent. */
export class InstanceBeats {
  readonly #db: Db
  readonly #id: string
  readonly #intervalMs: number
  readonly #now: () => number
  /** When this instance started, as its beats tell the others. */
  readonly startedAt: Date
  #lastBeatAt = -Infinity
  #beating = false

  constructor({ db, id, intervalMs, now }: { db: Db; id: string; intervalMs: number; now: () => number }) {
    this.#db = db
    this.#id = id
    this.#intervalMs = intervalMs
    this.#now = now
    this.startedAt = new Date(now())
  }

  get deadAfterMs(): number {
    return deadAfterMs(this.#intervalMs)
  }

  /** When the last beat got through; -Infinity before the first. */
  get lastBeatAt(): number {
    return this.#lastBeatAt
  }

  /** Says this instance is alive; a beat still under way is not doubled. A failure is left to the claim rounds to notice. */
  async beat(): Promise<void> {
    if (this.#beating) return
    this.#beating = true
    const at = this.#now()
    try {
      await beat({ db: this.#db, id: this.#id, startedAt: this.startedAt, now: new Date(at) })
      this.#lastBeatAt = at
    } catch {
      // The claim rounds notice an unreachable database and say so.
    } finally {
      this.#beating = false
    }
  }

  /** The other instances not heard from for {@link deadAfterMs}; those silent for longer than any claim lasts are forgotten. */
  async dead(now: number): Promise<string[]> {
    const beats = await listInstances({ db: this.#db })
    const dead = beats.filter((b) => b.id !== this.#id && now - b.seenAt.getTime() >= this.deadAfterMs)
    // Every claim lapses within an interval: an instance silent for longer has none left.
    const gone = new Date(now - 2 * this.#intervalMs - this.deadAfterMs)
    await forgetInstances({ db: this.#db, ids: dead.filter((b) => b.seenAt < gone).map((b) => b.id), before: gone })
    return dead.map((b) => b.id)
  }

  /** Says this instance is gone, as if silent for {@link deadAfterMs} already. */
  async retire(): Promise<void> {
    try {
      await retireInstance({ db: this.#db, id: this.#id, now: new Date(this.#now() - this.deadAfterMs) })
    } catch {
      // Unreachable: the others find this instance silent a few seconds later instead.
    }
  }
}
