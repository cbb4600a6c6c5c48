import type { HeartbeatState } from '../rules/heartbeat.js'
import type { OutageSpan } from '../rules/uptime.js'
import { toDate, type Db } from '../store/db.js'
import { listOutageTimes } from '../store/outages.js'
import { WINDOW_MS, type BadgeWindow, type WindowFigure } from './figures.js'
import { UptimeFigures, type FigureSource } from './sources.js'

/** A heartbeat as its badges need it: its name, state, and what its uptime is worked out from. */
export interface HeartbeatSubject {
  siteId: number
  name: string
  state: HeartbeatState
  firstCheckedAt: Date | null
  outages: readonly OutageSpan[]
}

/** How long a heartbeat read is answered from memory: a badge follows its state within this, or at once after a ping here. */
export const HEARTBEAT_KEEP_MS = 1000
/** Heartbeats kept at most; past it the memory starts over (cheaper than an LRU per hit). */
const MAX_KEPT = 10_000
/** The longest badge window: outages older than it count for no badge. */
const LONGEST_MS = Math.max(...Object.values(WINDOW_MS))

interface Kept {
  subject: HeartbeatSubject | null
  readAt: number
}

/**
 * Heartbeats for their badges, by slug. Heartbeats are not held in memory as sites are (their
 * state changes by pings and deadlines, on any instance), so each slug is read (its row joined with
 * its `sites` row, and its outages of the last 90 days) at most once a second, misses included, and
 * hits in between are answered from memory: no query per badge request once warm. A ping taken by
 * this instance forgets its heartbeat (`forgetToken`), so its badge shows the new state at once;
 * another instance's ping or a deadline shows within a second.
 */
export class HeartbeatFigures implements FigureSource<HeartbeatSubject> {
  readonly #db: Db
  readonly #kept = new Map<string, Kept>()
  readonly #reading = new Map<string, Promise<HeartbeatSubject | null>>()
  readonly #slugOfToken = new Map<string, string>()
  readonly #uptime = new UptimeFigures()

  constructor({ db }: { db: Db }) {
    this.#db = db
  }

  /** The heartbeat `slug` (a valid slug), null when there is none. */
  find(slug: string, at: number): HeartbeatSubject | null | Promise<HeartbeatSubject | null> {
    const kept = this.#kept.get(slug)
    if (kept !== undefined && at >= kept.readAt && at - kept.readAt < HEARTBEAT_KEEP_MS) return kept.subject
    let reading = this.#reading.get(slug)
    if (reading === undefined) {
      reading = this.#read(slug, at).finally(() => this.#reading.delete(slug))
      this.#reading.set(slug, reading)
    }
    return reading
  }

  uptime(subject: HeartbeatSubject, window: BadgeWindow, at: number): WindowFigure {
    return this.#uptime.of(subject.siteId, subject, window, at)
  }

  /** Forgets the heartbeat whose ping token has this hash (a ping just changed it), if it was read. */
  forgetToken(tokenHash: string): void {
    const slug = this.#slugOfToken.get(tokenHash)
    if (slug !== undefined) this.#kept.delete(slug)
  }

  async #read(slug: string, at: number): Promise<HeartbeatSubject | null> {
    const row: Record<string, unknown> | undefined = await this.#db('heartbeats as h')
      .join('sites as s', 's.id', 'h.site_id')
      .where('h.slug', slug)
      .first('h.site_id', 'h.name', 'h.state', 'h.token_hash', 's.first_checked_at')
    let subject: HeartbeatSubject | null = null
    if (row !== undefined) {
      const siteId = Number(row.site_id)
      const outages = await listOutageTimes({ db: this.#db, siteId, from: new Date(at - LONGEST_MS) })
      subject = {
        siteId,
        name: String(row.name),
        state: row.state as HeartbeatState,
        firstCheckedAt: toDate(row.first_checked_at) ?? null,
        outages: outages.map((o) => ({ started_at: new Date(o.started), ended_at: o.ended === null ? null : new Date(o.ended) }))
      }
      if (this.#slugOfToken.size >= MAX_KEPT) this.#slugOfToken.clear()
      this.#slugOfToken.set(String(row.token_hash), slug)
    }
    if (this.#kept.size >= MAX_KEPT) this.#kept.clear()
    this.#kept.set(slug, { subject, readAt: at })
    return subject
  }
}
