import { setImmediate as nextTurn } from 'node:timers/promises'
import type { LocationProbe, SiteMetrics, SiteStates } from '../monitoring/state/site-state.js'

/**
 * The per-site series: blackbox_exporter's `probe_*` per site and location (same names, units and
 * meaning, labelled `domain` and `location`), and `site_status_*` per site.
 */
const FAMILIES = {
  probe_success: 'Whether the location saw the site up in its newest check (1) or not (0).',
  probe_duration_seconds: "The newest check's probe from this location, in seconds (redirects and the http fallback included).",
  probe_http_status_code: 'The HTTP status of the last response in the newest check from this location; 0 when none came.',
  probe_ssl_earliest_cert_expiry: "The leaf certificate's expiry seen by the newest https probe from this location, in Unix seconds.",
  probe_dns_lookup_time_seconds: "A dns monitor's newest lookup from this location, in seconds (the location's resolvers asked).",
  site_status_up: 'The site is up (1) or down (0) by consensus of the locations; absent while unconfirmed, unavailable or pending.',
  site_status_outage_ongoing: 'The site has an outage that has not ended (1) or not (0).',
  site_status_maintenance: 'The site is in a maintenance window (1) or not (0); no outage opens during one.',
  site_status_slow: 'The site is up but slow (1: its last two checks over its max_response_ms) or not (0).'
} as const
type Family = keyof typeof FAMILIES

/** Sites written per chunk; the event loop gets a turn between chunks. */
const SITES_PER_CHUNK = 1000

/** A label value in the text format: backslash, double quote and line feed escaped. */
function escapeLabel(value: string): string {
  return /[\\"\n]/.test(value) ? value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n') : value
}

/**
 * A site as one scrape writes it: its labels' text escaped once, for all the families: `domain` for
 * a web site; `monitor` and `kind` for a monitor of kind tcp, tls or dns (its slug: no escaping).
 */
interface Row {
  labels: string
  site: SiteMetrics
}

function labelsOf(site: SiteMetrics): string {
  return site.monitor === null ? `domain="${escapeLabel(site.domain)}"` : `monitor="${site.monitor.slug}",kind="${site.monitor.kind}"`
}

/** One probe's sample line of a `probe_*` family, or null when the probe has no value for it. */
type ProbeLine = (labels: string, p: LocationProbe) => string | null
const PROBE_LINES: Partial<Record<Family, ProbeLine>> = {
  probe_success: (labels, p) => `probe_success${labels} ${p.success ? 1 : 0}\n`,
  probe_duration_seconds: (labels, p) => `probe_duration_seconds${labels} ${p.durationS}\n`,
  probe_http_status_code: (labels, p) => `probe_http_status_code${labels} ${p.httpCode}\n`,
  probe_dns_lookup_time_seconds: (labels, p) => `probe_dns_lookup_time_seconds${labels} ${p.durationS}\n`,
  probe_ssl_earliest_cert_expiry: (labels, p) => (p.tlsExpiry === null ? null : `probe_ssl_earliest_cert_expiry${labels} ${p.tlsExpiry}\n`)
}

/** Whether a family has a value for the site's kind: an HTTP status for a web site, a lookup time for a dns monitor. */
function probedBy(family: Family, site: SiteMetrics): boolean {
  if (family === 'probe_http_status_code') return site.monitor === null
  if (family === 'probe_dns_lookup_time_seconds') return site.monitor?.kind === 'dns'
  return true
}

/**
 * Writes the per-site series straight from the tracked sites' in-memory state, once per scrape:
 * nothing is updated per check, and a site no longer tracked is simply not there. They are not kept
 * in prom-client's registry, whose formatter builds an object and escapes every label of every
 * sample, and hands back the whole exposition as one string: at 10,000 sites x 3 locations (140,000
 * samples, 13 MB) that string and its garbage hold the main thread for a long time (docs/decisions.md,
 * Metrics). Here the state is read once, each site's label escaped once, and the text is produced in
 * chunks of {@link SITES_PER_CHUNK} sites, with the event loop free between them, so that API
 * requests are answered during a scrape and no chunk lives long.
 */
export class SiteSeries {
  readonly #states: SiteStates
  readonly #now: () => Date

  constructor({ states, now }: { states: SiteStates; now: () => Date }) {
    this.#states = states
    this.#now = now
  }

  /** The families in Prometheus's text format (0.0.4), each with its HELP and TYPE lines, in chunks. */
  async *chunks(): AsyncGenerator<string> {
    const rows: Row[] = []
    this.#states.eachForMetrics(this.#now(), (site) => {
      rows.push({ labels: labelsOf(site), site })
    })
    const locations = new Map<string, string>()
    const locationLabel = (location: string): string => {
      let escaped = locations.get(location)
      if (escaped === undefined) {
        escaped = escapeLabel(location)
        locations.set(location, escaped)
      }
      return escaped
    }
    for (const [family, help] of Object.entries(FAMILIES) as Array<[Family, string]>) {
      let chunk = `# HELP ${family} ${help}\n# TYPE ${family} gauge\n`
      const probeLine = PROBE_LINES[family]
      for (let start = 0; start < rows.length; start += SITES_PER_CHUNK) {
        for (const { labels, site } of rows.slice(start, start + SITES_PER_CHUNK)) {
          if (probeLine !== undefined) {
            if (!probedBy(family, site)) continue
            for (const p of site.probes) {
              const line = probeLine(`{${labels},location="${locationLabel(p.location)}"}`, p)
              if (line !== null) chunk += line
            }
          } else if (family === 'site_status_up') {
            if (site.status === 'up' || site.status === 'down') chunk += `site_status_up{${labels}} ${site.status === 'up' ? 1 : 0}\n`
          } else if (family === 'site_status_outage_ongoing') {
            chunk += `site_status_outage_ongoing{${labels}} ${site.outageOngoing ? 1 : 0}\n`
          } else if (family === 'site_status_maintenance') {
            chunk += `site_status_maintenance{${labels}} ${site.maintenance ? 1 : 0}\n`
          } else {
            chunk += `site_status_slow{${labels}} ${site.slow ? 1 : 0}\n`
          }
        }
        yield chunk
        chunk = ''
        await nextTurn()
      }
      if (chunk !== '') yield chunk
    }
  }
}
