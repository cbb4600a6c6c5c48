import { mkdirSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import knexFactory, { type Knex } from 'knex'

export type Db = Knex

/** How long a request may wait for a database connection before it is answered 503. */
const ACQUIRE_TIMEOUT_MS = 3000

/**
 * Knex's own logger prints connection failures with their stacks to stdout; every failure already
 * reaches the caller as an error, which decides what to say, so Knex itself stays quiet.
 */
const quiet = { warn() {}, error() {}, deprecate() {}, debug() {} }

interface SqliteConnection {
  pragma(sql: string): unknown
}
interface MysqlConnection {
  query(sql: string, cb: (err: Error | null) => void): void
}

/** Pool settings a test or a tool may narrow; the defaults are the service's. */
export interface PoolOptions {
  /** Connections at most (MySQL; SQLite always has one). */
  max?: number
  /** How long a query may wait for a connection before it fails with a KnexTimeoutError. */
  acquireTimeoutMs?: number
}

/**
 * Opens the database named by a `DATABASE_URL` (`sqlite:path`, `sqlite::memory:` or
 * `mysql://user:pass@host:port/db`). All timestamps are stored as UTC with milliseconds.
 */
export function openDb(databaseUrl: string, { max = 10, acquireTimeoutMs = ACQUIRE_TIMEOUT_MS }: PoolOptions = {}): Db {
  if (databaseUrl.startsWith('sqlite:')) {
    const target = databaseUrl.slice('sqlite:'.length)
    const filename = target === ':memory:' ? ':memory:' : resolve(target)
    if (filename !== ':memory:') mkdirSync(dirname(filename), { recursive: true })
    return knexFactory({
      client: 'better-sqlite3',
      connection: { filename },
      useNullAsDefault: true,
      log: quiet,
      acquireConnectionTimeout: acquireTimeoutMs,
      pool: {
        min: 1,
        max: 1,
        // The server and the operator tool share the file: WAL lets them read while one writes,
        // and busy_timeout makes a writer wait for the other instead of failing at once.
        afterCreate(conn: SqliteConnection, done: (err: Error | null, conn: unknown) => void) {
          conn.pragma('journal_mode = WAL')
          conn.pragma('busy_timeout = 5000')
          conn.pragma('foreign_keys = ON')
          done(null, conn)
        }
      }
    })
  }
  if (databaseUrl.startsWith('mysql://')) {
    const url = new URL(databaseUrl)
    return knexFactory({
      client: 'mysql2',
      connection: {
        host: url.hostname,
        port: url.port === '' ? 3306 : Number(url.port),
        user: decodeURIComponent(url.username),
        password: decodeURIComponent(url.password),
        database: decodeURIComponent(url.pathname.replace(/^\//, '')),
        timezone: 'Z',
        connectTimeout: ACQUIRE_TIMEOUT_MS,
        charset: 'utf8mb4'
      },
      log: quiet,
      acquireConnectionTimeout: acquireTimeoutMs,
      pool: {
        min: 0,
        max,
        // mysql2's `timezone` only converts on the client; the session zone must match so that
        // NOW() and DATETIME comparisons done by the server agree with it.
        afterCreate(conn: MysqlConnection, done: (err: Error | null, conn: unknown) => void) {
          conn.query("SET time_zone = '+00:00'", (err) => {
            done(err, conn)
          })
        }
      }
    })
  }
  throw new Error('DATABASE_URL must start with sqlite: or mysql://')
}

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EPIPE',
  'PROTOCOL_CONNECTION_LOST',
  'ER_CON_COUNT_ERROR',
  'ER_SERVER_SHUTDOWN',
  'ER_CONNECTION_KILLED',
  'ER_ACCESS_DENIED_ERROR',
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  'SQLITE_CANTOPEN',
  'SQLITE_IOERR'
])

/** Errors that mean "the database cannot be reached right now" rather than "this code is wrong". */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false
  const code = (err as { code?: unknown }).code
  if (typeof code === 'string' && CONNECTION_CODES.has(code)) return true
  return err.name === 'KnexTimeoutError' || /^(Knex: Timeout acquiring a connection|Connection lost)/.test(err.message)
}

/**
 * A query that timed out waiting for a pool connection while others are checked out: the pool is
 * saturated, the database is not unreachable (it is serving those connections). Only a failed
 * connection or ping is an outage; this calls for waiting and trying again. With no connection in
 * use, a timeout means none could be made, which `isDatabaseUnavailable` covers.
 */
export function isPoolSaturated(db: Db, err: unknown): boolean {
  if (!(err instanceof Error) || err.name !== 'KnexTimeoutError') return false
  const pool = (db.client as { pool?: { numUsed(): number } }).pool
  return pool !== undefined && pool.numUsed() > 0
}

/** A write refused by a unique index: another writer stored the same key first. */
export function isDuplicateKey(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code
  return code === 'ER_DUP_ENTRY' || code === 'SQLITE_CONSTRAINT_UNIQUE'
}

/**
 * Codes of a database that refused a write for a value it holds: one too long, out of its column's
 * range, of the wrong type, or missing. Writing the same rows again fails the same way.
 */
const ROW_REFUSED_CODES: ReadonlySet<string> = new Set([
  'ER_BAD_NULL_ERROR',
  'ER_WARN_DATA_OUT_OF_RANGE',
  'WARN_DATA_TRUNCATED',
  'ER_TRUNCATED_WRONG_VALUE',
  'ER_TRUNCATED_WRONG_VALUE_FOR_FIELD',
  'ER_DATA_TOO_LONG',
  'ER_ILLEGAL_VALUE_FOR_TYPE',
  'ER_WRONG_VALUE_FOR_TYPE',
  'ER_DATETIME_FUNCTION_OVERFLOW',
  'SQLITE_CONSTRAINT_NOTNULL',
  'SQLITE_CONSTRAINT_CHECK',
  'SQLITE_MISMATCH',
  'SQLITE_TOOBIG'
])

/** A write the database refused for a value it holds (see {@link ROW_REFUSED_CODES}): retrying it alone never helps. */
export function isRowRefused(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code
  return typeof code === 'string' && ROW_REFUSED_CODES.has(code)
}

/** MySQL chose this transaction to undo to break a lock cycle; it may be run again as it was. */
export function isDeadlock(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === 'ER_LOCK_DEADLOCK'
}

/** Which engine a database runs on: MySQL (any number of instances) or SQLite (one). */
export function engineOf(db: Db): 'mysql' | 'sqlite' {
  return (db.client as { config: { client: string } }).config.client === 'mysql2' ? 'mysql' : 'sqlite'
}

/** A health probe must answer quickly even while the database hangs. */
const PING_TIMEOUT_MS = 1000

/** True when the database answers a trivial query within `timeoutMs`. */
export async function pingDatabase(db: Db, timeoutMs = PING_TIMEOUT_MS): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => {
      resolve(false)
    }, timeoutMs)
  })
  const ping = db.raw('select 1').then(
    () => true,
    () => false
  )
  try {
    return await Promise.race([ping, timeout])
  } finally {
    clearTimeout(timer)
  }
}

/** A stored timestamp as a Date: SQLite hands back epoch milliseconds, MySQL a Date. */
export function toDate(value: unknown): Date | null {
  if (value === null || value === undefined) return null
  if (value instanceof Date) return value
  if (typeof value === 'number') return new Date(value)
  if (typeof value === 'string') return new Date(/^\d+$/.test(value) ? Number(value) : value)
  throw new TypeError('not a timestamp')
}

/** ISO 8601 UTC with milliseconds and Z, the one timestamp format of every response. */
export function isoTime(value: unknown): string | null {
  const d = toDate(value)
  return d === null ? null : d.toISOString()
}
