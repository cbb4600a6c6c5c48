import type { Registry } from 'prom-client'
import type { SiteStates } from '../monitoring/site-state.js'
import { collectedMetric, type Sample } from './collected.js'

/**
 * The per-site series: blackbox_exporter's `probe_*` per site and location (same names, units and
 * meaning, labelled `domain` and `location`), and `site_status_*` per site.
 */
const SERIES = {
  probe_success: 'Whether the location saw the site up in its newest check (1) or not (0).',
  probe_duration_seconds: "The newest check's probe from this location, in seconds (redirects and the http fallback included).",
  probe_http_status_code: 'The HTTP status of the last response in the newest check from this location; 0 when none came.',
  probe_ssl_earliest_cert_expiry: "The leaf certificate's expiry seen by the newest https probe from this location, in Unix seconds.",
  site_status_up: 'The site is up (1) or down (0) by consensus of the locations; absent while unconfirmed or unavailable.',
  site_status_outage_ongoing: 'The site has an outage that has not ended (1) or not (0).'
} as const
type SeriesName = keyof typeof SERIES

/**
 * Reads the tracked sites' state once per scrape ({@link take}) and serves the six metrics from
 * that one pass: nothing is updated per check, and a site no longer tracked is simply not read.
 */
export class SiteSeries {
  readonly #states: SiteStates
  readonly #now: () => Date
  #held: Record<SeriesName, Sample[]> | null = null

  constructor({ registry, states, now }: { registry: Registry; states: SiteStates; now: () => Date }) {
    this.#states = states
    this.#now = now
    for (const [name, help] of Object.entries(SERIES) as Array<[SeriesName, string]>) {
      registry.registerMetric(collectedMetric(name, help, 'gauge', () => (this.#held ?? this.#read())[name]))
    }
  }

  /** Reads the state for the scrape about to run; {@link release} after it. */
  take(): void {
    this.#held = this.#read()
  }

  release(): void {
    this.#held = null
  }

  #read(): Record<SeriesName, Sample[]> {
    const out: Record<SeriesName, Sample[]> = {
      probe_success: [],
      probe_duration_seconds: [],
      probe_http_status_code: [],
      probe_ssl_earliest_cert_expiry: [],
      site_status_up: [],
      site_status_outage_ongoing: []
    }
    this.#states.eachForMetrics(this.#now(), ({ domain, status, outageOngoing, probes }) => {
      const site = { domain }
      if (status === 'up' || status === 'down') out.site_status_up.push({ labels: site, value: status === 'up' ? 1 : 0 })
      out.site_status_outage_ongoing.push({ labels: site, value: outageOngoing ? 1 : 0 })
      for (const p of probes) {
        const labels = { domain, location: p.location }
        out.probe_success.push({ labels, value: p.success ? 1 : 0 })
        out.probe_duration_seconds.push({ labels, value: p.durationS })
        out.probe_http_status_code.push({ labels, value: p.httpCode })
        if (p.tlsExpiry !== null) out.probe_ssl_earliest_cert_expiry.push({ labels, value: p.tlsExpiry })
      }
    })
    return out
  }
}
