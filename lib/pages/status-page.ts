import { isPlainHost } from '../rules/domain.js'
import { PAGE_STATE_SENTENCES, type PageState } from '../rules/page-state.js'
import { pageBadgeEmbeds, pageEmbedCode } from './embed.js'
import { humanDuration, humanPercent, humanTime, statusLabel } from './format.js'
import type { RenderCache } from './render-cache.js'
import type {
  StatusPageDay,
  StatusPageHeartbeatView,
  StatusPageIncident,
  StatusPageMonitorView,
  StatusPageSiteView,
  StatusPageView
} from './status-page-view.js'

/**
 * The render cache's keys of a status page's answers, exactly their request paths: all of them
 * show its sites' state, and all are forgotten together.
 */
export function statusPageKeys(slug: string): { html: string; json: string; feed: string } {
  return { html: `/status/${slug}`, json: `/status/${slug}.json`, feed: `/status/${slug}/feed.atom` }
}

/** Drops every kept render of the status page `slug`: one of its sites changed. */
export function forgetStatusPage(renders: RenderCache, slug: string): void {
  for (const key of Object.values(statusPageKeys(slug))) renders.forget(key)
}

/**
 * The source a status page's logo is loaded from, for its CSP's `img-src`: the scheme, host and port
 * of an absolute http(s) URL whose host is a plain name or address. The URL parser lets a host hold
 * `*`, `;`, `,` and quotes, which would widen the policy or add a directive: such a logo gets none
 * (the API refuses it too; a page stored before that rule shows no logo).
 */
export function logoOrigin(logoUrl: string | null): string | null {
  if (logoUrl === null) return null
  try {
    const url = new URL(logoUrl)
    if ((url.protocol !== 'https:' && url.protocol !== 'http:') || !isPlainHost(url.hostname)) return null
    return `${url.protocol}//${url.hostname}${url.port === '' ? '' : `:${url.port}`}`
  } catch {
    return null
  }
}

/**
 * A day's bar colour: `up` from 99.9 %, `dip` from 99 %, `low` from 95 %, `bad` below; `none`
 * when nothing of the day was monitored (no data is not 100 %). A day with maintenance that would
 * be `up` or `none` is `maint`: planned work is not a clean day, and an outage's colour outweighs it.
 */
export function dayClass(uptime: number | null, maintenanceSeconds = 0): string {
  if (maintenanceSeconds > 0 && (uptime === null || uptime >= 99.9)) return 'maint'
  if (uptime === null) return 'none'
  if (uptime >= 99.9) return 'up'
  if (uptime >= 99) return 'dip'
  return uptime >= 95 ? 'low' : 'bad'
}

/** A day's bar in words: its date, uptime and outages ("2026-11-20: 75 % uptime, 1 outage, 6 h down"). */
export function dayText(day: StatusPageDay, today: boolean): string {
  const date = today ? `${day.date} (today so far)` : day.date
  const maintenance = day.maintenance_seconds > 0 ? `, ${humanDuration(day.maintenance_seconds)} maintenance` : ''
  if (day.uptime_percent === null)
    return `${date}: ${maintenance === '' ? 'no data' : `maintenance (${humanDuration(day.maintenance_seconds)})`}`
  const outages =
    day.outages === 0 ? 'no outage' : `${day.outages} ${day.outages === 1 ? 'outage' : 'outages'}, ${humanDuration(day.down_seconds)} down`
  return `${date}: ${humanPercent(day.uptime_percent)} uptime, ${outages}${maintenance}`
}

/** A site's or a monitor's state in words (the site page's label), with maintenance and slowness said. */
function siteState(site: Pick<StatusPageSiteView, 'status' | 'partial' | 'slow' | 'maintenance'>): { label: string; state: string } {
  if (site.maintenance !== undefined) return { label: `maintenance until ${humanTime(site.maintenance.until)}`, state: 'maintenance' }
  const label = statusLabel({ status: site.status, blocked: false, partial: site.partial })
  return { label: site.slow ? `${label} (slow)` : label, state: site.status }
}

/** A heartbeat's state in words, and the sites' status class that colours it. */
const HEARTBEAT_STATES: Record<StatusPageHeartbeatView['state'], { label: string; state: string }> = {
  new: { label: 'waiting for its first run', state: 'pending' },
  up: { label: 'up', state: 'up' },
  late: { label: 'late', state: 'unconfirmed' },
  down: { label: 'down', state: 'down' },
  paused: { label: 'paused', state: 'unavailable' }
}

/** A monitor's kind as the page names it. */
const KIND_LABELS: Record<StatusPageMonitorView['kind'], string> = { tcp: 'TCP', tls: 'TLS', dns: 'DNS' }

const bars = (days: readonly StatusPageDay[]): Array<{ c: string; t: string }> =>
  days.map((day, i) => ({ c: dayClass(day.uptime_percent, day.maintenance_seconds), t: dayText(day, i === days.length - 1) }))

/** The CSS class of the page's state sentence. */
const STATE_CLASSES: Record<PageState, string> = {
  operational: 'up',
  degraded: 'unconfirmed',
  'partial outage': 'down',
  'major outage': 'down',
  maintenance: 'maintenance'
}

function incident(i: StatusPageIncident): Record<string, unknown> {
  return {
    name: i.name,
    started: humanTime(i.started_at),
    startedIso: i.started_at,
    ended: i.ended_at === null ? null : humanTime(i.ended_at),
    endedIso: i.ended_at,
    duration: humanDuration(i.duration_seconds)
  }
}

/**
 * The status page's template context: every value is text for Handlebars to escape, or a number.
 * A day's bar is its class and its words only: a page of 50 sites draws 4,500 of them.
 */
export function statusPageContext({ view, publicUrl }: { view: StatusPageView; publicUrl: string }): Record<string, unknown> {
  return {
    title: view.title,
    standalone: true,
    stylesheet: '/static/status-page.css',
    script: '/static/status-page.js',
    feed: { href: `/status/${view.slug}/feed.atom`, title: `${view.title}: incidents` },
    page: {
      slug: view.slug,
      title: view.title,
      description: view.description,
      logo: logoOrigin(view.logo_url) === null ? null : view.logo_url,
      state: STATE_CLASSES[view.state],
      sentence: PAGE_STATE_SENTENCES[view.state],
      generated: humanTime(view.generated_at),
      generatedIso: view.generated_at
    },
    // Monitors, then heartbeats, follow the sites in the same list, drawn alike: the page's script updates them all.
    sites: [
      ...view.sites.map((site) => ({
        name: site.name,
        anchor: site.anchor,
        uptime: site.uptime_percent === null ? null : humanPercent(site.uptime_percent),
        ...siteState(site),
        cause: site.cause,
        days: bars(site.days)
      })),
      ...view.monitors.map((monitor) => ({
        name: monitor.name,
        kind: KIND_LABELS[monitor.kind],
        anchor: monitor.anchor,
        uptime: monitor.uptime_percent === null ? null : humanPercent(monitor.uptime_percent),
        ...siteState(monitor),
        cause: null,
        days: bars(monitor.days)
      })),
      ...view.heartbeats.map((heartbeat) => ({
        name: heartbeat.name,
        anchor: heartbeat.anchor,
        uptime: heartbeat.uptime_percent === null ? null : humanPercent(heartbeat.uptime_percent),
        ...HEARTBEAT_STATES[heartbeat.state],
        cause: null,
        days: bars(heartbeat.days)
      }))
    ],
    ongoing: view.incidents.filter((i) => i.ended_at === null).map(incident),
    past: view.incidents.filter((i) => i.ended_at !== null).map(incident),
    anyIncident: view.incidents.length > 0,
    embed: pageEmbedCode({ publicUrl, slug: view.slug, title: view.title }),
    badges: pageBadgeEmbeds({ publicUrl, slug: view.slug, title: view.title })
  }
}
