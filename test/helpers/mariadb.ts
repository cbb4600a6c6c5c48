/**
 * A private MariaDB server for tests that stop and start the database: its own data directory in
 * a temp folder, its own socket, and a free port on 127.0.0.1. The shared server on port 3306 that
 * the other suites use is never touched.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import mysql from 'mysql2/promise'
import { freePort } from './targets.js'

const run = promisify(execFile)

const SERVERS = ['/usr/sbin/mariadbd', '/usr/sbin/mysqld', '/usr/bin/mariadbd']
const INSTALLERS = ['/usr/bin/mariadb-install-db', '/usr/bin/mysql_install_db', '/usr/local/bin/mariadb-install-db']

export interface PrivateMariaDb {
  port: number
  /** `mysql://root@127.0.0.1:<port>/<database>` */
  url(database: string): string
  /** Stops the server (SIGTERM) and resolves once it has exited. */
  stop(): Promise<void>
  /** Starts it again on the same data directory and port; resolves once it answers. */
  start(): Promise<void>
  running(): boolean
  /** Kills the server and removes its data directory. */
  destroy(): Promise<void>
}

function firstExisting(paths: string[], what: string): string {
  const found = paths.find((p) => existsSync(p))
  if (found === undefined) {
    throw new Error(`MariaDB is not installed: no ${what} at ${paths.join(', ')} (install the mariadb-server package)`)
  }
  return found
}

async function answers(port: number): Promise<boolean> {
  let conn: mysql.Connection | undefined
  try {
    conn = await mysql.createConnection({ host: '127.0.0.1', port, user: 'root', connectTimeout: 1000 })
    await conn.query('SELECT 1')
    return true
  } catch {
    return false
  } finally {
    await conn?.end().catch(() => {})
  }
}

/**
 * Installs a fresh data directory and starts a server on it. Root has an empty password and can
 * connect over TCP from 127.0.0.1, where alone the server listens. Fails (never skips) when the
 * MariaDB binaries are missing.
 */
export async function startPrivateMariaDb({ databases = [] }: { databases?: string[] } = {}): Promise<PrivateMariaDb> {
  const server = firstExisting(SERVERS, 'server binary (mariadbd)')
  const installer = firstExisting(INSTALLERS, 'mariadb-install-db')
  const dir = mkdtempSync(join(tmpdir(), 'site-status-mariadb-'))
  const datadir = join(dir, 'data')
  const errorLog = join(dir, 'error.log')
  try {
    await run(
      installer,
      [
        '--no-defaults',
        `--datadir=${datadir}`,
        '--user=root',
        '--auth-root-authentication-method=normal',
        '--skip-test-db',
        '--skip-name-resolve'
      ],
      { timeout: 60_000 }
    )
  } catch (err) {
    rmSync(dir, { recursive: true, force: true })
    throw new Error(`mariadb-install-db failed: ${(err as Error).message.split('\n')[0]}`)
  }
  const port = await freePort()
  const args = [
    '--no-defaults',
    `--datadir=${datadir}`,
    `--socket=${join(dir, 'mysqld.sock')}`,
    `--pid-file=${join(dir, 'mysqld.pid')}`,
    `--port=${port}`,
    '--bind-address=127.0.0.1',
    '--user=root',
    `--log-error=${errorLog}`,
    '--skip-name-resolve',
    // Small and quick: the tests write little, and a stop must not wait for a large buffer pool.
    '--innodb-buffer-pool-size=16M',
    '--max-connections=100'
  ]
  let child: ChildProcess | null = null
  let exited: Promise<void> = Promise.resolve()
  // A test process that dies must not leave a server behind.
  const killOnExit = (): void => {
    child?.kill('SIGKILL')
  }
  process.once('exit', killOnExit)

  const tail = (): string => {
    try {
      return readFileSync(errorLog, 'utf8').trim().split('\n').slice(-5).join(' | ')
    } catch {
      return '(no error log)'
    }
  }

  const start = async (): Promise<void> => {
    if (child !== null) throw new Error('the private MariaDB is already running')
    const proc = spawn(server, args, { stdio: 'ignore' })
    child = proc
    exited = new Promise<void>((resolve) =>
      proc.once('exit', () => {
        if (child === proc) child = null
        resolve()
      })
    )
    const deadline = Date.now() + 60_000
    for (;;) {
      if (child !== proc) throw new Error(`the private MariaDB exited while starting: ${tail()}`)
      if (await answers(port)) return
      if (Date.now() > deadline) throw new Error(`the private MariaDB did not answer within 60 s: ${tail()}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }

  const stop = async (): Promise<void> => {
    const proc = child
    if (proc === null) return
    proc.kill('SIGTERM')
    const killer = setTimeout(() => proc.kill('SIGKILL'), 30_000)
    await exited
    clearTimeout(killer)
  }

  const destroy = async (): Promise<void> => {
    process.removeListener('exit', killOnExit)
    if (child !== null) {
      child.kill('SIGKILL')
      await exited
    }
    rmSync(dir, { recursive: true, force: true })
  }

  try {
    await start()
    const conn = await mysql.createConnection({ host: '127.0.0.1', port, user: 'root' })
    try {
      for (const name of databases) await conn.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4`)
    } finally {
      await conn.end()
    }
  } catch (err) {
    await destroy()
    throw err
  }
  return {
    port,
    url: (database) => `mysql://root@127.0.0.1:${port}/${database}`,
    stop,
    start,
    running: () => child !== null,
    destroy
  }
}
