import { existsSync } from 'node:fs'
import { ConfigError } from './errors.js'

/** How this process reaches NATS: the servers, and who it is there. Never logged: it may hold a password. */
export interface NatsConfig {
  /** `host:port` of each server of the cluster, without credentials. */
  readonly servers: readonly string[]
  /** `tls://`: the connection is TLS (with the system's CAs, or NODE_EXTRA_CA_CERTS). */
  readonly tls: boolean
  readonly user: string | null
  readonly pass: string | null
  /** A token given as `nats://TOKEN@host` (a user without a password). */
  readonly token: string | null
  /** NATS_CREDENTIALS: a `.creds` file (JWT and nkey seed) or an nkey seed file. */
  readonly credentialsFile: string | null
}

const NATS_URL_FORM = 'must be nats://[user:pass@]host:4222 (tls:// for TLS; comma-separated for a cluster)'

/**
 * NATS_URL and NATS_CREDENTIALS; null when NATS_URL is unset or empty. Messages never repeat the
 * URL, which may hold a password. Every server of a cluster must name the same credentials.
 */
export function parseNats(rawUrl: string | undefined, rawCredentials: string | undefined): NatsConfig | null {
  const credentialsFile = rawCredentials === undefined || rawCredentials.trim() === '' ? null : rawCredentials.trim()
  if (credentialsFile !== null && !existsSync(credentialsFile)) throw new ConfigError('NATS_CREDENTIALS: no such file')
  if (rawUrl === undefined || rawUrl.trim() === '') {
    if (credentialsFile !== null) throw new ConfigError('NATS_CREDENTIALS: set NATS_URL too')
    return null
  }
  const servers: string[] = []
  let tls: boolean | null = null
  let auth: string | null = null
  for (const entry of rawUrl.split(',').map((s) => s.trim())) {
    let url: URL
    try {
      url = new URL(entry)
    } catch {
      throw new ConfigError(`NATS_URL: ${NATS_URL_FORM}`)
    }
    if ((url.protocol !== 'nats:' && url.protocol !== 'tls:') || url.hostname === '') throw new ConfigError(`NATS_URL: ${NATS_URL_FORM}`)
    if ((url.pathname !== '' && url.pathname !== '/') || url.search !== '' || url.hash !== '') {
      throw new ConfigError(`NATS_URL: ${NATS_URL_FORM}`)
    }
    const isTls = url.protocol === 'tls:'
    const who = `${url.username}:${url.password}`
    if ((tls !== null && tls !== isTls) || (auth !== null && auth !== who)) {
      throw new ConfigError('NATS_URL: every server must use the same scheme and credentials')
    }
    tls = isTls
    auth = who
    servers.push(`${url.hostname}:${url.port === '' ? '4222' : url.port}`)
  }
  const [user, pass] = (auth ?? ':').split(':').map(decodeURIComponent) as [string, string]
  if (credentialsFile !== null && user !== '') throw new ConfigError('NATS_CREDENTIALS: give either it or a user in NATS_URL, not both')
  return Object.freeze({
    servers: Object.freeze(servers),
    tls: tls === true,
    user: user !== '' && pass !== '' ? user : null,
    pass: user !== '' && pass !== '' ? pass : null,
    token: user !== '' && pass === '' ? user : null,
    credentialsFile
  })
}
