import { createHash } from 'node:crypto'
import { announced, appendToOutbox } from '../events/outbox.js'
import { applyPing, type PingKind } from '../rules/heartbeat.js'
import type { Db } from '../store/db.js'
import { insertPing, lockHeartbeatByToken } from '../store/heartbeats.js'
import { clockOf, settleHeartbeat, type Settled } from './settle.js'

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
 * Records one ping in one transaction: the heartbeat's row locked by its token, the ping kept, the
 * rules applied, the outage opened or closed and announced. The caller answers only after this
 * resolves: the transaction has committed, so an acknowledged ping survives a crash right after.
 * Null when no heartbeat has the token.
 */
export async function recordPing({ db, ping, now }: { db: Db; ping: PingInput; now: () => Date }): Promise<Settled | null> {
  const tokenHash = tokenHashOf(ping.token)
  const settled = await db.transaction(async (trx): Promise<Settled | null> => {
    const row = await lockHeartbeatByToken({ db: trx, tokenHash })
    if (row === null) return null
    const at = now().getTime()
    const { after, runMs } = applyPing(clockOf(row), { kind: ping.kind, at, rid: ping.rid })
    await insertPing({ db: trx, heartbeatId: row.id, ping: { kind: ping.kind, rid: ping.rid, run_ms: runMs, at: new Date(at) } })
    const done = await settleHeartbeat({
      db: trx,
      row: { ...row, last_ping_kind: ping.kind },
      clock: after,
      now: at,
      at,
      ...(ping.message === undefined ? {} : { message: ping.message }),
      ...(runMs === null ? {} : { runMs })
    })
    if (done.events.length > 0) await appendToOutbox({ db: trx, events: done.events })
    return done
  })
  if (settled !== null && settled.step !== 'none') announced()
  return settled
}
