import { setMaxListeners } from 'node:events'
import { PassThrough } from 'node:stream'
import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi'
import Joi from 'joi'
import { requireScope } from '../auth.js'
import { safeErrorSummary } from '../errors.js'
import { tryNormaliseDomain } from '../rules/domain.js'
import { checkExpectations, expectSchema, type ExpectationsPatch } from '../rules/expectations.js'
import { checkDigest, checkSchema, type CheckSpec } from '../rules/check-spec.js'
import { TargetPolicyError, type CheckResult, type CheckSupervisor } from '../probing/supervisor.js'
import { chargeRequest, refundRequest, type RateLimitCredentials, type Limiter } from '../rate-limit.js'
import { CHECK_COST } from './check.js'

/** The most domains one batch may hold. */
export const MAX_BATCH_DOMAINS = 100
/** A batch body's size limit: 100 entries of up to a URL's length each would not fit in the single check's 4 KiB. */
const MAX_BATCH_BYTES = 32 * 1024
export const NDJSON = 'application/x-ndjson'

const entry = Joi.alternatives(
  Joi.string().allow('').max(2048),
  Joi.object({ domain: Joi.string().allow('').max(2048).required(), check: checkSchema }).unknown(false)
)

const body = Joi.object({
  domains: Joi.array()
    .items(entry)
    .min(1)
    .max(MAX_BATCH_DOMAINS)
    .required()
    .messages({ 'array.base': '"domains" must be a list of domains, or of objects with a "domain" and an optional "check"' }),
  expect: expectSchema,
  check: checkSchema
})
  .required()
  .unknown(false)
  .label('request body')
  .messages({ 'object.base': 'request body must be a JSON object with a "domains" list' })

/** One domain of a batch that was not checked. */
export interface BatchError {
  domain: string
  error: string
  code: 'invalid_domain' | 'non_public_target' | 'check_failed'
}
export type BatchLine = CheckResult | BatchError

export interface BatchSummary {
  domains: number
  checked: number
  cached: number
  errors: number
}

/** One distinct check of a batch: a domain and what its locations do (null: the plain web check). */
interface BatchEntry {
  domain: string
  check: CheckSpec | null
}

/**
 * The batch as sent, made distinct: the checks to run (a domain with the same check once; the
 * batch's `check` for entries that name none) and the entries that are not domains.
 */
function readBatch(
  entries: ReadonlyArray<string | { domain: string; check?: CheckSpec }>,
  shared: CheckSpec | null
): { domains: BatchEntry[]; invalid: BatchError[] } {
  const domains = new Map<string, BatchEntry>()
  const invalid = new Map<string, BatchError>()
  for (const item of entries) {
    const given = typeof item === 'string' ? item : item.domain
    const check = typeof item === 'string' ? shared : (item.check ?? shared)
    const parsed = tryNormaliseDomain(given)
    if (parsed.ok) domains.set(`${parsed.domain} ${check === null ? '' : checkDigest(check)}`, { domain: parsed.domain, check })
    else if (!invalid.has(given)) invalid.set(given, { domain: given, error: parsed.error.message, code: 'invalid_domain' })
  }
  return { domains: [...domains.values()], invalid: [...invalid.values()] }
}

/**
 * A stream whose lines leave as soon as they are written, together with the others of the same
 * turn of the event loop: domains whose answers arrive together (an actor answers many at once)
 * leave in one write. hapi hands a stream response its compressor (gzip when the client accepts
 * it), which is flushed after each write, or it would hold lines back until it has a block's worth.
 */
class LineStream extends PassThrough {
  #compressor: { flush(): void } | null = null
  #pending: string[] = []
  #ending = false

  setCompressor(compressor: { flush(): void }): void {
    this.#compressor = compressor
  }

  line(value: unknown): void {
    if (this.destroyed || this.#ending) return
    if (this.#pending.push(`${JSON.stringify(value)}\n`) === 1) setImmediate(this.#flush)
  }

  /** Writes `value` as the last line and ends the stream. */
  last(value: unknown): void {
    this.line(value)
    this.#ending = true
  }

  readonly #flush = (): void => {
    if (this.destroyed) return
    const text = this.#pending.join('')
    this.#pending = []
    this.write(text)
    this.#compressor?.flush()
    if (this.#ending) this.end()
  }
}

/**
 * `POST /api/v1/checks`: up to 100 domains checked at once, as the single check checks each (its
 * reuse and single flight), charged up front for the distinct valid domains. The domains wait for
 * the key's share of the checks in flight instead of being refused; one that cannot be checked is a
 * line of its own, its units refunded once the batch is done. With `Accept: application/x-ndjson`
 * each line leaves as its domain completes; when the client goes away, the batch's waits end, and
 * with them the probe runs nobody else waits for.
 */
export function batchCheckRoutes({ checks, limiter }: { checks: CheckSupervisor; limiter: Limiter }): ServerRoute[] {
  return [
    {
      method: 'POST',
      path: '/api/v1/checks',
      options: {
        auth: requireScope('check'),
        // Charged in the handler, by its distinct domains (chargeRequest).
        plugins: { rateLimit: { cost: 0 } },
        payload: { allow: 'application/json', maxBytes: MAX_BATCH_BYTES },
        validate: { payload: body }
      },
      handler: async (request, h) => {
        const payload = request.payload as {
          domains: Array<string | { domain: string; check?: CheckSpec }>
          expect?: ExpectationsPatch
          check?: CheckSpec
        }
        const { domains, invalid } = readBatch(payload.domains, payload.check ?? null)
        const expect = checkExpectations(payload.expect)
        const cost = CHECK_COST * domains.length
        const charged = await chargeRequest(request, limiter, cost)
        if (!charged.allowed) return overBudget(h, domains.length, charged.remaining, charged.limit, charged.retryAfterMs)

        const { keyId } = request.auth.credentials as unknown as RateLimitCredentials
        const gone = new AbortController()
        // Each domain listens once while it waits for a slot, and once while it waits for its run.
        setMaxListeners(2 * MAX_BATCH_DOMAINS + 1, gone.signal)
        const summary: BatchSummary = { domains: domains.length + invalid.length, checked: 0, cached: 0, errors: invalid.length }
        let refund = 0
        // hapi stops writing when the client goes, but the checks would go on: end what only it waits for.
        request.raw.res.once('close', () => {
          if (!request.raw.res.writableFinished) gone.abort(new Error('the client went away'))
        })
        /** A domain's line; null once the client has gone. */
        const checkOne = async ({ domain, check }: BatchEntry): Promise<BatchLine | null> => {
          try {
            const result = await checks.checkWhenFree(domain, { key: String(keyId), signal: gone.signal, expect, check })
            summary.checked++
            if (result.cached) summary.cached++
            return result
          } catch (err) {
            if (gone.signal.aborted) return null
            summary.errors++
            refund += CHECK_COST
            if (err instanceof TargetPolicyError) return { domain, error: err.message, code: 'non_public_target' }
            request.log(['error', 'batch'], safeErrorSummary(err))
            return { domain, error: 'the service failed to check this domain', code: 'check_failed' }
          }
        }
        // Units of domains that could not be checked are given back once, when every domain is done.
        const settle = async (): Promise<void> => {
          if (refund > 0) await refundRequest(request, limiter, refund)
        }

        if (!accepts(request, NDJSON)) {
          const results: BatchLine[] = [...invalid]
          const keep = (line: BatchLine | null): void => {
            if (line !== null) results.push(line)
          }
          await Promise.all(domains.map(async (domain) => checkOne(domain).then(keep)))
          await settle()
          return gone.signal.aborted ? h.abandon : { results, summary }
        }

        const out = new LineStream()
        // The status and headers leave at once: the client knows the batch was taken before its first line.
        request.raw.res.once('pipe', () => {
          request.raw.res.flushHeaders()
        })
        gone.signal.addEventListener(
          'abort',
          () => {
            out.destroy()
          },
          { once: true }
        )
        for (const line of invalid) out.line(line)
        const write = (line: BatchLine | null): void => {
          if (line !== null) out.line(line)
        }
        void Promise.all(domains.map(async (domain) => checkOne(domain).then(write)))
          .then(settle)
          .then(
            () => {
              out.last({ summary })
            },
            (err: unknown) => {
              request.log(['error', 'batch'], safeErrorSummary(err))
              out.destroy()
            }
          )
        return h.response(out).type(`${NDJSON}; charset=utf-8`).header('cache-control', 'no-cache').header('x-accel-buffering', 'no')
      }
    }
  ]
}

/**
 * The 429 of a batch the budget does not cover whole: how many domains would fit now; nothing
 * charged. A batch over the key's whole limit never fits, however long one waits: it says so, and
 * carries no Retry-After (a client that honours one would wait for nothing).
 */
function overBudget(h: ResponseToolkit, domains: number, remaining: number, limit: number, retryAfterMs: number) {
  const fits = Math.floor(remaining / CHECK_COST)
  const cost = CHECK_COST * domains
  if (cost > limit) {
    const error = `this batch costs ${cost} units (${domains} domains), more than this key's limit of ${limit} per minute, so waiting will not help: send at most ${Math.floor(limit / CHECK_COST)} domains, or use a key with a higher limit (keys create --limit)`
    return h.response({ error, fits }).code(429)
  }
  const error = `this batch costs ${cost} units (${domains} domains) and this key has ${remaining} left: ${fits} domains fit now; retry after the Retry-After delay`
  return h
    .response({ error, fits })
    .code(429)
    .header('Retry-After', String(Math.max(1, Math.ceil(retryAfterMs / 1000))))
}

/** Whether the request's Accept header names `type` (with or without parameters). */
function accepts(request: Request, type: string): boolean {
  const accept = request.headers.accept
  return typeof accept === 'string' && accept.split(',').some((part) => part.split(';')[0]?.trim().toLowerCase() === type)
}
