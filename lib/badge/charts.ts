import type { SiteStates } from '../monitoring/state/site-state.js'
import type { UptimeSource } from '../monitoring/state/status-record.js'
import type { ChartWindow } from './figures.js'
import { renderedBody, type RenderedBadge } from './renderer.js'
import type { HourlySeries, ResponseHistory } from './response-history.js'
import { sparkline } from './sparkline.js'

/** A chart as last drawn, and what it was drawn from: drawn again only when one of these moves. */
interface Drawn {
  /** The minute it was drawn in: its description names it, and an ongoing outage grows with it. */
  minute: number
  /** The series' version (-1: none). */
  version: number
  /** The site's outages then, and the newest one's end (null: ongoing, -1: none). */
  outages: number
  lastEnd: number | null
  chart: RenderedBadge
}

/** Charts kept at most (two windows per site); past it the kept ones start over. */
const MAX_CHARTS = 20_000

/**
 * Sites' response-time charts, drawn from the hourly series and the outages in memory, and drawn
 * again only when the series was read again, an outage began or ended, or the minute turned. A
 * drawing that comes out the same keeps its gzip and ETag, so a cache revalidating gets 304 until
 * the chart itself changes.
 */
export class SiteCharts {
  readonly #states: SiteStates
  readonly #history: ResponseHistory
  readonly #drawn = new Map<string, Drawn>()

  constructor({ states, history }: { states: SiteStates; history: ResponseHistory }) {
    this.#states = states
    this.#history = history
  }

  chart(domain: string, site: UptimeSource, window: ChartWindow, at: number): RenderedBadge | Promise<RenderedBadge> {
    const series = site.firstCheckedAt === null ? null : this.#history.series(site.id, site.firstCheckedAt, at)
    return series instanceof Promise
      ? series.then((s) => this.#chart(domain, site, window, at, s))
      : this.#chart(domain, site, window, at, series)
  }

  #chart(domain: string, site: UptimeSource, window: ChartWindow, at: number, series: HourlySeries | null): RenderedBadge {
    const key = `${site.id}\u0000${window}`
    const kept = this.#drawn.get(key)
    const minute = Math.floor(at / 60_000)
    const version = series?.version ?? -1
    const last = site.outages[site.outages.length - 1]
    const lastEnd = last === undefined ? -1 : (last.ended_at?.getTime() ?? null)
    if (kept?.minute === minute && kept.version === version && kept.outages === site.outages.length && kept.lastEnd === lastEnd) {
      return kept.chart
    }
    const name = this.#states.current(domain, new Date(at))?.name ?? domain
    const body = sparkline({ series, outages: site.outages, window, at, name, domain })
    const chart = kept !== undefined && kept.chart.body === body ? kept.chart : renderedBody(body)
    if (kept === undefined && this.#drawn.size >= MAX_CHARTS) this.#drawn.clear()
    this.#drawn.set(key, { minute, version, outages: site.outages.length, lastEnd, chart })
    return chart
  }
}
