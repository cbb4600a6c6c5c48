import Boom from '@hapi/boom'
import type { Server } from '@hapi/hapi'
import { LRUCache } from 'lru-cache'
import { databaseUnavailable } from './errors.js'
import { hashKey, isWellFormedKey, sameHash } from './keys.js'
import type { Db } from './store/db.js'
import { findKeyByHash } from './store/keys.js'
import type { ApiKeyRow } from './store/tables.js'

/** What an authenticated request knows about its key. */
export interface KeyCredentials {
  keyId: number
  name: string
  limit: number
}

type Lookup = { row: ApiKeyRow } | { row: null }

/**
 * How long a key lookup is trusted. Revocation with the operator tool must bite within a second,
 * so half of that leaves room for the lookup itself.
 */
export const KEY_CACHE_TTL_MS = 500
/** Recently authenticated headers remembered at most; beyond that the memo starts over. */
const RECENT_MAX = 10_000
const RECENT_TTL_MS = KEY_CACHE_TTL_MS / 2

/**
 * Resolves bearer keys to their rows through a short-lived cache, so that a burst of requests with
 * one key costs one database lookup. While the database is unreachable, a key seen before keeps
 * its last known state instead of locking every client out.
 */
export class KeyAuthenticator {
  readonly #cache: LRUCache<string, Lookup>
  readonly #recent = new Map<string, { credentials: KeyCredentials; until: number }>()
  readonly #defaultLimit: number

  constructor({ db, defaultLimit }: { db: Db; defaultLimit: number }) {
    this.#defaultLimit = defaultLimit
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
   * no parsing, hashing or lookup again, and no promise. The memo stacks on the key cache, so its
   * window is half of that one's: revocation bites within ~750 ms.
   */
  recent(authorization: string | undefined): KeyCredentials | undefined {
    const recent = authorization === undefined ? undefined : this.#recent.get(authorization)
    return recent !== undefined && recent.until > performance.now() ? recent.credentials : undefined
  }

  async authenticate(authorization: string | undefined): Promise<KeyCredentials> {
    const recent = this.recent(authorization)
    if (recent !== undefined) return recent
    const credentials = await this.#authenticate(authorization)
    if (this.#recent.size >= RECENT_MAX) this.#recent.clear()
    this.#recent.set(authorization as string, { credentials, until: performance.now() + RECENT_TTL_MS })
    return credentials
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
    // A fresh cached answer needs no promise; only a miss or a stale entry goes to the database.
    let found: Lookup | undefined = this.#cache.get(keyHash)
    if (found === undefined) {
      try {
        found = await this.#cache.fetch(keyHash)
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
    return { keyId: row.id, name: row.name, limit: row.rate_limit ?? this.#defaultLimit }
  }
}

/** Registers the `api-key` strategy (Bearer keys) as the default for every route that opts in. */
export function registerKeyAuth(server: Server, authenticator: KeyAuthenticator): void {
  server.auth.scheme('api-key', () => ({
    // Not async: a key seen moments ago (nearly every request) is answered without a promise.
    authenticate: (request, h) => {
      const authorization = request.headers.authorization as string | undefined
      const recent = authenticator.recent(authorization)
      if (recent !== undefined) return h.authenticated({ credentials: recent as unknown as Record<string, unknown> })
      return authenticator.authenticate(authorization)
        .then((credentials) => h.authenticated({ credentials: credentials as unknown as Record<string, unknown> }))
    }
  }))
  server.auth.strategy('api-key', 'api-key')
}
