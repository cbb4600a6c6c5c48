import { toDate, type Db } from './db.js'
import type { ApiKeyRow } from './tables.js'

function toKeyRow(r: Record<string, unknown>): ApiKeyRow {
  return {
    id: Number(r.id),
    name: String(r.name),
    key_hash: String(r.key_hash),
    rate_limit: r.rate_limit === null ? null : Number(r.rate_limit),
    scopes: String(r.scopes),
    created_at: toDate(r.created_at) as Date,
    revoked_at: toDate(r.revoked_at)
  }
}

export async function createKey({
  db,
  name,
  keyHash,
  rateLimit,
  scopes,
  now
}: {
  db: Db
  name: string
  keyHash: string
  rateLimit: number | null
  /** Comma-separated; the column's default (`read,check`) when absent. */
  scopes?: string
  now: Date
}): Promise<ApiKeyRow> {
  // Left out rather than undefined: SQLite's client would write undefined as NULL, not the default.
  const [id] = await db('api_keys').insert({
    name,
    key_hash: keyHash,
    rate_limit: rateLimit,
    ...(scopes === undefined ? {} : { scopes }),
    created_at: now
  })
  const row = await db('api_keys').where({ id }).first('scopes')
  return { id: Number(id), name, key_hash: keyHash, rate_limit: rateLimit, scopes: String(row.scopes), created_at: now, revoked_at: null }
}

export async function listKeys({ db }: { db: Db }): Promise<ApiKeyRow[]> {
  const rows = await db('api_keys').select('*').orderBy('id')
  return rows.map(toKeyRow)
}

export async function findKeyByHash({ db, keyHash }: { db: Db; keyHash: string }): Promise<ApiKeyRow | null> {
  const row = await db('api_keys').where({ key_hash: keyHash }).first()
  return row ? toKeyRow(row) : null
}

/** The id and hash of every key issued after `afterId` (revoked ones too), oldest first. */
export async function listKeyHashesAfter({ db, afterId }: { db: Db; afterId: number }): Promise<Array<{ id: number; keyHash: string }>> {
  const rows = await db('api_keys').where('id', '>', afterId).orderBy('id').select('id', 'key_hash')
  return rows.map((r: Record<string, unknown>) => ({ id: Number(r.id), keyHash: String(r.key_hash) }))
}

/** Returns 'revoked', 'already' (was revoked before) or 'missing'. */
export async function revokeKey({ db, id, now }: { db: Db; id: number; now: Date }): Promise<'revoked' | 'already' | 'missing'> {
  const changed = await db('api_keys').where({ id }).whereNull('revoked_at').update({ revoked_at: now })
  if (changed > 0) return 'revoked'
  const exists = await db('api_keys').where({ id }).first('id')
  return exists ? 'already' : 'missing'
}
