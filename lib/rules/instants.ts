/**
 * The one rule for instants that come from outside (API bodies and queries, agents' answers): an
 * ISO 8601 text naming a real instant both engines can store. MySQL's DATETIME(3) ends at
 * 9999-12-31 23:59:59.999 (a later one fails the insert); nothing this service keeps predates 1970.
 */

/** The earliest instant taken from outside: the Unix epoch. */
export const EARLIEST_INSTANT = new Date(0)
/** The latest instant taken from outside: the last millisecond MySQL's DATETIME(3) holds. */
export const LATEST_INSTANT = new Date(Date.UTC(9999, 11, 31, 23, 59, 59, 999))

/** Whether `ms` (since the epoch) lies within {@link EARLIEST_INSTANT} and {@link LATEST_INSTANT}. */
export function isStorableInstant(ms: number): boolean {
  return ms >= EARLIEST_INSTANT.getTime() && ms <= LATEST_INSTANT.getTime()
}

/**
 * An ISO 8601 date (`2026-11-01`, midnight UTC) or date-time with a zone (`Z` or an offset). A
 * date-time without a zone is local time in ISO 8601, which says nothing on a server: refused.
 */
const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(?:(Z)|([+-])(\d{2}):?(\d{2})))?$/i

/**
 * Parses an ISO 8601 date or zoned date-time; null when it is not one, names no real instant
 * (30 February, 25:00), or lies outside what both engines store (see {@link isStorableInstant}).
 */
export function parseIsoInstant(text: string): Date | null {
  const m = ISO.exec(text)
  if (!m) return null
  const part = (i: number) => Number(m[i] ?? 0)
  const [y, mo, d, h, mi, s, oh, om] = [part(1), part(2), part(3), part(4), part(5), part(6), part(10), part(11)]
  const frac = m[7] ?? ''
  const [z, sign] = [m[8], m[9]]
  if (mo < 1 || mo > 12 || h > 23 || mi > 59 || s > 59 || oh > 23 || om > 59) return null
  const day = new Date(0)
  day.setUTCFullYear(y, mo - 1, d)
  if (day.getUTCDate() !== d || day.getUTCMonth() !== mo - 1) return null
  const offsetMs = z !== undefined || sign === undefined ? 0 : (sign === '-' ? -1 : 1) * (oh * 60 + om) * 60_000
  const ms = Number(frac.padEnd(3, '0').slice(0, 3))
  const at = day.getTime() + ((h * 60 + mi) * 60 + s) * 1000 + ms - offsetMs
  return isStorableInstant(at) ? new Date(at) : null
}
