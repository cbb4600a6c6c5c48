import type { MonitorRef } from '../../rules/monitor.js'
import type { LocationResult } from '../../probing/locations/index.js'
import type { SiteStatus } from '../../rules/consensus.js'

/** One location's part of a site's newest check, as `/metrics` shows it (blackbox_exporter's `probe_*`). */
export interface LocationProbe {
  location: string
  /** The location saw the site up. */
  success: boolean
  durationS: number
  /** The last HTTP status the probe got; 0 when none. */
  httpCode: number
  /** The leaf certificate's expiry in Unix seconds; null when the probe did not learn it. */
  tlsExpiry: number | null
}

/** A check's locations as `/metrics` shows them; `labels` keeps one string per location label however many results carry it. */
export function locationProbes(locations: ReadonlyArray<Partial<LocationResult>>, labels: Map<string, string>): LocationProbe[] {
  return locations.map((l) => {
    const label = String(l.location)
    let location = labels.get(label)
    if (location === undefined) {
      location = label
      labels.set(label, label)
    }
    const expiresAt = typeof l.tls_expires_at === 'string' ? Date.parse(l.tls_expires_at) : NaN
    return {
      location,
      success: l.status === 'up',
      durationS: (l.response_ms ?? 0) / 1000,
      httpCode: l.http_code ?? 0,
      tlsExpiry: Number.isFinite(expiresAt) ? Math.floor(expiresAt / 1000) : null
    }
  })
}

/** What `/metrics` shows of one tracked site. */
export interface SiteMetrics {
  domain: string
  /** A monitor's (tcp, tls, dns) kind and slug, which its series are labelled by instead of a domain; null for a web site. */
  monitor: MonitorRef | null
  /** The current verdict (the freshness rule applied). */
  status: SiteStatus
  outageOngoing: boolean
  /** In a maintenance window now. */
  maintenance: boolean
  /** Up but slow (the slow rule), with the freshness rule applied. */
  slow: boolean
  /** The newest check's locations while that check is fresh; empty otherwise (stale or none since start). */
  probes: readonly LocationProbe[]
}
