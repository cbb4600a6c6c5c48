/** What one location saw: the site answered (`up`), failed (`down`), refused us (`blocked`), or the probe itself broke (`error`). */
export type LocationVerdict = 'up' | 'down' | 'blocked' | 'error'

/**
 * The site verdict across locations, or `pending`: a tracked site never checked yet (never a
 * consensus of a check; the status record's freshness rule says it).
 */
export type SiteStatus = CheckStatus | 'pending'

/** A check's verdict across its locations. */
export type CheckStatus = 'up' | 'down' | 'unconfirmed' | 'unavailable'

/** One location's result as fed to {@link decide}. */
export interface LocationOutcome {
  status: LocationVerdict
  response_ms: number
}

/** The site verdict and the facts it rests on. */
export interface Consensus {
  status: CheckStatus
  /** Some location reached the site (up or blocked) while another saw it down. */
  partial: boolean
  /** Some location was refused and none reached the site cleanly. */
  blocked: boolean
  /** Median response time of the answering locations, 0.1 ms precision; null when none answered. */
  response_ms: number | null
  locations_answered: number
  locations_total: number
}

function median(values: readonly number[]): number | null {
  if (values.length === 0) return null
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  const at = (i: number): number => sorted[i] ?? 0 // every index used is inside the non-empty array
  const m = sorted.length % 2 === 1 ? at(mid) : (at(mid - 1) + at(mid)) / 2
  return Math.round(m * 10) / 10
}

/** Turns per-location outcomes into one site verdict; pure, order-independent. */
export function decide(results: readonly LocationOutcome[]): Consensus {
  // `error` is our probe failing, so it says nothing about the site.
  const answered = results.filter((r) => r.status !== 'error')
  const failed = answered.filter((r) => r.status === 'down').length
  const up = answered.filter((r) => r.status === 'up').length
  const refused = answered.filter((r) => r.status === 'blocked').length
  // A refusal is still an answer from the site, so blocked counts as having reached it.
  const reached = up + refused

  let status: CheckStatus
  if (answered.length === 0) status = 'unavailable'
  else if (answered.length === 1) status = 'unconfirmed'
  else if (failed >= 2) status = 'down'
  else status = 'up'

  return {
    status,
    partial: reached > 0 && failed > 0,
    blocked: refused > 0 && up === 0,
    response_ms: median(answered.map((r) => r.response_ms)),
    locations_answered: answered.length,
    locations_total: results.length
  }
}
