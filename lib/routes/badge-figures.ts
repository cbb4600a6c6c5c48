import Boom from '@hapi/boom'
import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi'
import { DEFAULT_OPTIONS, type BadgeContent, type BadgeOptions } from '../badge/describe.js'
import {
  BADGE_WINDOWS,
  DEFAULT_WINDOWS,
  figureLabel,
  NO_DATA,
  parseThresholds,
  parseWindow,
  RESPONSE_THRESHOLDS_MS,
  responseTimeContent,
  uptimeContent,
  WINDOW_INDEX,
  type BadgeWindow,
  type FigureKind,
  type WindowFigure
} from '../badge/figures.js'
import type { BadgeRenderer, RenderedBadge } from '../badge/renderer.js'
import type { FigureSource } from '../badge/sources.js'
import { badgeOptions, BADGE_ROUTE, JSON_TYPE, optionFailure, sendBadge, SVG } from './badge.js'

/**
 * A family of figure badges: uptime and, when its monitors have one, response time, each as SVG
 * and as shields.io endpoint JSON, under one base path. Sites, status pages and heartbeats are
 * families; a new kind of monitor is one more call of {@link figureBadgeRoutes} with its source.
 */
export interface FigureFamily<S> {
  /** The status badge's path, e.g. `/api/badge/{domain}`: the figures are `{base}/uptime` and so on. */
  base: string
  /** The path parameter naming the monitor. */
  param: string
  /** The name as the source looks it up (normalised); throw a Boom 400 for a name that cannot be one. */
  name?: (raw: string) => string
  source: FigureSource<S>
  /**
   * A name with no monitor behind it: a grey `not tracked` badge with status 200 and `no-store`
   * (site badges: an image proxy shows it, and keeps nothing), or a 404 with this message.
   */
  missing: 'badge' | { notFound: string }
}

/** The figure a URL asks for, from its query: the window, and the colour thresholds of a response time. */
function figureQuery(request: Request, kind: FigureKind): { window: BadgeWindow; thresholds?: readonly [number, number, number] } {
  try {
    const fallback = kind === 'uptime' ? DEFAULT_WINDOWS.uptime : DEFAULT_WINDOWS.responseTime
    const window = parseWindow(request.query.window, BADGE_WINDOWS, fallback)
    return kind === 'uptime' ? { window } : { window, thresholds: parseThresholds(request.query.thresholds) }
  } catch (err) {
    return optionFailure(err)
  }
}

export function figureBadgeRoutes<S>(
  family: FigureFamily<S>,
  { renderer, now }: { renderer: BadgeRenderer; now: () => Date }
): ServerRoute[] {
  const { source } = family
  const kinds: FigureKind[] = source.responseTime === undefined ? ['uptime'] : ['uptime', 'response-time']

  const route = (kind: FigureKind, endpoint: boolean): ServerRoute => {
    /** What one hit asked for: read once, handed along (no closures made per hit). */
    interface Ask {
      request: Request
      h: ResponseToolkit
      options: BadgeOptions
      window: BadgeWindow
      thresholds?: readonly [number, number, number]
      at: number
    }
    const render = ({ request, options }: Ask, content: BadgeContent): RenderedBadge => {
      const custom = options.label !== undefined
      return endpoint
        ? // shields.io applies its own default style unless the URL names one.
          renderer.endpoint(content, request.query.style === undefined ? undefined : options.style, custom, options.logo)
        : renderer.svg(content, options.style, custom, options.logo)
    }
    /**
     * Each figure's badge as most embeds ask for it (no style, label, logo or thresholds), by window:
     * a figure object lives a second or more, and its hits then skip putting words together.
     */
    const usual = BADGE_WINDOWS.map(() => new WeakMap<WindowFigure, RenderedBadge>())
    const answer = (ask: Ask, figure: WindowFigure) => {
      const { request, h, window, thresholds, options } = ask
      const plain = options === DEFAULT_OPTIONS && (thresholds === undefined || thresholds === RESPONSE_THRESHOLDS_MS)
      const kept = plain ? usual[WINDOW_INDEX[window]]?.get(figure) : undefined
      if (kept !== undefined) return sendBadge(request, h, kept, endpoint ? JSON_TYPE : SVG)
      const content =
        kind === 'uptime' ? uptimeContent(figure, window, options.label) : responseTimeContent(figure, window, thresholds, options.label)
      const badge = render(ask, content)
      if (plain) usual[WINDOW_INDEX[window]]?.set(figure, badge)
      return sendBadge(request, h, badge, endpoint ? JSON_TYPE : SVG)
    }
    const found = (ask: Ask, subject: S | null) => {
      if (subject === null) {
        if (family.missing !== 'badge') throw Boom.notFound(family.missing.notFound)
        const content: BadgeContent = {
          label: ask.options.label ?? figureLabel(kind, ask.window),
          message: 'not tracked',
          color: 'lightgrey'
        }
        return sendBadge(ask.request, ask.h, render(ask, content), endpoint ? JSON_TYPE : SVG, false)
      }
      const figure =
        kind === 'uptime' ? source.uptime(subject, ask.window, ask.at) : (source.responseTime?.(subject, ask.window, ask.at) ?? NO_DATA)
      return figure instanceof Promise ? figure.then((f) => answer(ask, f)) : answer(ask, figure)
    }
    return {
      method: 'GET',
      path: `${family.base}/${kind}${endpoint ? '/endpoint' : ''}`,
      options: BADGE_ROUTE,
      handler: (request, h) => {
        const options = badgeOptions(request)
        const { window, thresholds } = figureQuery(request, kind)
        const ask: Ask = { request, h, options, window, thresholds, at: now().getTime() }
        const raw = request.params[family.param] as string
        const subject = source.find(family.name === undefined ? raw : family.name(raw), ask.at)
        return subject instanceof Promise ? subject.then((s) => found(ask, s)) : found(ask, subject)
      }
    }
  }
  return kinds.flatMap((kind) => [route(kind, false), route(kind, true)])
}
