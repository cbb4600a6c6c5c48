import { createHash } from 'node:crypto'
import { announced, appendToOutbox } from '../events/outbox.js'
import type { NewEvent } from '../rules/events.js'
import { applyPing, type PingKind } from '../rules/heartbeat.js'
import type { Db } from '../store/db.js'
import { insertPings, lockHeartbeatsByTokens, type HeartbeatRow, type PingRecord } from '../store/heartbeats.js'
import { listMaintenanceWindows } from '../store/maintenance.js'
import { listOpenOutages, type OutageRow } from '../store/outages.js'
import { clockOf, judgeHeartbeat, writeSettled, type HeartbeatWrite, type Known, type Settled } from './settle.js'

/** The hash a ping token is stored and looked up by. */
export const tokenHashOf = (token: string): string => createHash('sha256').update(token).digest('hex')

/** A ping as the route passes it on: already bounded and validated. */
export interface PingInput {
  token: string
  kind: PingKind
  rid: string | null
  /** A POST body, kept as the last message; undefined leaves the last one as it is. */
  message?: string
}

/**
 * Records pings in one transaction (group commit): the heartbeats their tokens name locked, each
 * ping applied in the order given (pings to one heartbeat one after the other, each seeing what
 * the one before left), kept, its outage opened or closed and announced. The caller answers only
 * after this resolves: the transaction has committed, so an acknowledged ping survives a crash
 * right after; if it rejects, none of the pings was recorded. By ping, null when no heartbeat has
 * its token.
 */
export async function recordPings({
  db,
  pings,
  now,
  tokenHashes
}: {
  db: Db
  pings: readonly PingInput[]
  now: () => Date
  /** The pings' token hashes, when the caller has them. */
  tokenHashes?: readonly string[]
}): Promise<Array<Settled | null>> {
  const hashes = tokenHashes ?? pings.map((p) => tokenHashOf(p.token))
  const results = await db.transaction(async (trx): Promise<Array<Settled | null>> => {
    const locked = await lockHeartbeatsByTokens({ db: trx, tokenHashes: hashes })
    if (locked.size === 0) return pings.map(() => null)
    const rows = [...locked.values()]
    const windows = await listMaintenanceWindows({ db: trx, siteIds: rows.map((r) => r.site_id) })
    // Every write of a state settles its outage with it: a heartbeat stored up, new or paused has
    // none open, so most batches (every heartbeat up) skip this read.
    const mayBeOpen = rows.filter((r) => r.state === 'late' || r.state === 'down').map((r) => r.site_id)
    const open = mayBeOpen.length === 0 ? new Map<number, OutageRow>() : await listOpenOutages({ db: trx, siteIds: mayBeOpen })
    // Each heartbeat as the pings before leave it: its row, its open outage, its rows to write.
    const current = new Map<string, { row: HeartbeatRow; known: Known; write: HeartbeatWrite | null }>()
    for (const [hash, row] of locked)
      current.set(hash, { row, known: { windows: windows.get(row.site_id) ?? [], open: open.get(row.site_id) ?? null }, write: null })
    const kept: Array<PingRecord & { heartbeat_id: number }> = []
    const events: NewEvent[] = []
    const out: Array<Settled | null> = []
    for (const [i, ping] of pings.entries()) {
      const heartbeat = current.get(hashes[i] as string)
      if (heartbeat === undefined) {
        out.push(null)
        continue
      }
      const { row, known } = heartbeat
      const at = now().getTime()
      const { after, runMs } = applyPing(clockOf(row), { kind: ping.kind, at, rid: ping.rid })
      kept.push({ heartbeat_id: row.id, kind: ping.kind, rid: ping.rid, run_ms: runMs, at: new Date(at) })
      const judged = await judgeHeartbeat({
        db: trx,
        row: { ...row, last_ping_kind: ping.kind },
        clock: after,
        now: at,
        at,
        known,
        ...(ping.message === undefined ? {} : { message: ping.message }),
        ...(runMs === null ? {} : { runMs })
      })
      const { progress } = judged.write
      heartbeat.row = { ...row, ...progress, last_message: judged.write.message === undefined ? row.last_message : judged.write.message }
      heartbeat.known = { windows: known.windows, open: judged.open }
      heartbeat.write = merge(heartbeat.write, judged.write)
      events.push(...judged.settled.events)
      out.push(judged.settled)
    }
    await insertPings({ db: trx, pings: kept })
    await writeSettled({ db: trx, writes: [...current.values()].flatMap((h) => (h.write === null ? [] : [h.write])), now: now() })
    if (events.length > 0) await appendToOutbox({ db: trx, events })
    return out
  })
  if (results.some((r) => r !== null && r.step !== 'none')) announced()
  return results
}

/**
 * A heartbeat's rows after a second ping of one batch: its progress, the latest message, and its
 * `sites` row's mirror, first ping and all, judged from the row as the batch found it.
 */
function merge(before: HeartbeatWrite | null, next: HeartbeatWrite): HeartbeatWrite {
  if (before === null) return next
  const message = next.message === undefined ? before.message : next.message
  const site = next.site === null ? before.site : { ...next.site, firstPing: next.site.firstPing || (before.site?.firstPing ?? false) }
  return { id: next.id, progress: next.progress, ...(message === undefined ? {} : { message }), site }
}

/** Records one ping in a transaction of its own ({@link recordPings}); null when no heartbeat has its token. */
export async function recordPing({ db, ping, now }: { db: Db; ping: PingInput; now: () => Date }): Promise<Settled | null> {
  return (await recordPings({ db, pings: [ping], now }))[0] ?? null
}

/** Pings one transaction takes at most; more wait for the next. */
const MAX_BATCH = 500
/** Transactions of pings under way at once in a process. */
const IN_FLIGHT = 4

interface Waiting {
  ping: PingInput
  tokenHash: string
  resolve: (settled: Settled | null) => void
  reject: (err: unknown) => void
}

/**
 * Group commit of pings: those waiting when a transaction can start are written together in it,
 * once the event loop has taken in the others of its turn (`setImmediate`); up to `inFlight`
 * transactions run at once (the database's round trips, not this process, bound a transaction's
 * time), and the pings arriving meanwhile wait for the next free one. A ping to a heartbeat with
 * a ping in a transaction under way waits for that one to end, so one process applies a token's
 * pings in the order they came. A ping resolves once the transaction that holds it has committed;
 * if it fails, every ping in it rejects (and is answered 5xx, never `OK`).
 */
export class PingCommitter {
  readonly #db: Db
  readonly #now: () => Date
  readonly #maxBatch: number
  readonly #inFlight: number
  #waiting: Waiting[] = []
  /** Token hashes of the pings in transactions under way, with how many each. */
  readonly #busyTokens = new Map<string, number>()
  #running = 0
  #scheduled = false

  constructor({ db, now, maxBatch = MAX_BATCH, inFlight = IN_FLIGHT }: { db: Db; now: () => Date; maxBatch?: number; inFlight?: number }) {
    this.#db = db
    this.#now = now
    this.#maxBatch = maxBatch
    this.#inFlight = inFlight
  }

  /** Resolves with the ping's outcome once it has committed (null: no heartbeat has the token). */
  record(ping: PingInput, tokenHash = tokenHashOf(ping.token)): Promise<Settled | null> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ ping, tokenHash, resolve, reject })
      this.#schedule()
    })
  }

  #schedule(): void {
    if (this.#scheduled || this.#running >= this.#inFlight || this.#waiting.length === 0) return
    this.#scheduled = true
    setImmediate(() => {
      this.#scheduled = false
      this.#start()
    })
  }

  /** Starts a transaction with the waiting pings it may take, if any. */
  #start(): void {
    if (this.#running >= this.#inFlight) return
    const batch: Waiting[] = []
    const held = new Set<string>()
    const rest: Waiting[] = []
    for (const w of this.#waiting) {
      // Behind a ping of its token under way, or one held back: it keeps its place.
      if (batch.length >= this.#maxBatch || this.#busyTokens.has(w.tokenHash) || held.has(w.tokenHash)) {
        held.add(w.tokenHash)
        rest.push(w)
      } else batch.push(w)
    }
    this.#waiting = rest
    if (batch.length === 0) return
    this.#running++
    for (const w of batch) this.#busyTokens.set(w.tokenHash, (this.#busyTokens.get(w.tokenHash) ?? 0) + 1)
    recordPings({ db: this.#db, pings: batch.map((w) => w.ping), tokenHashes: batch.map((w) => w.tokenHash), now: this.#now }).then(
      (results) => {
        this.#done(batch)
        batch.forEach((w, i) => {
          w.resolve(results[i] ?? null)
        })
      },
      (err: unknown) => {
        this.#done(batch)
        for (const w of batch) w.reject(err)
      }
    )
    // Another transaction may start at once with what is left (other tokens).
    this.#schedule()
  }

  #done(batch: readonly Waiting[]): void {
    this.#running--
    for (const w of batch) {
      const n = (this.#busyTokens.get(w.tokenHash) ?? 1) - 1
      if (n === 0) this.#busyTokens.delete(w.tokenHash)
      else this.#busyTokens.set(w.tokenHash, n)
    }
    this.#schedule()
  }
}
