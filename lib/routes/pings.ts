import Boom from '@hapi/boom'
import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi'
import Joi from 'joi'
import { PING_TOKEN } from '../heartbeats/manage.js'
import { PingCommitter, tokenHashOf } from '../heartbeats/pings.js'
import { RateLimiter } from '../rate-limit.js'
import { clientAddress } from '../rules/client-address.js'
import { pingKindOf, type PingKind } from '../rules/heartbeat.js'
import { MAX_MESSAGE_BYTES, ridSchema } from '../rules/heartbeat-fields.js'
import type { Db } from '../store/db.js'

/** Pings a minute one token may send, and one client address: a flood is refused before the database. */
export interface PingLimits {
  perToken: number
  perAddress: number
}

export const PING_LIMITS: PingLimits = { perToken: 120, perAddress: 12_000 }

const querySchema = Joi.object({ rid: ridSchema }).unknown(false).messages({ 'object.unknown': 'a ping takes only "rid"' })

/** Most pings carry no query: Joi is asked only about one there is (validating an empty one took more CPU than hapi's own code). */
async function query(value: unknown): Promise<unknown> {
  if (Object.keys(value as object).length === 0) return value
  return querySchema.validateAsync(value)
}

function refuse(limit: number, retryAfterMs: number, what: string): Boom.Boom {
  const boom = Boom.tooManyRequests(`too many pings ${what}: at most ${limit} a minute`)
  boom.output.headers['Retry-After'] = String(Math.max(1, Math.ceil(retryAfterMs / 1000)))
  return boom
}

/**
 * The ping URLs: `/ping/<token>` (success), `/start`, `/fail` and `/<0-255>` (0 success, else a
 * failure), by GET, HEAD or POST, no key. A ping is answered `OK` only once the transaction that
 * holds it has committed: pings arriving together share one (group commit, lib/heartbeats/pings.ts). Pings are limited per token and per client address in this
 * process, before any query: one token flooded spends its own budget and nobody else's.
 */
export function pingRoutes({
  db,
  now,
  trustedProxies = [],
  limits = PING_LIMITS,
  pinged
}: {
  db: Db
  now: () => Date
  trustedProxies?: readonly string[]
  limits?: PingLimits
  /** Told the hash of each token whose ping committed (what keeps heartbeats in memory forgets them). */
  pinged?: (tokenHash: string) => void
}): ServerRoute[] {
  const limiter = new RateLimiter({ now: () => now().getTime() })
  const committer = new PingCommitter({ db, now })
  const handle = async (request: Request, h: ResponseToolkit, kind: PingKind) => {
    const token = request.params.token as string
    const tokenHash = tokenHashOf(token)
    const tokenKey = `token:${tokenHash}`
    const byToken = limiter.take(tokenKey, limits.perToken, 1)
    if (!byToken.allowed) throw refuse(limits.perToken, byToken.retryAfterMs, 'to this heartbeat')
    const address = clientAddress(request.info.remoteAddress, request.raw.req.headers['x-forwarded-for'], trustedProxies)
    const byAddress = limiter.take(`address:${address}`, limits.perAddress, 1)
    if (!byAddress.allowed) {
      limiter.refund(tokenKey, limits.perToken, byToken)
      throw refuse(limits.perAddress, byAddress.retryAfterMs, 'from this address')
    }
    if (!PING_TOKEN.test(token)) throw Boom.notFound('no heartbeat has this ping token')
    const body = request.payload
    const message = Buffer.isBuffer(body) && body.length > 0 ? body.toString('utf8') : undefined
    const rid = (request.query as { rid?: string }).rid ?? null
    const settled = await committer.record({ token, kind, rid, ...(message === undefined ? {} : { message }) }, tokenHash)
    if (settled === null) throw Boom.notFound('no heartbeat has this ping token')
    pinged?.(tokenHash)
    return h.response('OK').type('text/plain; charset=utf-8').header('cache-control', 'no-store')
  }
  const options = (method: string) => ({
    auth: false as const,
    validate: { query },
    ...(method === 'POST' ? { payload: { parse: false, output: 'data' as const, maxBytes: MAX_MESSAGE_BYTES } } : {})
  })
  return (['GET', 'POST'] as const).flatMap((method): ServerRoute[] => [
    {
      method,
      path: '/ping/{token}',
      options: options(method),
      handler: (request, h) => handle(request, h, 'success')
    },
    {
      method,
      path: '/ping/{token}/{signal}',
      options: options(method),
      handler: (request, h) => {
        const kind = pingKindOf(request.params.signal as string)
        if (kind === null) throw Boom.badRequest('a ping ends in /start, /fail or an exit status from 0 to 255')
        return handle(request, h, kind)
      }
    }
  ])
}
