import { readFileSync } from 'node:fs'
import { connect, credsAuthenticator, nkeyAuthenticator, type ConnectionOptions, type NatsConnection } from 'nats'
import type { NatsConfig } from '../../config/index.js'

/**
 * How long a lost connection waits between attempts to come back: after NATS restarts, the agent
 * locations answer again within about this (the bound is 5 s).
 */
export const RECONNECT_WAIT_MS = 1000

/** The connection options for NATS_URL and NATS_CREDENTIALS; `name` shows in the server's connection list. */
export function natsOptions(config: NatsConfig, name: string): ConnectionOptions {
  const options: ConnectionOptions = {
    servers: [...config.servers],
    name,
    // Never give up: a central instance or an agent outlives any NATS restart.
    maxReconnectAttempts: -1,
    reconnectTimeWait: RECONNECT_WAIT_MS,
    reconnectJitter: 200,
    reconnectJitterTLS: 500,
    // A server that stops answering is noticed within seconds, not the default two minutes.
    pingInterval: 5000,
    maxPingOut: 2
  }
  if (config.tls) options.tls = {}
  if (config.user !== null) Object.assign(options, { user: config.user, pass: config.pass ?? '' })
  if (config.token !== null) options.token = config.token
  if (config.credentialsFile !== null) {
    const bytes = readFileSync(config.credentialsFile)
    // A .creds file holds a user JWT and its seed; a seed file alone is an nkey user's.
    options.authenticator = bytes.includes('BEGIN NATS USER JWT')
      ? credsAuthenticator(new Uint8Array(bytes))
      : nkeyAuthenticator(new TextEncoder().encode(bytes.toString('utf8').trim()))
  }
  return options
}

/** Connects once; rejects (with NATS's error, which never holds the password) when refused or unreachable. */
export function connectNats(config: NatsConfig, name: string, extra: Partial<ConnectionOptions> = {}): Promise<NatsConnection> {
  return connect({ ...natsOptions(config, name), ...extra })
}

/** How long closing a connection waits for NATS: a server gone quiet (half open) never answers. */
export const NATS_CLOSE_MS = 1500

/**
 * Closes a connection, draining it first when asked (what was published reaches NATS), within
 * {@link NATS_CLOSE_MS} whatever NATS does: past it the caller goes on and the socket is left to end.
 */
export async function endConnection(nc: NatsConnection, { drain = false }: { drain?: boolean } = {}): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const ended = (drain ? nc.drain() : nc.close()).catch(() => {})
  await Promise.race([ended, new Promise<void>((resolve) => (timer = setTimeout(resolve, NATS_CLOSE_MS)))])
  clearTimeout(timer)
  if (drain && !nc.isClosed()) void nc.close().catch(() => {})
}
