import { Redis } from 'ioredis'
import type { Logger } from 'pino'

/** Every key and channel this service uses starts with this, so that it can share a database. */
export const KEY_PREFIX = 'site-status:'

/** How long one command may take before it counts as a failure (and the caller goes on without Redis). */
const COMMAND_TIMEOUT_MS = 1000
/** While Redis is away, how often a reconnection is tried, at the most. */
const RECONNECT_MAX_MS = 1000

/**
 * The connections to the Redis every instance shares (REDIS_URL): one for commands, one for
 * subscriptions (a subscribed connection takes no other command). Redis is an optimisation here,
 * never a dependency: commands fail at once rather than queue while it is away (no offline queue, a
 * short command timeout), callers then use their local state, and `available` says which to use.
 * The log says once that Redis is unreachable and once that it answers again; it never names the
 * URL, which may hold a password.
 */
export class SharedRedis {
  readonly client: Redis
  readonly #subscriber: Redis
  readonly #logger: Logger
  readonly #listeners = new Map<string, Set<(message: string) => void>>()
  /** `unknown` until the first connection or failure; the log speaks on each change after that. */
  #state: 'unknown' | 'up' | 'down' = 'unknown'
  #probe: NodeJS.Timeout | undefined
  #closed = false

  constructor({ url, logger }: { url: string; logger: Logger }) {
    this.#logger = logger
    const options = {
      connectTimeout: 2000,
      retryStrategy: (times: number) => Math.min(times * 100, RECONNECT_MAX_MS),
      // ioredis logs nothing itself, but its errors go to 'error' listeners: ours (below).
      lazyConnect: false
    }
    this.client = new Redis(url, { ...options, enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: COMMAND_TIMEOUT_MS })
    // Subscriptions are queued until connected and renewed by ioredis after every reconnection.
    this.#subscriber = new Redis(url, { ...options, maxRetriesPerRequest: null })
    this.client.on('ready', () => {
      this.#up()
    })
    this.client.on('error', (err: Error) => {
      this.failed(err)
    })
    this.client.on('close', () => {
      if (!this.#closed) this.failed(new Error('connection closed'))
    })
    this.#subscriber.on('error', () => {
      // The command connection reports the outage; this one reconnects on its own.
    })
    this.#subscriber.on('message', (channel: string, message: string) => {
      for (const listener of this.#listeners.get(channel) ?? []) {
        try {
          listener(message)
        } catch (err) {
          this.#logger.error({ err }, 'a Redis message listener failed')
        }
      }
    })
  }

  /** Whether commands may be sent now; when false, callers use this instance's own state. */
  get available(): boolean {
    return this.#state === 'up' && this.client.status === 'ready'
  }

  /** A key or channel name under this service's prefix. */
  key(...parts: string[]): string {
    return KEY_PREFIX + parts.join(':')
  }

  /**
   * Says that a command failed: Redis counts as away (logged once) until a PING answers again.
   * Callers fall back to local state; nothing else is done with the error.
   */
  failed(err: unknown): void {
    if (this.#closed) return
    if (this.#state !== 'down') {
      this.#state = 'down'
      const code = (err as { code?: unknown } | null)?.code
      // The code only (ECONNREFUSED, ETIMEDOUT...): enough to act on, and never the URL or a password.
      this.#logger.warn(
        { redis: { reason: typeof code === 'string' ? code : 'connection lost' } },
        'Redis unreachable: rate limits fall back to this instance, check results and events are not shared until it answers'
      )
    }
    this.#probeLater()
  }

  /** A command timed out on a connection that still looks open: PING until it answers. */
  #probeLater(): void {
    if (this.#probe !== undefined || this.#closed) return
    this.#probe = setTimeout(() => {
      this.#probe = undefined
      if (this.client.status !== 'ready') return // 'ready' will say when it is back.
      this.client.ping().then(
        () => {
          this.#up()
        },
        (err: unknown) => {
          this.failed(err)
        }
      )
    }, RECONNECT_MAX_MS)
    this.#probe.unref()
  }

  #up(): void {
    if (this.#closed || this.#state === 'up') return
    const was = this.#state
    this.#state = 'up'
    if (was === 'down') this.#logger.info('Redis answers again: rate limits, check results and events are shared again')
    else this.#logger.info('Redis connected: rate limits, check results and events are shared with other instances')
  }

  /** Calls `listener` with every message published on `channel` (a name from {@link key}); returns the function that stops it. */
  subscribe(channel: string, listener: (message: string) => void): () => void {
    let set = this.#listeners.get(channel)
    if (!set) {
      set = new Set()
      this.#listeners.set(channel, set)
      this.#subscriber.subscribe(channel).catch(() => {
        // Retried by ioredis after reconnection; the callers poll meanwhile.
      })
    }
    set.add(listener)
    return () => {
      set.delete(listener)
    }
  }

  /** Publishes when Redis is available; a failure only marks it away (subscribers also poll). */
  publish(channel: string, message: string): void {
    if (!this.available) return
    this.client.publish(channel, message).catch((err: unknown) => {
      this.failed(err)
    })
  }

  async close(): Promise<void> {
    this.#closed = true
    clearTimeout(this.#probe)
    this.client.disconnect()
    this.#subscriber.disconnect()
    await Promise.resolve()
  }
}
