import type { CurrentStatus } from '../monitoring/state/status-record.js'
import type { PageState } from '../rules/page-state.js'
import { isLogoName, LOGO_NAMES, type LogoName } from './logos.js'

export const BADGE_STYLES = ['flat', 'flat-square', 'plastic', 'for-the-badge'] as const
export type BadgeStyle = (typeof BADGE_STYLES)[number]

/** Longest `label` override accepted, and longest site name used as the label before falling back to `status`. */
export const MAX_LABEL_LENGTH = 64

/** What a badge says, independent of how it is drawn. Colours are shields.io's named colours. */
export interface BadgeContent {
  label: string
  message: string
  color: 'green' | 'red' | 'yellow' | 'orange' | 'lightgrey' | 'blue'
}

export interface BadgeOptions {
  style: BadgeStyle
  /** Replaces the label; '' draws the message alone. */
  label?: string
  /** One of the built-in logos (lib/badge/logos.ts), drawn left of the label. */
  logo?: LogoName
}

export class BadgeOptionError extends Error {
  override name = 'BadgeOptionError'
}

const COLORS: Record<CurrentStatus['status'], BadgeContent['color']> = {
  up: 'green',
  down: 'red',
  unconfirmed: 'yellow',
  unavailable: 'lightgrey',
  pending: 'lightgrey'
}

const NOTES = ['blocked', 'partial', 'slow'] as const

/** Each status's message, indexed by blocked (1) + partial (2) + slow (4): made once, not per hit. */
const MESSAGES = Object.fromEntries(
  Object.keys(COLORS).map((status) => [
    status,
    Array.from({ length: 2 ** NOTES.length }, (_, bits) => {
      const notes = NOTES.filter((_note, i) => (bits & (1 << i)) !== 0)
      return notes.length === 0 ? status : `${status} (${notes.join(', ')})`
    })
  ])
) as Record<CurrentStatus['status'], string[]>

/** The default label, and the label of a domain nobody tracks. */
export const GENERIC_LABEL = 'status'

/**
 * Label: the site's name (a name too long for a badge, or no site at all, gives `status`), unless
 * the caller overrides it. Message: the status, with blocked, partial and slow noted in brackets, or
 * `not tracked`. Colour: by status alone. During a maintenance window, whatever the status:
 * `maintenance` in blue (a planned outage is not news to whoever looks at the badge).
 */
export function describeBadge(site: CurrentStatus | null, override?: string): BadgeContent {
  const fallback = site === null || site.name.length > MAX_LABEL_LENGTH ? GENERIC_LABEL : site.name
  const label = override ?? fallback
  if (site === null) return { label, message: 'not tracked', color: 'lightgrey' }
  if (site.maintenance === true) return { label, message: 'maintenance', color: 'blue' }
  const notes = (site.blocked ? 1 : 0) + (site.partial ? 2 : 0) + (site.slow ? 4 : 0)
  return { label, message: MESSAGES[site.status][notes] as string, color: COLORS[site.status] }
}

const PAGE_COLORS: Readonly<Record<PageState, BadgeContent['color']>> = {
  operational: 'green',
  degraded: 'yellow',
  'partial outage': 'orange',
  'major outage': 'red',
  maintenance: 'blue'
}

/**
 * A status page's badge: labelled with the page's title (`status` for a title too long for a
 * badge) unless the caller overrides it; the message is the page's state, in its colour.
 */
export function describePageBadge(title: string, state: PageState, override?: string): BadgeContent {
  const label = override ?? (title.length > MAX_LABEL_LENGTH ? GENERIC_LABEL : title)
  return { label, message: state, color: PAGE_COLORS[state] }
}

/** The options of a badge URL that names none: always this object, so that a hit can tell at a glance. */
export const DEFAULT_OPTIONS: BadgeOptions = Object.freeze({ style: 'flat' })

/**
 * Reads `style`, `label` and `logo` from a badge URL's query. Other parameters are ignored, as
 * shields.io ignores them: embedders add cache busters such as `?v=2`.
 */
export function parseBadgeOptions(query: Record<string, unknown>): BadgeOptions {
  const { style, label, logo } = query
  if (style === undefined && label === undefined && logo === undefined) return DEFAULT_OPTIONS
  if (style !== undefined && (typeof style !== 'string' || !(BADGE_STYLES as readonly string[]).includes(style))) {
    throw new BadgeOptionError(`"style" must be one of ${BADGE_STYLES.join(', ')}`)
  }
  if (label !== undefined) {
    if (typeof label !== 'string') throw new BadgeOptionError('"label" must be given once')
    if (label.length > MAX_LABEL_LENGTH) throw new BadgeOptionError(`"label" must be at most ${MAX_LABEL_LENGTH} characters long`)
    if (/\p{Cc}/u.test(label)) throw new BadgeOptionError('"label" must not contain control characters')
  }
  if (logo !== undefined && !isLogoName(logo)) throw new BadgeOptionError(`"logo" must be one of ${LOGO_NAMES.join(', ')}`)
  return {
    style: (style as BadgeStyle | undefined) ?? 'flat',
    ...(label === undefined ? {} : { label }),
    ...(logo === undefined ? {} : { logo })
  }
}
