import { randomUUID } from 'node:crypto'
import type { SharedRuns } from './shared-runs.js'
import type { SharedRedis } from './redis.js'

/** How often a waiting instance looks for the result (and the run's lock) besides the message that announces it. */
const POLL_MS = 200

/** Deletes the run's lock only if it is still ours (it may have expired and been taken by another). */
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`
/** The cached result with its remaining time, and whether a run holds the lock: one round trip for a waiter. */
const LOOK = `return { redis.call('GET', KEYS[1]), redis.call('PTTL', KEYS[1]), redis.call('EXISTS', KEYS[2]) }`

declare module 'ioredis' {
  interface RedisCommander {
    siteStatusRelease(lock: string, token: string): Promise<number>
    siteStatusLook(result: string, lock: string): Promise<[string | null, number, number]>
  }
}

type Waiter<T> = (value: T) => void

/**
 * On-demand check results and their single flight, shared by every instance on one Redis. A result
 * is kept under `check:<domain>` for the cache TTL, so that any instance reuses it. A new probe run
 * takes `check-run:<domain>` (SET NX PX, for as long as a run may last); an instance that finds it
 * taken waits for the run's result, which the runner publishes on `checked` (with a poll of the
 * result key and the lock every 200 ms in case a message is missed), for no longer than the lock
 * lasts. A lock that goes away without a result (its instance stopped, or the result was not to be
 * shared) is taken again. Whenever Redis fails, the instance probes on its own: a check never waits
 * for Redis, and never fails because of it.
 */
export class SharedCheckRuns<T> implements SharedRuns<T> {
  readonly #redis: SharedRedis
  readonly #ttlMs: number
  readonly #runMs: number
  readonly #waiters = new Map<string, Set<Waiter<T>>>()
  readonly #unsubscribe: () => void

  /**
   * @param ttlMs the cache TTL (CACHE_TTL_S); 0 keeps no result, runs are still shared.
   * @param runMs the longest a probe run may take (its deadline): the lock's life and a waiter's longest wait.
   */
  constructor({ redis, ttlMs, runMs }: { redis: SharedRedis; ttlMs: number; runMs: number }) {
    this.#redis = redis
    this.#ttlMs = ttlMs
    this.#runMs = runMs
    redis.client.defineCommand('siteStatusRelease', { numberOfKeys: 1, lua: RELEASE })
    redis.client.defineCommand('siteStatusLook', { numberOfKeys: 2, lua: LOOK })
    this.#unsubscribe = redis.subscribe(redis.key('checked'), (message) => {
      const at = message.indexOf('\n')
      const waiters = this.#waiters.get(message.slice(0, at))
      if (!waiters) return
      const value = JSON.parse(message.slice(at + 1)) as T
      for (const waiter of [...waiters]) waiter(value)
    })
  }

  /** Checks of `domain` waiting here for another instance's run (each stands for all of this instance's). */
  waiting(domain: string): number {
    return this.#waiters.get(domain)?.size ?? 0
  }

  /** Stops taking messages. */
  close(): void {
    this.#unsubscribe()
  }

  async cached(domain: string): Promise<{ value: T; ttlMs: number } | null> {
    if (this.#ttlMs <= 0 || !this.#redis.available) return null
    try {
      const [text, ttlMs] = await this.#redis.client.siteStatusLook(this.#redis.key('check', domain), this.#redis.key('check-run', domain))
      return text === null || ttlMs <= 0 ? null : { value: JSON.parse(text) as T, ttlMs }
    } catch (err) {
      this.#redis.failed(err)
      return null
    }
  }

  async run(domain: string, probe: () => Promise<{ value: T; share: boolean }>): Promise<{ value: T; ran: boolean }> {
    const end = Date.now() + this.#runMs + POLL_MS
    const lock = this.#redis.key('check-run', domain)
    const token = randomUUID()
    while (this.#redis.available && Date.now() < end) {
      // Listening before asking for the lock: a result published in between is not missed.
      const waiting = this.#listen(domain)
      let taken: string | null
      try {
        taken = await this.#redis.client.set(lock, token, 'PX', this.#runMs, 'NX')
      } catch (err) {
        waiting.cancel()
        this.#redis.failed(err)
        break
      }
      if (taken === 'OK') {
        waiting.cancel()
        try {
          const { value, share } = await probe()
          if (share) this.#publish(domain, value)
          return { value, ran: true }
        } finally {
          this.#redis.client.siteStatusRelease(lock, token).catch((err: unknown) => {
            this.#redis.failed(err)
          })
        }
      }
      const value = await this.#await(domain, waiting, end)
      if (value !== undefined) return { value, ran: false }
    }
    return { value: (await probe()).value, ran: true }
  }

  /** Keeps the result for the TTL and hands it to the instances waiting for it. */
  #publish(domain: string, value: T): void {
    if (!this.#redis.available) return
    const text = JSON.stringify(value)
    if (this.#ttlMs > 0) {
      this.#redis.client.set(this.#redis.key('check', domain), text, 'PX', this.#ttlMs).catch((err: unknown) => {
        this.#redis.failed(err)
      })
    }
    this.#redis.publish(this.#redis.key('checked'), `${domain}\n${text}`)
  }

  #listen(domain: string): { result: Promise<T>; cancel: () => void } {
    let set = this.#waiters.get(domain)
    if (!set) {
      set = new Set()
      this.#waiters.set(domain, set)
    }
    const waiters = set
    let waiter: Waiter<T> = () => {}
    const result = new Promise<T>((resolve) => {
      waiter = resolve
    })
    waiters.add(waiter)
    const cancel = (): void => {
      waiters.delete(waiter)
      if (waiters.size === 0 && this.#waiters.get(domain) === waiters) this.#waiters.delete(domain)
    }
    return { result, cancel }
  }

  /**
   * The result of another instance's run: from its message, or from the result key; undefined when
   * its lock went away without one, when the wait reached `end`, or when Redis failed.
   */
  async #await(domain: string, waiting: { result: Promise<T>; cancel: () => void }, end: number): Promise<T | undefined> {
    const ticks = { timer: undefined as NodeJS.Timeout | undefined, done: false }
    const polled = new Promise<T | undefined>((resolve) => {
      const poll = (): void => {
        if (ticks.done) return
        if (Date.now() >= end || !this.#redis.available) {
          resolve(undefined)
          return
        }
        this.#redis.client.siteStatusLook(this.#redis.key('check', domain), this.#redis.key('check-run', domain)).then(
          ([text, , running]) => {
            if (text !== null) resolve(JSON.parse(text) as T)
            else if (running === 0) resolve(undefined)
            else if (!ticks.done) ticks.timer = setTimeout(poll, POLL_MS)
          },
          (err: unknown) => {
            this.#redis.failed(err)
            resolve(undefined)
          }
        )
      }
      ticks.timer = setTimeout(poll, POLL_MS)
    })
    try {
      return await Promise.race([waiting.result, polled])
    } finally {
      ticks.done = true
      clearTimeout(ticks.timer)
      waiting.cancel()
    }
  }
}
