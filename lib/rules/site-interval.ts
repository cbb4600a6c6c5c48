import { MIN_INTERVAL_S } from './site-settings.js'

/**
 * A site is checked at its own interval (`sites.interval_s`) when it has one, otherwise at the
 * service's CHECK_INTERVAL_S.
 */

/** The shortest interval a site may have of its own, in seconds: the sites API's bound. */
export const SHORTEST_SITE_INTERVAL_S = MIN_INTERVAL_S

/** The interval a site is checked at, in ms: its own, or `defaultMs` (CHECK_INTERVAL_S) when it has none. */
export function siteIntervalMs(intervalS: number | null | undefined, defaultMs: number): number {
  return intervalS === null || intervalS === undefined ? defaultMs : intervalS * 1000
}
