import { TLSSocket } from 'node:tls'

/** What a probe keeps of the leaf certificate a site presented in its handshake. */
export interface SeenCertificate {
  /** `notAfter`, ISO 8601. */
  expires_at: string
  /** The issuer's distinguished name, most specific first (`CN=R11, O=Let's Encrypt, C=US`); null when empty. */
  issuer: string | null
}

/**
 * The leaf certificate of a TLS connection that has completed its handshake; null for a plain TCP
 * socket or when the peer sent none. Read through `getPeerX509Certificate`, whose fields are
 * computed on demand: `getPeerCertificate` would hash the certificate twice for fingerprints
 * nobody reads, on every probe.
 */
export function peerCertificate(socket: object): SeenCertificate | null {
  if (!(socket instanceof TLSSocket)) return null
  const cert = socket.getPeerX509Certificate()
  if (cert === undefined) return null
  const expires = new Date(cert.validTo)
  if (Number.isNaN(expires.getTime())) return null
  return { expires_at: expires.toISOString(), issuer: issuerName(cert.issuer) }
}

/** OpenSSL's one-attribute-a-line issuer (`C=US\nO=...\nCN=...`) as one line, most specific first. */
export function issuerName(lines: string): string | null {
  const parts = lines
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '')
  return parts.length === 0 ? null : parts.reverse().join(', ')
}
