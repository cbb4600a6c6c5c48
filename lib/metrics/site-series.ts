import type { SiteStates } from '../monitoring/site-state.js'

/**
 * The per-site series: blackbox_exporter's `probe_*` per site and location (same names, units and
 * meaning, labelled `domain` and `location`), and `site_status_*` per site.
 */
const FAMILIES = {
  probe_success: 'Whether the location saw the site up in its newest check (1) or not (0).',
  probe_duration_seconds: "The newest check's probe from this location, in seconds (redirects and the http fallback included).",
  probe_http_status_code: 'The HTTP status of the last response in the newest check from this location; 0 when none came.',
  probe_ssl_earliest_cert_expiry: "The leaf certificate's expiry seen by the newest https probe from this location, in Unix seconds.",
  site_status_up: 'The site is up (1) or down (0) by consensus of the locations; absent while unconfirmed or unavailable.',
  site_status_outage_ongoing: 'The site has an outage that has not ended (1) or not (0).'
} as const
type Family = keyof typeof FAMILIES

/** A label value in the text format: backslash, double quote and line feed escaped. */
function escapeLabel(value: string): string {
  return /[\\"\n]/.test(value) ? value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n') : value
}

/**
 * Writes the per-site series straight from the tracked sites' in-memory state, once per scrape:
 * nothing is updated per check, and a site no longer tracked is simply not there. They are not
 * kept in prom-client's registry, whose formatter builds an object and escapes every label of every
 * sample: at 10,000 sites x 3 locations (140,000 samples) that held the main thread for about a
 * second a scrape (docs/benchmarks.md, bench/metrics). Here each site's label is escaped once.
 */
export class SiteSeries {
  readonly #states: SiteStates
  readonly #now: () => Date

  constructor({ states, now }: { states: SiteStates; now: () => Date }) {
    this.#states = states
    this.#now = now
  }

  /** The six families in Prometheus's text format (0.0.4), each with its HELP and TYPE lines. */
  render(): string {
    const lines: Record<Family, string[]> = {
      probe_success: [],
      probe_duration_seconds: [],
      probe_http_status_code: [],
      probe_ssl_earliest_cert_expiry: [],
      site_status_up: [],
      site_status_outage_ongoing: []
    }
    const locations = new Map<string, string>()
    this.#states.eachForMetrics(this.#now(), ({ domain, status, outageOngoing, probes }) => {
      const name = escapeLabel(domain)
      const site = `{domain="${name}"}`
      if (status === 'up' || status === 'down') lines.site_status_up.push(`site_status_up${site} ${status === 'up' ? 1 : 0}`)
      lines.site_status_outage_ongoing.push(`site_status_outage_ongoing${site} ${outageOngoing ? 1 : 0}`)
      for (const p of probes) {
        let location = locations.get(p.location)
        if (location === undefined) {
          location = escapeLabel(p.location)
          locations.set(p.location, location)
        }
        const labels = `{domain="${name}",location="${location}"}`
        lines.probe_success.push(`probe_success${labels} ${p.success ? 1 : 0}`)
        lines.probe_duration_seconds.push(`probe_duration_seconds${labels} ${p.durationS}`)
        lines.probe_http_status_code.push(`probe_http_status_code${labels} ${p.httpCode}`)
        if (p.tlsExpiry !== null) lines.probe_ssl_earliest_cert_expiry.push(`probe_ssl_earliest_cert_expiry${labels} ${p.tlsExpiry}`)
      }
    })
    let text = ''
    for (const [family, help] of Object.entries(FAMILIES) as Array<[Family, string]>) {
      text += `# HELP ${family} ${help}\n# TYPE ${family} gauge\n`
      const samples = lines[family]
      if (samples.length > 0) text += `${samples.join('\n')}\n`
    }
    return text
  }
}
