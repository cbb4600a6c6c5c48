import { createHash, timingSafeEqual } from 'node:crypto'
import Boom from '@hapi/boom'
import type { Request, ResponseToolkit, Server, ServerAuthScheme } from '@hapi/hapi'
import { LRUCache } from 'lru-cache'
import { databaseUnavailable, scopeRefusal } from './errors.js'
import { hashKey, isWellFormedKey, sameHash } from './keys.js'
import { chargeKey, type Limiter } from './rate-limit.js'
import { SCOPES, storedScopes, type Scope } from './rules/scopes.js'
import type { Db } from './store/db.js'
import { findKeyByHash, listKeyHashesAfter } from './store/keys.js'
import type { ApiKeyRow } from './store/tables.js'

/** What an authenticated request knows about its key. */
export interface KeyCredentials {
  keyId: number
  name: string
  limit: number
  /** Read with the key's row, so a changed key is seen as quickly as a revoked one. hapi checks routes' `auth.access.scope` against it. */
  scope: Scope[]
}

type Lookup = { row: ApiKeyRow } | { row: null }

/**
 * How long a key lookup is fresh: a request with the key is answered from it as it is. Revocation
 * with the operator tool must bite within a second (see {@link KEY_STALE_MS}).
 */
export const KEY_CACHE_TTL_MS = 300
/**
 * Up to this age a lookup still answers a request at once, while one new lookup (shared by every
 * request with the key) reads the row again: a request waits for the database only for a key not
 * looked up in the last 600 ms. Otherwise every request with a busy key would queue behind the
 * lookup, which itself queues for a connection behind the scheduler's claims and batches
 * (docs/decisions.md, Keys). With the memo's 150 ms on top, a revoked key is refused within 750 ms
 * plus the lookup's own time.
 */
export const KEY_STALE_MS = 600
/** Recently authenticated headers remembered at most; beyond that the memo starts over. */
const RECENT_MAX = 10_000
const RECENT_TTL_MS = 150
/**
 * Longest header the memo keeps: `Bearer <key>` is 54 characters. A longer one (a key padded with
 * spaces up to Node's 16 KB header limit still authenticates) is answered, but not remembered, so
 * that 10,000 distinct padded headers cannot keep 160 MB alive.
 */
const RECENT_MAX_HEADER = 128
/** Reads of newly issued keys come at most this often, however many unknown keys arrive. */
const KNOWN_KEYS_GAP_MS = 100

/**
 * The hashes of every key ever issued (revoked ones included), so that a key nobody issued is
 * refused without a query of its own: random well-formed keys would otherwise each cost one. The
 * set grows by reading the keys issued since the last read. A request with a hash not in the set
 * waits for a read that begins after it arrived (at most one read per {@link KNOWN_KEYS_GAP_MS},
 * shared by every such request), so a key issued a moment ago is found, and a flood of random keys
 * costs ten reads a second at most.
 */
class KnownKeys {
  readonly #db: Db
  readonly #hashes = new Set<string>()
  #lastId = 0
  #readAt = -Infinity
  /** The next read, not begun yet: requests arriving now can share it. */
  #queued: Promise<void> | null = null
  /** The read under way, if any: too late for requests arriving now. */
  #running: Promise<void> | null = null

  constructor(db: Db) {
    this.#db = db
  }

  has(keyHash: string): boolean {
    return this.#hashes.has(keyHash)
  }

  /** Resolves after a read of new keys that began after this call; rejects when that read fails. */
  catchUp(): Promise<void> {
    if (this.#queued !== null) return this.#queued
    const before = this.#running ?? Promise.resolve()
    const queued = before
      .catch(() => {})
      .then(async () => {
        const wait = this.#readAt + KNOWN_KEYS_GAP_MS - performance.now()
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
        if (this.#queued === queued) this.#queued = null
        const running = this.#read()
        this.#running = running
        try {
          await running
        } finally {
          if (this.#running === running) this.#running = null
        }
      })
    this.#queued = queued
    return queued
  }

  async #read(): Promise<void> {
    this.#readAt = performance.now()
    for (const { id, keyHash } of await listKeyHashesAfter({ db: this.#db, afterId: this.#lastId })) {
      this.#hashes.add(keyHash)
      this.#lastId = Math.max(this.#lastId, id)
    }
  }
}

/**
 * Resolves bearer keys to their rows through a short-lived cache, so that a burst of requests with
 * one key costs one database lookup. While the database is unreachable, a key seen before keeps
 * its last known state instead of locking every client out.
 */
export class KeyAuthenticator {
  readonly #cache: LRUCache<string, Lookup>
  readonly #recent = new Map<string, { credentials: KeyCredentials; until: number }>()
  readonly #known: KnownKeys
  readonly #defaultLimit: number

  constructor({ db, defaultLimit }: { db: Db; defaultLimit: number }) {
    this.#defaultLimit = defaultLimit
    this.#known = new KnownKeys(db)
    this.#cache = new LRUCache<string, Lookup>({
      max: 10_000,
      ttl: KEY_CACHE_TTL_MS,
      allowStaleOnFetchRejection: true,
      noDeleteOnFetchRejection: true,
      noDeleteOnStaleGet: true,
      fetchMethod: async (keyHash) => ({ row: await findKeyByHash({ db, keyHash }) })
    })
  }

  /**
   * The credentials of a header that authenticated moments ago, or undefined: such a header needs
   * no parsing, hashing or lookup again, and no promise. The memo stacks on the key cache (an
   * answer up to KEY_STALE_MS old) for 150 ms more: revocation bites within ~750 ms of the lookup.
   */
  recent(authorization: string | undefined): KeyCredentials | undefined {
    const recent = authorization === undefined ? undefined : this.#recent.get(authorization)
    return recent !== undefined && recent.until > performance.now() ? recent.credentials : undefined
  }

  async authenticate(authorization: string | undefined): Promise<KeyCredentials> {
    const recent = this.recent(authorization)
    if (recent !== undefined) return recent
    const credentials = await this.#authenticate(authorization)
    if ((authorization as string).length > RECENT_MAX_HEADER) return credentials
    if (this.#recent.size >= RECENT_MAX) this.#recent.clear()
    this.#recent.set(authorization as string, { credentials, until: performance.now() + RECENT_TTL_MS })
    return credentials
  }

  /** Headers the memo holds now (tests and diagnostics). */
  get remembered(): number {
    return this.#recent.size
  }

  async #authenticate(authorization: string | undefined): Promise<KeyCredentials> {
    if (authorization === undefined || authorization.trim() === '') {
      throw Boom.unauthorized('missing API key: send Authorization: Bearer <key>', 'Bearer')
    }
    const match = /^Bearer +(\S+) *$/i.exec(authorization)
    if (!match) throw Boom.unauthorized('malformed Authorization header: expected Bearer <key>', 'Bearer')
    const key = match[1] as string
    if (!isWellFormedKey(key)) throw Boom.unauthorized('invalid API key', 'Bearer')
    const keyHash = hashKey(key)
    if (!this.#known.has(keyHash)) {
      try {
        await this.#known.catchUp()
      } catch {
        throw databaseUnavailable()
      }
      if (!this.#known.has(keyHash)) throw Boom.unauthorized('invalid API key', 'Bearer')
    }
    // A fresh cached answer needs no promise. One past fresh but younger than KEY_STALE_MS is
    // answered with too, while a lookup reads the row again; a miss or an older entry waits for it.
    let found: Lookup | undefined = this.#cache.get(keyHash)
    if (found === undefined) {
      const allowStale = this.#cache.getRemainingTTL(keyHash) > KEY_CACHE_TTL_MS - KEY_STALE_MS
      try {
        found = await this.#cache.fetch(keyHash, { allowStale })
      } catch {
        found = undefined
      }
    }
    // The fetch method always returns an object; nothing back means the database failed and no
    // earlier answer for this key was at hand.
    if (found === undefined) throw databaseUnavailable()
    const row = found.row
    if (!row || !sameHash(row.key_hash, keyHash)) throw Boom.unauthorized('invalid API key', 'Bearer')
    if (row.revoked_at !== null) throw Boom.unauthorized('API key has been revoked', 'Bearer')
    return { keyId: row.id, name: row.name, limit: row.rate_limit ?? this.#defaultLimit, scope: storedScopes(row.scopes) }
  }
}

/** The key strategy that also requires `scope` (see {@link requireScope}); `api-key` requires none. */
export function keyStrategy(scope?: Scope): string {
  return scope === undefined ? 'api-key' : `api-key:${scope}`
}

/**
 * Registers the key strategies: `api-key` (Bearer keys, the default for every route that opts in)
 * and one per scope, which lets in only keys holding it. The strategy also charges a GET route's
 * cost (see {@link chargeAfterBody}): authentication, the scope check and the charge in one
 * lifecycle step, where hapi's scope check and an `onPostAuth` step would add two more to every
 * read. A key refused for its scope (403) or its budget (429) is answered with its credentials
 * attached, so the answer shows its budget, and a key refused for its scope spends nothing.
 */
export function registerKeyAuth(server: Server, authenticator: KeyAuthenticator, limiter: Limiter): void {
  const scheme: ServerAuthScheme<{ scope?: Scope }> = (_server, options) => {
    const scope = options?.scope
    const admit = (request: Request, h: ResponseToolkit, credentials: KeyCredentials) => {
      const data = { credentials: credentials as unknown as Record<string, unknown> }
      if (scope !== undefined && !credentials.scope.includes(scope)) {
        return h.unauthenticated(Boom.forbidden(scopeRefusal([scope], credentials.scope)), data)
      }
      if (request.route.method !== 'get') return h.authenticated(data)
      const refused = chargeKey(request, limiter, credentials)
      if (refused instanceof Promise) return refused.then((r) => (r === undefined ? h.authenticated(data) : h.unauthenticated(r, data)))
      return refused === undefined ? h.authenticated(data) : h.unauthenticated(refused, data)
    }
    return {
      // Not async: a key seen moments ago (nearly every request) is answered without a promise.
      authenticate: (request, h) => {
        const authorization = request.headers.authorization as string | undefined
        const recent = authenticator.recent(authorization)
        if (recent !== undefined) return admit(request, h, recent)
        return authenticator.authenticate(authorization).then((credentials) => admit(request, h, credentials))
      }
    }
  }
  server.auth.scheme('api-key', scheme)
  server.auth.strategy(keyStrategy(), 'api-key')
  for (const scope of SCOPES) server.auth.strategy(keyStrategy(scope), 'api-key', { scope })
}

/**
 * Route options that let only keys holding `scope` in: checked as the key is authenticated, before
 * the rate limit charges, so a key refused for its scope spends nothing. A keyed route without one
 * is open to every valid key, as `GET /api/v1/rate_limit` is on purpose.
 */
export function requireScope(scope: Scope): { strategy: string } {
  return { strategy: keyStrategy(scope) }
}

/** The strategy that lets `Authorization: Bearer <METRICS_TOKEN>` read `/metrics` (see {@link registerMetricsToken}). */
export const METRICS_TOKEN_STRATEGY = 'metrics-token'

const digest = (text: string): Buffer => createHash('sha256').update(text).digest()

/**
 * Registers the `metrics-token` strategy: the configured token (compared in constant time, by
 * digest, so its length leaks nothing either) grants `read` and nothing else, with no key and no
 * budget to charge. Any other header counts as missing here, so that hapi asks the key strategy
 * next: a key with `read` still scrapes, and a wrong token gets the key strategy's 401.
 */
export function registerMetricsToken(server: Server, token: string): void {
  const expected = digest(token)
  server.auth.scheme(METRICS_TOKEN_STRATEGY, () => ({
    authenticate: (request, h) => {
      const authorization = request.headers.authorization as string | undefined
      const match = authorization === undefined ? null : /^Bearer +(\S+) *$/i.exec(authorization)
      if (match && timingSafeEqual(digest(match[1] as string), expected)) {
        return h.authenticated({ credentials: { scope: ['read'], metricsToken: true } })
      }
      throw Boom.unauthorized(null, 'Bearer')
    }
  }))
  server.auth.strategy(METRICS_TOKEN_STRATEGY, METRICS_TOKEN_STRATEGY)
}
