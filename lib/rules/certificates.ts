/** Certificate expiry: the days left, the warning, and which `certificate.expiring` threshold is due. */

const DAY_MS = 86_400_000

/** Days left at which `certificate.expiring` is announced, each once per certificate. */
export const EXPIRY_THRESHOLDS_DAYS = [14, 7, 1] as const

/** Under this many days left, pages warn about the certificate. */
export const EXPIRY_WARNING_DAYS = 14

/** A site's certificate as one check saw it. */
export interface SiteCertificate {
  expiresAt: Date
  issuer: string | null
}

/** What was announced about a site's certificate: the expiry it concerned and the lowest threshold announced. */
export interface ExpiryNotice {
  expiresAt: Date
  days: number
}

/**
 * Whole days left before `expiresAt`, rounded down (never overstating the time left): 2 for a
 * certificate expiring in 2 days 23 hours, 0 on its last day, negative once it has expired.
 */
export function daysRemaining(expiresAt: Date, now: Date): number {
  return Math.floor((expiresAt.getTime() - now.getTime()) / DAY_MS)
}

/** Whether pages warn about a certificate with `days` whole days left: under {@link EXPIRY_WARNING_DAYS}. */
export function expiresSoon(days: number): boolean {
  return days < EXPIRY_WARNING_DAYS
}

/**
 * The certificate a check reports for its site: the expiry that a majority of the locations whose
 * final hop completed a TLS handshake agree on, and at least two of them when two or more locations
 * reached a verdict (one location's word, an agent's say, never drives a notice alone), with that
 * certificate's issuer; null when there is no such majority. Locations that see different
 * certificates (regional ones) then report none until they agree.
 */
export function siteCertificate(
  locations: ReadonlyArray<{ status?: string; tls_expires_at?: string | null; tls_issuer?: string | null }>
): SiteCertificate | null {
  const votes = new Map<number, { count: number; issuer: string | null }>()
  let reporters = 0
  let voters = 0
  for (const l of locations) {
    if (l.status !== 'error') voters++
    if (l.tls_expires_at === undefined || l.tls_expires_at === null) continue
    const at = Date.parse(l.tls_expires_at)
    if (Number.isNaN(at)) continue
    reporters++
    const vote = votes.get(at)
    if (vote) vote.count++
    else votes.set(at, { count: 1, issuer: l.tls_issuer ?? null })
  }
  for (const [at, { count, issuer }] of votes) {
    if (count * 2 > reporters && count >= Math.min(2, voters)) return { expiresAt: new Date(at), issuer }
  }
  return null
}

/**
 * The `certificate.expiring` threshold to announce for a certificate seen at `at`, or null. A
 * threshold is crossed once at most that many days are left; the lowest crossed is the one
 * announced, one event even when several are crossed at once (a certificate first seen 3 days
 * before it expires is announced once, at 7: a burst of stale "14 days" news says nothing more).
 * Nothing is due when that threshold, or a lower one, was already announced for a certificate with
 * this same expiry; a certificate with another expiry (a renewal) starts afresh.
 */
export function dueExpiryThreshold(expiresAt: Date, at: Date, announced: ExpiryNotice | null): number | null {
  const left = expiresAt.getTime() - at.getTime()
  let due: number | null = null
  for (const days of EXPIRY_THRESHOLDS_DAYS) if (left <= days * DAY_MS && (due === null || days < due)) due = days
  if (due === null) return null
  if (announced !== null && announced.expiresAt.getTime() === expiresAt.getTime() && announced.days <= due) return null
  return due
}
