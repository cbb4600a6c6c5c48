import type { SiteStates } from '../monitoring/state/site-state.js'
import type { UptimeSource } from '../monitoring/state/status-record.js'
import type { PageDirectory, PageSites } from '../pages/page-directory.js'
import {
  meanFigure,
  NO_DATA,
  WINDOW_INDEX,
  WINDOW_MS,
  windowUptime,
  type BadgeWindow,
  type UptimeInputs,
  type WindowFigure
} from './figures.js'
import type { ResponseHistory } from './response-history.js'

/**
 * Where figure badges get their figures, one source per kind of monitor (sites, status pages; a
 * heartbeat is a monitor with outages and a first check but no response time). Every figure comes
 * from memory; an uptime figure is worked out at most once a second per monitor and window.
 */
export interface FigureSource<S> {
  /** The monitor a badge URL names (its domain or slug, as given), null when there is none: from memory, but for a first look. */
  find(name: string, at: number): S | null | Promise<S | null>
  uptime(subject: S, window: BadgeWindow, at: number): WindowFigure
  /** Absent for monitors that have no response time. */
  responseTime?(subject: S, window: BadgeWindow, at: number): WindowFigure | Promise<WindowFigure>
}

/** How long a figure worked out is reused: badges are cached for longer by anyone anyway. */
export const FIGURE_REUSE_MS = 1000
/** Monitors whose figures are kept at most; past it the memo starts over (cheaper than an LRU per hit). */
const MAX_MEMOS = 100_000

/** Figures of one monitor by window, with when each was worked out. */
class Memo {
  readonly at = [-Infinity, -Infinity, -Infinity, -Infinity]
  readonly figures: WindowFigure[] = [NO_DATA, NO_DATA, NO_DATA, NO_DATA]

  /** The figure worked out less than a second before `at`, if any. */
  kept(window: BadgeWindow, at: number): WindowFigure | undefined {
    const i = WINDOW_INDEX[window]
    const made = this.at[i] as number
    return at >= made && at - made < FIGURE_REUSE_MS ? this.figures[i] : undefined
  }

  keep(window: BadgeWindow, at: number, figure: WindowFigure): WindowFigure {
    const i = WINDOW_INDEX[window]
    this.at[i] = at
    this.figures[i] = figure
    return figure
  }
}

/** Memos by key, started over when there are too many (monitors come and go). */
class Memos<K> {
  readonly #memos = new Map<K, Memo>()

  of(key: K): Memo {
    let memo = this.#memos.get(key)
    if (memo === undefined) {
      if (this.#memos.size >= MAX_MEMOS) this.#memos.clear()
      memo = new Memo()
      this.#memos.set(key, memo)
    }
    return memo
  }
}

/** Any monitor's uptime over a window, kept a second: what a heartbeat's source can reuse as it is. */
export class UptimeFigures {
  readonly #memos = new Memos<number>()

  /** `id` tells monitors apart (the `sites` row's id). */
  of(id: number, inputs: UptimeInputs, window: BadgeWindow, at: number): WindowFigure {
    const memo = this.#memos.of(id)
    return memo.kept(window, at) ?? memo.keep(window, at, windowUptime(inputs, WINDOW_MS[window], at))
  }
}

/** Tracked web sites, named by normalised domain. */
export class SiteFigures implements FigureSource<UptimeSource> {
  readonly #states: SiteStates
  readonly history: ResponseHistory
  readonly #uptime = new UptimeFigures()

  constructor({ states, history }: { states: SiteStates; history: ResponseHistory }) {
    this.#states = states
    this.history = history
  }

  find(domain: string): UptimeSource | null {
    return this.#states.uptimeSource(domain)
  }

  uptime(site: UptimeSource, window: BadgeWindow, at: number): WindowFigure {
    return this.#uptime.of(site.id, site, window, at)
  }

  /** The mean of the site's consensus response times over the window, from its hourly series. */
  responseTime(site: UptimeSource, window: BadgeWindow, at: number): WindowFigure | Promise<WindowFigure> {
    if (site.firstCheckedAt === null) return NO_DATA
    const series = this.history.series(site.id, site.firstCheckedAt, at)
    const figure = (s: Exclude<typeof series, Promise<unknown>>): WindowFigure => {
      const i = WINDOW_INDEX[window]
      return (s.memo[i] ??= s.mean(WINDOW_MS[window], at))
    }
    return series instanceof Promise ? series.then(figure) : figure(series)
  }
}

/** Status pages, named by slug: each figure is the mean of the page's web sites', monitors and heartbeats left out (decisions.md, "Figure badges"). */
export class PageFigures implements FigureSource<PageSites> {
  readonly #directory: PageDirectory
  readonly #states: SiteStates
  readonly #sites: SiteFigures
  readonly #uptime = new WeakMap<PageSites, Memo>()
  readonly #speed = new WeakMap<PageSites, Memo>()

  constructor({ directory, states, sites }: { directory: PageDirectory; states: SiteStates; sites: SiteFigures }) {
    this.#directory = directory
    this.#states = states
    this.#sites = sites
  }

  find(slug: string, at: number): PageSites | null | Promise<PageSites | null> {
    return this.#directory.get(slug, at)
  }

  #memo(map: WeakMap<PageSites, Memo>, page: PageSites): Memo {
    let memo = map.get(page)
    if (memo === undefined) {
      memo = new Memo()
      map.set(page, memo)
    }
    return memo
  }

  /** The page's sites as the state holds them; a site added a moment ago and not yet held has no data. */
  #sources(page: PageSites): UptimeSource[] {
    const sources: UptimeSource[] = []
    for (const domain of page.domains) {
      const source = this.#states.uptimeSource(domain)
      if (source !== null) sources.push(source)
    }
    return sources
  }

  uptime(page: PageSites, window: BadgeWindow, at: number): WindowFigure {
    const memo = this.#memo(this.#uptime, page)
    return (
      memo.kept(window, at) ?? memo.keep(window, at, meanFigure(this.#sources(page).map((site) => this.#sites.uptime(site, window, at))))
    )
  }

  responseTime(page: PageSites, window: BadgeWindow, at: number): WindowFigure | Promise<WindowFigure> {
    const memo = this.#memo(this.#speed, page)
    const kept = memo.kept(window, at)
    if (kept !== undefined) return kept
    const figures = this.#sources(page).map((site) => this.#sites.responseTime(site, window, at))
    const done = (all: readonly WindowFigure[]): WindowFigure => memo.keep(window, at, meanFigure(all))
    // Only a first look at some site's series waits for reads, all at once.
    if (!figures.some((f) => f instanceof Promise)) return done(figures as WindowFigure[])
    return Promise.all(figures.map(async (f) => f)).then(done)
  }
}
