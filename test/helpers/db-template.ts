/**
 * Migrated test databases are copies of a template migrated once, not migrated one by one: on
 * MySQL the 23 migrations take seconds per database, a copy of the schema a fraction of that.
 *
 * A template is named after a hash of the migration sources, so a changed migration gets a new
 * one; parallel test processes build it at most once (SQLite: an atomic rename, MySQL: GET_LOCK).
 * A copy is indistinguishable from a freshly migrated database: the same tables, keys, foreign
 * keys and auto-increment counters, and the same rows (knex_migrations and the seeded ones), so
 * `migrateLatest` on it applies nothing.
 */
import { createHash, randomBytes } from 'node:crypto'
import { copyFileSync, existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import mysql from 'mysql2/promise'
import { openDb } from '../../lib/store/db.js'
import { migrateLatest } from '../../lib/store/migrate.js'
import { migrations } from '../../migrations/index.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const SQLITE_PREFIX = 'site-status-template-'
const MYSQL_PREFIX = 'site_status_tpl_'
/** Templates of other migration sources this old are left over and may go (other checkouts share the server). */
const STALE_MS = 60 * 60 * 1000

let hash: string | undefined

/** A hash of everything that decides the migrated schema: the migrations and how they are run. */
export function migrationsHash(): string {
  if (hash !== undefined) return hash
  const digest = createHash('sha256')
  const dir = join(ROOT, 'migrations')
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.ts'))
    .sort()
    .map((f) => join(dir, f))
  for (const file of [...files, join(ROOT, 'lib/store/migrate.ts')]) {
    digest.update(file.slice(ROOT.length)).update('\0').update(readFileSync(file)).update('\0')
  }
  hash = digest.digest('hex').slice(0, 16)
  return hash
}

function sqliteTemplatePath(): string {
  return join(tmpdir(), `${SQLITE_PREFIX}${migrationsHash()}.sqlite`)
}

/**
 * Builds the SQLite template unless it exists. It is migrated under a name of its own and renamed
 * into place, so a reader never sees a half-built file; two processes building at once both end
 * with a complete template. The write-ahead log is checkpointed into the file before the rename.
 */
async function sqliteTemplate(): Promise<string> {
  const path = sqliteTemplatePath()
  if (existsSync(path)) return path
  const building = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`
  const db = openDb(`sqlite:${building}`)
  try {
    await migrateLatest(db)
    await db.raw('PRAGMA wal_checkpoint(TRUNCATE)')
  } finally {
    await db.destroy()
  }
  for (const suffix of ['-wal', '-shm']) rmSync(building + suffix, { force: true })
  renameSync(building, path)
  return path
}

/** Copies the migrated SQLite template to `file`. */
export async function cloneSqlite(file: string): Promise<void> {
  try {
    copyFileSync(await sqliteTemplate(), file)
  } catch (err) {
    if ((err as { code?: unknown }).code !== 'ENOENT') throw err
    // Dropped as stale by another checkout's suite between the check and the copy.
    copyFileSync(await sqliteTemplate(), file)
  }
}

function mysqlUrl(base: string, database: string): string {
  const url = new URL(base)
  url.pathname = `/${database}`
  return url.toString()
}

const quote = (name: string): string => `\`${name.replace(/`/g, '``')}\``

interface MysqlTemplate {
  name: string
  /** SHOW CREATE TABLE of every table, foreign keys and AUTO_INCREMENT counters included. */
  creates: string[]
  /** Tables that hold rows after migrating. */
  filled: string[]
}

/** Whether the template database holds every migration, applied and unlocked (a build that died does not). */
async function complete(conn: mysql.Connection, name: string): Promise<boolean> {
  const [tables] = await conn.query<mysql.RowDataPacket[]>(
    'SELECT TABLE_NAME AS name FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME IN (?, ?)',
    [name, 'knex_migrations', 'knex_migrations_lock']
  )
  if (tables.length !== 2) return false
  const [[applied]] = await conn.query<mysql.RowDataPacket[]>(`SELECT COUNT(*) AS n FROM ${quote(name)}.knex_migrations`)
  const [[locked]] = await conn.query<mysql.RowDataPacket[]>(
    `SELECT COUNT(*) AS n FROM ${quote(name)}.knex_migrations_lock WHERE is_locked <> 0`
  )
  return Number(applied?.n) === migrations.length && Number(locked?.n) === 0
}

/** Builds the MySQL template unless a complete one exists; one process at a time per migration hash. */
async function buildMysqlTemplate(base: string): Promise<MysqlTemplate> {
  const name = `${MYSQL_PREFIX}${migrationsHash()}`
  const conn = await mysql.createConnection({ uri: mysqlUrl(base, ''), multipleStatements: true })
  try {
    const [[got]] = await conn.query<mysql.RowDataPacket[]>('SELECT GET_LOCK(?, 300) AS ok', [name])
    if (Number(got?.ok) !== 1) throw new Error(`could not lock the test database template ${name}`)
    // Held while the template is read too: dropStaleTemplates never drops a locked one.
    try {
      if (!(await complete(conn, name))) {
        await conn.query(`DROP DATABASE IF EXISTS ${quote(name)}`)
        await conn.query(`CREATE DATABASE ${quote(name)} CHARACTER SET utf8mb4`)
        const db = openDb(mysqlUrl(base, name))
        try {
          await migrateLatest(db)
        } finally {
          await db.destroy()
        }
      }

      const [tables] = await conn.query<mysql.RowDataPacket[]>(`SHOW FULL TABLES FROM ${quote(name)}`)
      const [triggers] = await conn.query<mysql.RowDataPacket[]>(`SHOW TRIGGERS FROM ${quote(name)}`)
      const [routines] = await conn.query<mysql.RowDataPacket[]>(
        'SELECT ROUTINE_NAME FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = ?',
        [name]
      )
      const views = tables.filter((t) => t.Table_type !== 'BASE TABLE')
      // The copy below knows only tables: a migration adding any of these must extend it.
      if (views.length + triggers.length + routines.length > 0) {
        throw new Error(
          `the test database template ${name} holds views, triggers or routines, which test/helpers/db-template.ts does not copy`
        )
      }
      const names = tables.map((row) => String(Object.values(row)[0]))
      const [shown] = await conn.query<mysql.RowDataPacket[][]>(
        names.map((table) => `SHOW CREATE TABLE ${quote(name)}.${quote(table)}`).join(';\n')
      )
      const creates = (names.length === 1 ? [shown as unknown as mysql.RowDataPacket[]] : shown).map(([row]) =>
        String(row?.['Create Table'])
      )
      const [some] = await conn.query<mysql.RowDataPacket[]>(
        names.map((table) => `(SELECT ? AS name FROM ${quote(name)}.${quote(table)} LIMIT 1)`).join(' UNION ALL '),
        names
      )
      const filled = some.map((row) => String(row.name))
      return { name, creates, filled }
    } finally {
      await conn.query('SELECT RELEASE_LOCK(?)', [name])
    }
  } finally {
    await conn.end()
  }
}

let mysqlTemplate: Promise<MysqlTemplate> | undefined

async function loadMysqlTemplate(base: string): Promise<MysqlTemplate> {
  mysqlTemplate ??= buildMysqlTemplate(base)
  try {
    return await mysqlTemplate
  } catch (err) {
    mysqlTemplate = undefined
    throw err
  }
}

const gone = (err: unknown): boolean => ['ER_NO_SUCH_TABLE', 'ER_BAD_DB_ERROR'].includes(String((err as { code?: unknown }).code))

/** How many connections create a copy's tables at once: DDL waits on the disk, so a few overlap well. */
const CLONE_CONNECTIONS = 4

/**
 * Creates the tables of the migrated MySQL template in the empty database `target`, over a few
 * connections at once, then copies their rows. Foreign key checks are off while the tables are
 * created, so their order does not matter.
 */
async function copyMysql(base: string, target: string, template: MysqlTemplate): Promise<void> {
  const pool = mysql.createPool({ uri: mysqlUrl(base, target), connectionLimit: CLONE_CONNECTIONS, multipleStatements: true })
  try {
    const queue = [...template.creates]
    const worker = async (): Promise<void> => {
      const conn = await pool.getConnection()
      try {
        await conn.query('SET FOREIGN_KEY_CHECKS = 0')
        for (let create = queue.shift(); create !== undefined; create = queue.shift()) await conn.query(create)
      } finally {
        conn.release()
      }
    }
    const workers = Array.from({ length: CLONE_CONNECTIONS }, worker)
    const failed = (await Promise.allSettled(workers)).find((r) => r.status === 'rejected')
    if (failed) throw failed.reason
    const copies = template.filled.map((t) => `INSERT INTO ${quote(t)} SELECT * FROM ${quote(template.name)}.${quote(t)}`)
    if (copies.length > 0) await pool.query(copies.join(';\n'))
  } finally {
    await pool.end()
  }
}

/** Makes the empty database `target` a copy of the migrated MySQL template, built first if need be. */
export async function cloneMysql(base: string, target: string): Promise<void> {
  try {
    await copyMysql(base, target, await loadMysqlTemplate(base))
  } catch (err) {
    if (!gone(err)) throw err
    // Another checkout's suite took our template for stale and dropped it: build it again.
    mysqlTemplate = undefined
    const conn = await mysql.createConnection({ uri: mysqlUrl(base, '') })
    try {
      await conn.query(`DROP DATABASE ${quote(target)}`)
      await conn.query(`CREATE DATABASE ${quote(target)} CHARACTER SET utf8mb4`)
    } finally {
      await conn.end()
    }
    await copyMysql(base, target, await loadMysqlTemplate(base))
  }
}

/**
 * Drops the templates of other migration sources (run once before the suite): SQLite files and
 * MySQL databases older than {@link STALE_MS}, so another checkout's suite running now keeps its own.
 */
export async function dropStaleTemplates(base: string | undefined): Promise<string[]> {
  const dropped: string[] = []
  const current = migrationsHash()
  for (const file of readdirSync(tmpdir())) {
    if (!file.startsWith(SQLITE_PREFIX) || file === `${SQLITE_PREFIX}${current}.sqlite`) continue
    const path = join(tmpdir(), file)
    try {
      if (Date.now() - statSync(path).mtimeMs < STALE_MS) continue
      rmSync(path, { force: true })
      dropped.push(path)
    } catch {
      // Gone already, or another user's.
    }
  }
  if (base === undefined) return dropped
  const conn = await mysql.createConnection({ uri: mysqlUrl(base, '') })
  try {
    const [rows] = await conn.query<mysql.RowDataPacket[]>(
      `SELECT s.SCHEMA_NAME AS name, MAX(t.CREATE_TIME) AS created
         FROM information_schema.SCHEMATA s LEFT JOIN information_schema.TABLES t ON t.TABLE_SCHEMA = s.SCHEMA_NAME
        WHERE s.SCHEMA_NAME LIKE ? GROUP BY s.SCHEMA_NAME`,
      [`${MYSQL_PREFIX.replace(/_/g, '\\_')}%`]
    )
    for (const { name, created } of rows as Array<{ name: string; created: Date | null }>) {
      if (name === `${MYSQL_PREFIX}${current}`) continue
      if (created !== null && Date.now() - new Date(created).getTime() < STALE_MS) continue
      // A build under way holds the lock of its name.
      const [[got]] = await conn.query<mysql.RowDataPacket[]>('SELECT GET_LOCK(?, 0) AS ok', [name])
      if (Number(got?.ok) !== 1) continue
      try {
        await conn.query(`DROP DATABASE IF EXISTS ${quote(name)}`)
        dropped.push(name)
      } finally {
        await conn.query('SELECT RELEASE_LOCK(?)', [name])
      }
    }
  } finally {
    await conn.end()
  }
  return dropped
}
