import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { Redis } from 'ioredis'
import { createLogger } from '../../lib/logger.js'
import { SharedRedis } from '../../lib/sharing/redis.js'
import { holds } from './poll.js'
import { LogCapture } from './server.js'
import { freePort } from './targets.js'

/** The shared Redis of this machine; test files use only the database numbers 1 to 8, one each. */
export const REDIS_HOST = '127.0.0.1'
export const REDIS_PORT = 6379
export const REDIS_SERVER = '/usr/bin/redis-server'

type Teardown = { teardown(fn: () => unknown): void }

/** Empties database `db` of the machine's Redis now and after the test; returns its URL. */
export async function redisDb(t: Teardown, db: number): Promise<string> {
  const url = `redis://${REDIS_HOST}:${REDIS_PORT}/${db}`
  const flush = async (): Promise<void> => {
    const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 })
    await client.connect()
    await client.flushdb()
    client.disconnect()
  }
  await flush()
  t.teardown(flush)
  return url
}

/** One instance's connections, its log, and a wait for them to be up; closed at teardown. */
export async function sharedRedis(t: Teardown, url: string): Promise<{ redis: SharedRedis; logs: LogCapture }> {
  const logs = new LogCapture()
  const redis = new SharedRedis({ url, logger: createLogger({ level: 'info', stream: logs }) })
  t.teardown(() => redis.close())
  if (!(await holds(() => redis.available, 10_000))) throw new Error('Redis did not connect')
  return { redis, logs }
}

/** A private `redis-server` on loopback that the test may stop and start again on the same port. */
export interface PrivateRedis {
  url: string
  port: number
  stop(): Promise<void>
  start(): Promise<void>
}

export function redisServerMissing(): string | null {
  return existsSync(REDIS_SERVER) ? null : `${REDIS_SERVER} is not installed (apt-get install redis-server)`
}

/** With a `password`, the server requires it (`requirepass`) and `url` carries it. */
export async function startPrivateRedis(t: Teardown, { password }: { password?: string } = {}): Promise<PrivateRedis> {
  const port = await freePort()
  let child: ChildProcess | undefined
  const answers = async (): Promise<boolean> => {
    const client = new Redis({ host: '127.0.0.1', port, password, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null })
    client.on('error', () => {})
    try {
      await client.connect()
      await client.ping()
      return true
    } catch {
      return false
    } finally {
      client.disconnect()
    }
  }
  const start = async (): Promise<void> => {
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']
    if (password !== undefined) args.push('--requirepass', password)
    child = spawn(REDIS_SERVER, args, { stdio: 'ignore' })
    if (!(await holds(answers, 10_000))) throw new Error(`redis-server did not start on port ${port}`)
  }
  const stop = async (): Promise<void> => {
    const running = child
    child = undefined
    if (!running || running.exitCode !== null) return
    const exited = new Promise((resolve) => running.once('exit', resolve))
    running.kill('SIGKILL')
    await exited
  }
  await start()
  t.teardown(stop)
  const auth = password === undefined ? '' : `:${encodeURIComponent(password)}@`
  return { url: `redis://${auth}127.0.0.1:${port}/0`, port, stop, start }
}
