import { isIP } from 'node:net'
import { hostname } from 'node:os'
import { dirname, resolve } from 'node:path'
import Joi from 'joi'
import { ConfigError, oneLine } from './errors.js'
import { DEFAULT_LOCATIONS, parseLocations, type LocationConfig } from './locations.js'
import { parseNats, type NatsConfig } from './nats.js'

export { ConfigError } from './errors.js'
export type { LocationConfig } from './locations.js'
export type { NatsConfig } from './nats.js'

/** One `CONNECT_TO` entry with curl's `--connect-to` meaning; null host/port matches any (HOST1/PORT1) or keeps the original (HOST2/PORT2). */
export interface ConnectToRule {
  readonly host1: string | null
  readonly port1: number | null
  readonly host2: string | null
  readonly port2: number | null
}

/** The whole validated configuration, frozen. Only this module reads the environment. */
export interface Config {
  readonly port: number
  readonly host: string
  readonly publicUrl: string
  /** PUBLIC_URL was given: `publicUrl` is the operator's word, not made from HOST and PORT. */
  readonly publicUrlSet: boolean
  readonly databaseUrl: string
  readonly locations: readonly LocationConfig[]
  readonly checkIntervalS: number
  /** Raw per-check rows older than this are pruned; outages are kept. */
  readonly checkRetentionDays: number
  readonly probeTimeoutMs: number
  readonly cacheTtlS: number
  readonly rateLimitPerMin: number
  /** True: checks may reach any non-public address. */
  readonly allowPrivateTargets: boolean
  /** CIDR ranges checks may reach although they are not public (when `allowPrivateTargets` is false). */
  readonly allowedTargetRanges: readonly string[]
  /** CIDR ranges no probe may reach, public or not, whatever `allowPrivateTargets` says (DENY_TARGETS). */
  readonly deniedTargetRanges: readonly string[]
  readonly connectTo: readonly ConnectToRule[]
  readonly logLevel: string
  /** LOG_FORMAT: `json` or `pretty` lines; null: pretty on a terminal, JSON otherwise. */
  readonly logFormat: 'json' | 'pretty' | null
  /** `ip[:port]` resolvers for probes and the target policy (c-ares); empty: the system's. */
  readonly dnsServers: readonly string[]
  /** Checks (on-demand and scheduled) running at once; over it an on-demand check is refused with 503. */
  readonly maxChecksInFlight: number
  /** The share of the on-demand capacity one key may hold at once (0 < share <= 1). */
  readonly maxKeyShare: number
  /** WEBHOOK_KEY decoded: the AES-256 key sealing webhook secrets at rest; null: use {@link Config.webhookKeyFile}. */
  readonly webhookKey: Buffer | null
  /** The key file made on first use when WEBHOOK_KEY is unset: `webhook.key` beside the SQLite file, or `data/webhook.key`. */
  readonly webhookKeyFile: string
  /** This instance's name in /healthz, logs and the scheduler's claims (INSTANCE_ID; default `hostname:pid`). */
  readonly instanceId: string
  /** REDIS_URL: the Redis every instance of this service shares (limits, check results, event wake-ups); null: none. */
  readonly redisUrl: string | null
  /** METRICS_TOKEN: a bearer token that may read `/metrics` (and nothing else); null when unset or empty. */
  readonly metricsToken: string | null
  /** NATS_URL and NATS_CREDENTIALS: how the agent locations are reached; null when unset. */
  readonly nats: NatsConfig | null
  /** TRUSTED_PROXIES: CIDR ranges of reverse proxies whose `X-Forwarded-For` names the client; empty: none. */
  readonly trustedProxies: readonly string[]
}

const FLAG_VALUES = new Set(['1', '0', 'true', 'false', ''])

function isCidr(text: string): boolean {
  const [address, bits, extra] = text.split('/')
  const family = isIP(address ?? '')
  if (family === 0 || extra !== undefined) return false
  if (bits === undefined) return true
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 6 ? 128 : 32)
}

/** `1`/`true` allows every non-public target; a comma-separated CIDR list allows only those ranges. */
const allowPrivateSchema = Joi.string()
  .allow('')
  .default('')
  .custom((value: string, helpers) => {
    if (FLAG_VALUES.has(value) || value.split(',').every((part) => isCidr(part.trim()))) return value
    return helpers.error('any.invalid')
  })
  .messages({ 'any.invalid': 'must be 1, 0, or a comma-separated list of CIDR ranges such as 10.20.0.0/16' })

/** A comma-separated list of CIDR ranges (or single addresses); empty for none. */
const cidrListSchema = Joi.string()
  .allow('')
  .default('')
  .custom((value: string, helpers) => {
    return value.trim() === '' || value.split(',').every((part) => isCidr(part.trim())) ? value : helpers.error('any.invalid')
  })
  .messages({ 'any.invalid': 'must be a comma-separated list of CIDR ranges such as 203.0.113.0/24,2001:db8::/32' })

/** RFC 1123 host names: dot-separated labels of letters, digits and inner hyphens, at most 253 characters. */
const HOST_NAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i

/** The listen address: an IP address (IPv6 without brackets, as Node's listen takes it) or a host name. */
const hostSchema = Joi.string()
  .trim()
  .min(1)
  .default('127.0.0.1')
  .custom((value: string, helpers) => {
    return isIP(value) !== 0 || HOST_NAME.test(value) ? value : helpers.error('any.invalid')
  })
  .messages({ 'any.invalid': 'must be an IP address or a host name, such as 0.0.0.0, :: or status.internal' })

/**
 * `mysql://user:pass@host:port/db` must name the host and the database (the tables live there);
 * messages never repeat the URL, which may hold a password.
 */
const databaseUrlSchema = Joi.string()
  .pattern(/^(mysql:\/\/.+|sqlite:.+)$/)
  .default('sqlite:data/site-status.sqlite')
  .custom((value: string, helpers) => {
    if (!value.startsWith('mysql://')) return value
    let url: URL
    try {
      url = new URL(value)
    } catch {
      return helpers.error('string.pattern.base')
    }
    if (url.hostname === '') return helpers.error('string.pattern.base')
    if (!/^\/[^/]+$/.test(url.pathname)) return helpers.error('database.missing')
    return value
  })
  .messages({
    'string.pattern.base': 'must be mysql://user:pass@host:port/db or sqlite:path',
    'database.missing': 'must name the database: mysql://user:pass@host:port/db'
  })

/** Base64 of exactly 32 bytes (`openssl rand -base64 32`); the message never repeats the value. */
const webhookKeySchema = Joi.string()
  .trim()
  .custom((value: string, helpers) => {
    const bytes = Buffer.from(value, 'base64')
    return bytes.length === 32 && bytes.toString('base64').replace(/=+$/, '') === value.replace(/=+$/, '')
      ? value
      : helpers.error('any.invalid')
  })
  .messages({
    'any.invalid': 'must be base64 of exactly 32 bytes, such as the output of openssl rand -base64 32',
    'string.empty': 'must not be empty'
  })

/**
 * `redis://[user:pass@]host:port/db` (or `rediss://` for TLS): the host and a database number are
 * required, so that every instance is sure to use the same one; messages never repeat the URL,
 * which may hold a password.
 */
const redisUrlSchema = Joi.string()
  .trim()
  .allow('')
  .custom((value: string, helpers) => {
    let url: URL
    try {
      url = new URL(value)
    } catch {
      return helpers.error('any.invalid')
    }
    if ((url.protocol !== 'redis:' && url.protocol !== 'rediss:') || url.hostname === '') return helpers.error('any.invalid')
    if (!/^\/\d{1,5}$/.test(url.pathname) || url.search !== '' || url.hash !== '') return helpers.error('any.invalid')
    return value
  })
  .messages({
    'any.invalid': 'must be redis://host:port/db (redis://:password@host:port/db with a password, rediss:// for TLS)'
  })

/** Where the webhook key file lives: beside the SQLite file, or under data/ for MySQL (and an in-memory SQLite). */
function webhookKeyFileFor(databaseUrl: string): string {
  const target = databaseUrl.startsWith('sqlite:') ? databaseUrl.slice('sqlite:'.length) : ''
  return target === '' || target === ':memory:' ? resolve('data', 'webhook.key') : resolve(dirname(resolve(target)), 'webhook.key')
}

/** A bearer token a scraper sends: printable, no spaces (it travels in `Authorization: Bearer <token>`), long enough not to be guessed. The message never repeats the value. */
const metricsTokenSchema = Joi.string()
  .allow('')
  .pattern(/^[\x21-\x7e]{16,512}$/)
  .messages({ 'string.pattern.base': 'must be 16 to 512 printable characters without spaces, such as the output of openssl rand -hex 32' })

const envSchema = Joi.object({
  PORT: Joi.number().integer().min(0).max(65535).default(3000),
  HOST: hostSchema,
  PUBLIC_URL: Joi.string().uri({ scheme: ['http', 'https'] }),
  DATABASE_URL: databaseUrlSchema,
  LOCATIONS: Joi.string().min(1),
  CHECK_INTERVAL_S: Joi.number().integer().min(1).max(86400).default(60),
  CHECK_RETENTION_DAYS: Joi.number().integer().min(1).max(3650).default(35),
  PROBE_TIMEOUT_MS: Joi.number().integer().min(100).max(120000).default(10000),
  CACHE_TTL_S: Joi.number().integer().min(0).max(86400).default(60),
  RATE_LIMIT_PER_MIN: Joi.number().integer().min(1).max(1000000).default(60),
  ALLOW_PRIVATE_TARGETS: allowPrivateSchema,
  CONNECT_TO: Joi.string().allow('').default(''),
  LOG_LEVEL: Joi.string().valid('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent').default('info'),
  LOG_FORMAT: Joi.string().valid('json', 'pretty').allow(''),
  DNS_SERVERS: Joi.string().allow('').default(''),
  DENY_TARGETS: cidrListSchema,
  TRUSTED_PROXIES: cidrListSchema,
  MAX_CHECKS_IN_FLIGHT: Joi.number().integer().min(2).max(100_000).default(4000),
  MAX_KEY_SHARE: Joi.number().greater(0).max(1).default(0.5),
  WEBHOOK_KEY: webhookKeySchema,
  INSTANCE_ID: Joi.string()
    .trim()
    .max(191)
    .pattern(/^[\x21-\x7e]+$/)
    .messages({ 'string.pattern.base': 'must be printable ASCII without spaces, such as web-1 or host:1234' }),
  REDIS_URL: redisUrlSchema,
  METRICS_TOKEN: metricsTokenSchema
}).unknown(true)

function parsePort(text: string, variable: string): number | null {
  if (text === '') return null
  const n = /^\d{1,5}$/.test(text) ? Number(text) : NaN
  if (!(n >= 1 && n <= 65535)) throw new ConfigError(`${variable}: "${text}" is not a port number`)
  return n
}

/** Splits `host:port` where host may be a bracketed IPv6 literal, as curl writes it. */
function splitHostPort(text: string, entry: string): [string, string, string] {
  const m = /^(\[[0-9a-fA-F:.]*\]|[^:[\]]*):([^:]*):(.*)$/.exec(text)
  if (!m) throw new ConfigError(`CONNECT_TO: "${entry}" must look like HOST1:PORT1:HOST2:PORT2`)
  return [m[1] ?? '', m[2] ?? '', m[3] ?? '']
}

export function parseConnectTo(raw: string): ConnectToRule[] {
  const rules: ConnectToRule[] = []
  for (const entry of raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [host1, port1, rest] = splitHostPort(entry, entry)
    const [host2, port2, extra] = splitHostPort(`${rest}:`, entry)
    if (extra !== '') throw new ConfigError(`CONNECT_TO: "${entry}" must look like HOST1:PORT1:HOST2:PORT2`)
    const unbracket = (h: string): string | null => (h === '' ? null : h.replace(/^\[(.*)\]$/, '$1').toLowerCase())
    rules.push({
      host1: unbracket(host1),
      port1: parsePort(port1, 'CONNECT_TO'),
      host2: unbracket(host2),
      port2: parsePort(port2, 'CONNECT_TO')
    })
  }
  return rules
}

/**
 * `DNS_SERVERS`: comma-separated `ip`, `ip:port`, or `[ipv6]:port` entries, in the form c-ares'
 * `setServers` takes them. Names are refused: the resolvers themselves cannot be looked up.
 */
export function parseDnsServers(raw: string): string[] {
  const servers: string[] = []
  for (const entry of raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const m = /^\[([0-9a-fA-F:.]+)\](?::(\d{1,5}))?$/.exec(entry) ?? /^([0-9.]+)(?::(\d{1,5}))?$/.exec(entry)
    const address = m?.[1] ?? entry
    const family = isIP(address)
    const port = m?.[2] === undefined ? null : parsePort(m[2], 'DNS_SERVERS')
    if (family === 0 || (m === null && family !== 6)) {
      throw new ConfigError(
        `DNS_SERVERS: "${entry}" must be an IP address with an optional port, such as 10.0.0.2, 10.0.0.2:5353 or [fd00::53]:53`
      )
    }
    servers.push(port === null ? address : family === 6 ? `[${address}]:${port}` : `${address}:${port}`)
  }
  return servers
}

/** A list of CIDR ranges as {@link cidrListSchema} accepted it: its entries, trimmed; empty for none. */
function cidrList(value: string): readonly string[] {
  return Object.freeze(
    value
      .split(',')
      .map((r) => r.trim())
      .filter(Boolean)
  )
}

/**
 * Reads and validates the environment once. Every problem is reported together, on one line that
 * names each variable, so that a bad deployment fails at start instead of at first use.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const result = envSchema.validate(env, { abortEarly: false, convert: true }) as Joi.ValidationResult<Record<string, unknown>>
  const problems: string[] = result.error
    ? result.error.details.map((d) => `${String(d.path[0])}: ${d.message.replace(/^"[^"]+" /, '')}`)
    : []
  let locations: LocationConfig[] = DEFAULT_LOCATIONS
  let connectTo: ConnectToRule[] = []
  let dnsServers: string[] = []
  // Assigned in a step below: typed so, not narrowed to its initial null.
  let nats = null as NatsConfig | null
  for (const step of [
    () => {
      nats = parseNats(env.NATS_URL, env.NATS_CREDENTIALS)
    },
    () => {
      locations = parseLocations(env.LOCATIONS)
    },
    () => {
      connectTo = parseConnectTo(env.CONNECT_TO ?? '')
    },
    () => {
      dnsServers = parseDnsServers(env.DNS_SERVERS ?? '')
    }
  ]) {
    try {
      step()
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err
      problems.push(err.message)
    }
  }
  if (nats === null && locations.some((l) => l.agent !== undefined) && !problems.some((p) => p.startsWith('NATS_'))) {
    problems.push('NATS_URL: required when a location names an agent')
  }
  if (problems.length > 0 || result.error) throw new ConfigError(oneLine(`invalid configuration: ${problems.join('; ')}`))
  const v = result.value
  const host = v.HOST as string
  const port = v.PORT as number
  const urlHost = host.includes(':') ? `[${host}]` : host
  return Object.freeze({
    port,
    host,
    publicUrl: ((v.PUBLIC_URL as string | undefined) ?? `http://${urlHost}:${port}`).replace(/\/+$/, ''),
    publicUrlSet: v.PUBLIC_URL !== undefined,
    databaseUrl: v.DATABASE_URL as string,
    locations: Object.freeze(locations.map((l) => Object.freeze({ ...l }))),
    checkIntervalS: v.CHECK_INTERVAL_S as number,
    checkRetentionDays: v.CHECK_RETENTION_DAYS as number,
    probeTimeoutMs: v.PROBE_TIMEOUT_MS as number,
    cacheTtlS: v.CACHE_TTL_S as number,
    rateLimitPerMin: v.RATE_LIMIT_PER_MIN as number,
    allowPrivateTargets: v.ALLOW_PRIVATE_TARGETS === '1' || v.ALLOW_PRIVATE_TARGETS === 'true',
    allowedTargetRanges: Object.freeze(
      FLAG_VALUES.has(v.ALLOW_PRIVATE_TARGETS as string) ? [] : (v.ALLOW_PRIVATE_TARGETS as string).split(',').map((r) => r.trim())
    ),
    deniedTargetRanges: cidrList(v.DENY_TARGETS as string),
    connectTo: Object.freeze(connectTo.map((r) => Object.freeze({ ...r }))),
    logLevel: v.LOG_LEVEL as string,
    logFormat: v.LOG_FORMAT === 'json' || v.LOG_FORMAT === 'pretty' ? v.LOG_FORMAT : null,
    dnsServers: Object.freeze(dnsServers),
    maxChecksInFlight: v.MAX_CHECKS_IN_FLIGHT as number,
    maxKeyShare: v.MAX_KEY_SHARE as number,
    webhookKey: typeof v.WEBHOOK_KEY === 'string' ? Buffer.from(v.WEBHOOK_KEY, 'base64') : null,
    webhookKeyFile: webhookKeyFileFor(v.DATABASE_URL as string),
    instanceId: (v.INSTANCE_ID as string | undefined) ?? `${hostname()}:${process.pid}`,
    // Empty is unset, as for METRICS_TOKEN: a compose file's `REDIS_URL=${REDIS_URL:-}` means none.
    redisUrl: typeof v.REDIS_URL === 'string' && v.REDIS_URL !== '' ? v.REDIS_URL : null,
    metricsToken: typeof v.METRICS_TOKEN === 'string' && v.METRICS_TOKEN !== '' ? v.METRICS_TOKEN : null,
    nats,
    trustedProxies: cidrList(v.TRUSTED_PROXIES as string)
  })
}
