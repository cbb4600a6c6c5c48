import { TLSSocket } from 'node:tls'
import { isStorableInstant } from '../lib/rules/instants.js'

/** The longest issuer kept: the store's column (a site chooses its certificate, and so this text). */
export const MAX_ISSUER_LENGTH = 512

/** What a probe keeps of the leaf certificate a site presented in its handshake. */
export interface SeenCertificate {
  /** `notAfter`, ISO 8601. */
  expires_at: string
  /** The issuer's distinguished name, most specific first (`CN=R11, O=Let's Encrypt, C=US`); null when empty. */
  issuer: string | null
}

/**
 * The leaf certificate of a TLS connection that has completed its handshake; null for a plain TCP
 * socket or when the peer sent none. Through `getPeerCertificate(false)`, not
 * `getPeerX509Certificate()`: on a client socket, Node 20's X509 accessor answers once and then
 * leaves both accessors returning nothing for that socket (seen on 20.20), which would silently
 * blind any later reader of the same connection.
 */
export function peerCertificate(socket: object): SeenCertificate | null {
  if (!(socket instanceof TLSSocket)) return null
  const cert = socket.getPeerCertificate(false) as Partial<ReturnType<TLSSocket['getPeerCertificate']>>
  if (typeof cert.valid_to !== 'string') return null
  const expires = new Date(cert.valid_to)
  // A certificate may say any year up to 9999 and any issuer: what the store cannot hold is not kept.
  if (Number.isNaN(expires.getTime()) || !isStorableInstant(expires.getTime())) return null
  const issuer = issuerName(cert.issuer)
  return {
    expires_at: expires.toISOString(),
    issuer: issuer !== null && issuer.length > MAX_ISSUER_LENGTH ? `${issuer.slice(0, MAX_ISSUER_LENGTH - 1)}…` : issuer
  }
}

/**
 * An issuer as Node hands it (`{C: 'US', O: "Let's Encrypt", CN: 'R11'}`, most general first; a
 * repeated attribute as an array) as one line, most specific first, as `openssl -nameopt RFC2253`
 * prints it: `CN=R11, O=Let's Encrypt, C=US`. Null when there is nothing to show.
 */
export function issuerName(issuer: unknown): string | null {
  if (issuer === null || typeof issuer !== 'object') return null
  const parts: string[] = []
  for (const [attribute, value] of Object.entries(issuer as Record<string, unknown>)) {
    const values = Array.isArray(value) ? value : [value]
    const text = values.filter((v): v is string => typeof v === 'string').map((v) => `${attribute}=${v}`)
    if (text.length > 0) parts.push(text.join('+'))
  }
  return parts.length === 0 ? null : parts.reverse().join(', ')
}
