import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { openDb, type Db } from '../../lib/store/db.js'
import { cloneMysql, cloneSqlite } from './db-template.js'

export interface TestDatabase {
  engine: 'sqlite' | 'mysql'
  url: string
  /** Drops the database (MySQL) or deletes its folder (SQLite). */
  cleanup(): Promise<void>
}

/** Test the store on every engine the machine offers; CI sets TEST_MYSQL_URL and fails without MySQL. */
export function engines(): Array<'sqlite' | 'mysql'> {
  return process.env.TEST_MYSQL_URL ? ['sqlite', 'mysql'] : ['sqlite']
}

/**
 * A fresh, empty database of its own: tap runs test files in parallel, so no two files may share
 * one. MySQL gets a uniquely named database on the TEST_MYSQL_URL server. Tests of the migrations
 * themselves want this; the others want {@link createMigratedDatabase}.
 */
export async function createTestDatabase(engine: 'sqlite' | 'mysql'): Promise<TestDatabase> {
  return createDatabase(engine, false)
}

/**
 * A fresh database of its own with every migration applied, as `migrateLatest` leaves it (which
 * applies nothing more on it): a copy of a template migrated once per migration source, which
 * costs a fraction of migrating (test/helpers/db-template.ts).
 */
export async function createMigratedDatabase(engine: 'sqlite' | 'mysql'): Promise<TestDatabase> {
  return createDatabase(engine, true)
}

async function createDatabase(engine: 'sqlite' | 'mysql', migrated: boolean): Promise<TestDatabase> {
  if (engine === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'site-status-test-'))
    const file = join(dir, 'test.sqlite')
    const cleanup = async (): Promise<void> => {
      rmSync(dir, { recursive: true, force: true })
    }
    if (migrated) {
      try {
        await cloneSqlite(file)
      } catch (err) {
        await cleanup()
        throw err
      }
    }
    return { engine, url: `sqlite:${file}`, cleanup }
  }
  const base = process.env.TEST_MYSQL_URL
  if (!base) throw new Error('TEST_MYSQL_URL is not set')
  const name = `site_status_t_${process.pid}_${randomBytes(4).toString('hex')}`
  const admin = openDb(base)
  try {
    await admin.raw(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4`)
  } finally {
    await admin.destroy()
  }
  const url = new URL(base)
  url.pathname = `/${name}`
  const cleanup = async (): Promise<void> => {
    const db = openDb(base)
    try {
      await db.raw(`DROP DATABASE IF EXISTS \`${name}\``)
    } finally {
      await db.destroy()
    }
  }
  if (migrated) {
    try {
      await cloneMysql(base, name)
    } catch (err) {
      await cleanup()
      throw err
    }
  }
  return { engine, url: url.toString(), cleanup }
}

/** A migrated database and an open connection to it, torn down with `t.teardown`. */
export async function migratedDb(engine: 'sqlite' | 'mysql', t: { teardown(fn: () => unknown): void }): Promise<{ db: Db; url: string }> {
  const test = await createMigratedDatabase(engine)
  const db = openDb(test.url)
  t.teardown(async () => {
    await db.destroy()
    await test.cleanup()
  })
  return { db, url: test.url }
}
