import Joi from 'joi'
import { tryNormaliseDomain } from './domain.js'
import { heartbeatBody } from './heartbeat-fields.js'
import { webhookFields } from './webhooks.js'

/**
 * Webhooks and heartbeats in a configuration file: judged by the API's own Joi rules, put in the
 * normal form the plan compares. A webhook is named by its URL, a heartbeat by its slug.
 */

/** A webhook as the file declares it; `secret` null: the stored one is kept (a new webhook gets one made). */
export interface WebhookDecl {
  url: string
  events: string[] | null
  domains: string[] | null
  secret: string | null
}

/**
 * A heartbeat as the file declares it. `schedule` is what the heartbeats API takes (its Joi rule
 * judges it), kept as given. The ping token is never in a file: a new heartbeat's is made and
 * shown by `heartbeats rotate`.
 */
export interface HeartbeatDecl {
  slug: string
  name: string
  schedule: Readonly<Record<string, unknown>>
  grace_s: number
  max_runtime_s: number | null
}

export interface HookProblem {
  path: Array<string | number>
  message: string
}

export const MAX_FILE_WEBHOOKS = 1_000
export const MAX_FILE_HEARTBEATS = 10_000

/** A webhook's signing secret as the service makes them: `whsec_` and base64. */
const WEBHOOK_SECRET = /^whsec_[A-Za-z0-9+/]{16,}={0,2}$/

export const webhookSchema = Joi.object({
  ...webhookFields,
  // Written "${NAME}": its shape (WEBHOOK_SECRET) is judged once the environment put it in.
  secret: Joi.string().allow(null).description('"${NAME}": a webhook secret (whsec_ and base64) from the environment')
}).unknown(false)

const heartbeatField = (key: string): Joi.Schema => heartbeatBody.extract(key)

export const heartbeatSchema = Joi.object({
  slug: heartbeatField('slug').required(),
  name: heartbeatField('name'),
  schedule: heartbeatField('schedule'),
  grace_s: heartbeatField('grace_s'),
  max_runtime_s: heartbeatField('max_runtime_s')
}).unknown(false)

interface RawWebhook {
  url: string
  events?: string[] | null
  domains?: string[] | null
  secret?: string | null
}
interface RawHeartbeat {
  slug: string
  name: string
  schedule: Record<string, unknown>
  grace_s: number
  max_runtime_s?: number | null
}

const byKey =
  <T>(key: (t: T) => string) =>
  (a: T, b: T): number =>
    key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0

/** The file's webhooks in normal form (sorted by URL); problems pushed with where they are. */
export function checkWebhooks(raw: readonly RawWebhook[], fromEnv: ReadonlySet<string>, problems: HookProblem[]): WebhookDecl[] {
  const seen = new Map<string, number>()
  const out: WebhookDecl[] = []
  raw.forEach((w, i) => {
    if (seen.has(w.url)) {
      problems.push({ path: ['webhooks', i, 'url'], message: `the webhook ${w.url} is declared twice (also webhooks[${seen.get(w.url)}])` })
      return
    }
    seen.set(w.url, i)
    if (typeof w.secret === 'string' && !fromEnv.has(`webhooks[${i}].secret`))
      problems.push({ path: ['webhooks', i, 'secret'], message: 'a secret is written "${NAME}" and NAME set in the environment' })
    else if (typeof w.secret === 'string' && !WEBHOOK_SECRET.test(w.secret))
      problems.push({ path: ['webhooks', i, 'secret'], message: '"secret" must be a webhook secret, whsec_ and base64' })
    let domains: string[] | null = null
    if (Array.isArray(w.domains)) {
      const set = new Set<string>()
      w.domains.forEach((d, k) => {
        const parsed = tryNormaliseDomain(d)
        if (parsed.ok) set.add(parsed.domain)
        else problems.push({ path: ['webhooks', i, 'domains', k], message: parsed.error.message })
      })
      domains = [...set]
    }
    out.push({ url: w.url, events: w.events ?? null, domains, secret: w.secret ?? null })
  })
  return out.sort(byKey((w) => w.url))
}

/** The file's heartbeats in normal form (sorted by slug). */
export function checkHeartbeats(raw: readonly RawHeartbeat[], problems: HookProblem[]): HeartbeatDecl[] {
  const seen = new Map<string, number>()
  const out: HeartbeatDecl[] = []
  raw.forEach((h, i) => {
    if (seen.has(h.slug)) {
      problems.push({
        path: ['heartbeats', i, 'slug'],
        message: `the slug "${h.slug}" is declared twice (also heartbeats[${seen.get(h.slug)}])`
      })
      return
    }
    seen.set(h.slug, i)
    out.push({ slug: h.slug, name: h.name, schedule: h.schedule, grace_s: h.grace_s, max_runtime_s: h.max_runtime_s ?? null })
  })
  return out.sort(byKey((h) => h.slug))
}
