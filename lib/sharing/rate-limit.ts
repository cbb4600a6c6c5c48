import { RateLimiter, type Limiter, type RateLimitState } from '../rate-limit.js'
import type { SharedRedis } from './redis.js'

const WINDOW_MS = 60_000

/**
 * The sliding window of lib/rate-limit.ts as one script, so that a decision is atomic however many
 * instances ask at once. Per key: a sorted set of admitted entries (score: admission time in ms,
 * member: `seq:cost`) and a hash holding their total (`used`) and the entry counter (`seq`); both
 * expire a window after the newest admission, so an idle key leaves nothing behind. Time is
 * Redis's own (TIME), so instances with skewed clocks still share one window.
 *
 * KEYS: entries, totals. ARGV: mode (`take`, `peek`, `refund`), limit, cost (to refund: the units
 * given back, 0 for all), window ms, the entry to refund. Returns { allowed, used, resetMs,
 * retryAfterMs, now, member } (member: the entry admitted, or what is left of the one refunded).
 */
const SCRIPT = `
local entries, totals = KEYS[1], KEYS[2]
local mode, limit, cost, window = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local used = tonumber(redis.call('HGET', totals, 'used') or '0')
local changed = false
local function costOf(member) return tonumber(string.match(member, ':(%d+)$')) end
local expired = redis.call('ZRANGEBYSCORE', entries, '-inf', now - window)
if #expired > 0 then
  for _, m in ipairs(expired) do used = used - costOf(m) end
  redis.call('ZREMRANGEBYSCORE', entries, '-inf', now - window)
  changed = true
end
local allowed = 1
local member = ''
if mode == 'take' then
  if used + cost > limit then allowed = 0
  elseif cost > 0 then
    member = redis.call('HINCRBY', totals, 'seq', 1) .. ':' .. cost
    redis.call('ZADD', entries, now, member)
    used = used + cost
    changed = true
    redis.call('PEXPIRE', entries, window)
    redis.call('PEXPIRE', totals, window)
  end
elseif mode == 'refund' then
  local score = redis.call('ZSCORE', entries, ARGV[5])
  if score then
    local whole = costOf(ARGV[5])
    local back = whole
    if cost > 0 and cost < whole then back = cost end
    redis.call('ZREM', entries, ARGV[5])
    if back < whole then
      member = string.match(ARGV[5], '^(%d+):') .. ':' .. (whole - back)
      redis.call('ZADD', entries, score, member)
    end
    used = used - back
    changed = true
  end
end
if changed then redis.call('HSET', totals, 'used', used) end
local resetMs = 0
if used > 0 then
  local last = redis.call('ZRANGE', entries, -1, -1, 'WITHSCORES')
  if last[2] then resetMs = tonumber(last[2]) + window - now end
end
local retryAfterMs = 0
if allowed == 0 then
  if cost > limit then retryAfterMs = window
  else
    -- Walk the oldest units until enough would have aged out for this cost to fit.
    local freed, offset = 0, 0
    while retryAfterMs == 0 do
      local page = redis.call('ZRANGE', entries, offset, offset + 99, 'WITHSCORES')
      if #page == 0 then break end
      for i = 1, #page, 2 do
        freed = freed + costOf(page[i])
        if used - freed + cost <= limit then
          retryAfterMs = tonumber(page[i + 1]) + window - now
          break
        end
      end
      offset = offset + 100
    end
  end
end
return { allowed, used, resetMs, retryAfterMs, now, member }
`

type ScriptReply = [number, number, number, number, number, string]

declare module 'ioredis' {
  interface RedisCommander {
    siteStatusWindow(
      entries: string,
      totals: string,
      mode: string,
      limit: number,
      cost: number,
      windowMs: number,
      member: string
    ): Promise<ScriptReply>
  }
}

/**
 * Per-key limits shared by every instance on one Redis, with the semantics of {@link RateLimiter}
 * (the same sliding window, refused requests consume nothing, refunds remove the very entry): one
 * script call per request, one round trip. While Redis is away each instance uses its own
 * in-memory window (the `fallback`), which is what one instance alone would do; the shared
 * windows take over again as soon as Redis answers.
 */
export class SharedRateLimiter implements Limiter {
  readonly #redis: SharedRedis
  readonly #fallback: RateLimiter
  readonly #windowMs: number
  #refused = 0

  constructor({
    redis,
    fallback = new RateLimiter(),
    windowMs = WINDOW_MS
  }: {
    redis: SharedRedis
    fallback?: RateLimiter
    /** The window's length; the service's is a minute (tests shorten it, as they cannot move Redis's clock). */
    windowMs?: number
  }) {
    this.#redis = redis
    this.#fallback = fallback
    this.#windowMs = windowMs
    redis.client.defineCommand('siteStatusWindow', { numberOfKeys: 2, lua: SCRIPT })
  }

  async #run(mode: 'take' | 'peek' | 'refund', key: string, limit: number, cost: number, member = ''): Promise<RateLimitState | null> {
    if (!this.#redis.available) return null
    let reply: ScriptReply
    try {
      reply = await this.#redis.client.siteStatusWindow(
        this.#redis.key('rl', key, 'entries'),
        this.#redis.key('rl', key, 'totals'),
        mode,
        limit,
        cost,
        this.#windowMs,
        member
      )
    } catch (err) {
      this.#redis.failed(err)
      return null
    }
    const [allowed, used, resetMs, retryAfterMs, now, admitted] = reply
    const state: RateLimitState = {
      allowed: allowed === 1,
      limit,
      remaining: Math.max(0, limit - used),
      resetMs,
      retryAfterMs
    }
    if (admitted !== '') Object.assign(state, { admittedAt: now, cost, token: admitted })
    return state
  }

  async take(key: string, limit: number, cost: number): Promise<RateLimitState> {
    const shared = await this.#run('take', key, limit, cost)
    if (shared === null) return this.#fallback.take(key, limit, cost)
    if (!shared.allowed) this.#refused++
    return shared
  }

  /** Requests this instance refused since start, by the shared window or, while Redis was away, its own (for /metrics). */
  get refused(): number {
    return this.#refused + this.#fallback.refused
  }

  async refund(
    key: string,
    limit: number,
    admitted: Pick<RateLimitState, 'admittedAt' | 'cost' | 'token'>,
    units?: number
  ): Promise<RateLimitState> {
    // Units admitted by the in-memory window while Redis was away are given back there.
    if (admitted.token === undefined) return this.#fallback.refund(key, limit, admitted, units)
    const state = await this.#run('refund', key, limit, units ?? 0, admitted.token)
    if (state === null) return this.#fallback.peek(key, limit)
    // The script names what is left of a partly refunded entry: that, not the old one, stays refundable.
    const { allowed, remaining, resetMs, retryAfterMs, token } = state
    const budget: RateLimitState = { allowed, limit, remaining, resetMs, retryAfterMs }
    if (token === undefined || admitted.cost === undefined || units === undefined) return budget
    return { ...budget, admittedAt: admitted.admittedAt, cost: admitted.cost - units, token }
  }

  async peek(key: string, limit: number): Promise<RateLimitState> {
    return (await this.#run('peek', key, limit, 0)) ?? this.#fallback.peek(key, limit)
  }
}
