import { Redis } from 'ioredis'

/** Whether Redis answers, for /healthz. */
export interface RedisPing {
  /** True when a PING is answered within the time limit. */
  ping(): Promise<boolean>
  close(): Promise<void>
}

/** A health probe must answer quickly even while Redis hangs or is gone. */
const PING_TIMEOUT_MS = 500

/**
 * /healthz's own small Redis connection (REDIS_URL), opened at once so that the first ping does not
 * pay for connecting: one PING with a time limit. It reconnects in the background while Redis is
 * away; a failed ping is an answer (`unreachable`), never an error.
 */
export function createRedisPing(url: string, timeoutMs = PING_TIMEOUT_MS): RedisPing {
  const connect = (): Redis => {
    const made = new Redis(url, {
      connectTimeout: timeoutMs,
      maxRetriesPerRequest: 1,
      retryStrategy: (times) => Math.min(times * 200, 2000)
    })
    // Connection errors are answered by the ping itself; ioredis would otherwise print each one.
    made.on('error', () => {})
    return made
  }
  let client: Redis | null = connect()
  return {
    ping: async () => {
      client ??= connect()
      let timer: NodeJS.Timeout | undefined
      const timeout = new Promise<boolean>((resolve) => {
        timer = setTimeout(() => {
          resolve(false)
        }, timeoutMs)
      })
      try {
        return await Promise.race([
          client.ping().then(
            () => true,
            () => false
          ),
          timeout
        ])
      } finally {
        clearTimeout(timer)
      }
    },
    close: () => {
      client?.disconnect()
      client = null
      return Promise.resolve()
    }
  }
}
