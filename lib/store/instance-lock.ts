import { createRequire } from 'node:module'
import { mkdirSync } from 'node:fs'
import { dirname, resolve } from 'node:path'

/** The little of better-sqlite3 (Knex's SQLite driver, which ships no types) the lock uses. */
interface SqliteConnection {
  readonly open: boolean
  pragma(sql: string): unknown
  exec(sql: string): unknown
  close(): void
}
const Database = createRequire(import.meta.url)('better-sqlite3') as new (path: string, options: { timeout: number }) => SqliteConnection

/** A second `serve` on a SQLite file another one serves: it must not start. */
export class InstanceLockedError extends Error {
  override name = 'InstanceLockedError'
  readonly code = 'INSTANCE_LOCKED'
}

/** Held while this process serves a SQLite file; `release()` lets the next one in. */
export interface InstanceLock {
  release(): void
}

/**
 * One `serve` per SQLite file: its schedule and state live in one process's memory, so a second
 * would check every site again and answer from a state of its own. The lock is an exclusive SQLite
 * lock on a file beside the database (`<file>-serve.lock`), held by a connection for as long as the
 * process lives: the operating system drops it when the process ends, however it ends, so a crashed
 * instance never keeps the file locked. The operator tool does not take it. Null for MySQL (any
 * number of instances) and for an in-memory database.
 */
export function lockSqliteFile(databaseUrl: string): InstanceLock | null {
  if (!databaseUrl.startsWith('sqlite:')) return null
  const target = databaseUrl.slice('sqlite:'.length)
  if (target === ':memory:') return null
  const path = `${resolve(target)}-serve.lock`
  // Taken before the database is opened, which makes its folder on a first start.
  mkdirSync(dirname(path), { recursive: true })
  const conn = new Database(path, { timeout: 0 })
  try {
    conn.pragma('locking_mode = EXCLUSIVE')
    // In exclusive locking mode the lock taken by a write is kept until the connection closes.
    conn.exec('BEGIN EXCLUSIVE; COMMIT')
  } catch (err) {
    conn.close()
    if ((err as { code?: unknown }).code === 'SQLITE_BUSY') {
      throw new InstanceLockedError(`another serve is running on ${target}: one instance per SQLite file (several need MySQL)`)
    }
    throw err
  }
  return {
    release: () => {
      if (conn.open) conn.close()
    }
  }
}
