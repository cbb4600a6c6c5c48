/**
 * Wall-clock time in an IANA zone through Intl (Node's full ICU), without a time zone library.
 * A "wall" value is a local date and time written as epoch milliseconds as if it were UTC.
 */

const formatters = new Map<string, Intl.DateTimeFormat>()

/** IANA names are letters, digits and `_ + - /`; offsets such as `+01:00` are not zones. */
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+\-/]{0,63}$/

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone)
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric'
    })
    formatters.set(zone, f)
  }
  return f
}

/** The zone's canonical IANA name (`europe/berlin` is `Europe/Berlin`), or null when Intl knows no such zone. */
export function canonicalZone(zone: string): string | null {
  if (!ZONE_NAME.test(zone)) return null
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone
  } catch {
    return null
  }
}

/** The local date and time in `zone` at an instant, as a wall value (whole seconds). */
export function wallClock(at: number, zone: string): number {
  const fields: Record<string, number> = {}
  for (const part of formatter(zone).formatToParts(new Date(at))) fields[part.type] = Number(part.value)
  const field = (name: string): number => fields[name] ?? 0
  return Date.UTC(field('year'), field('month') - 1, field('day'), field('hour'), field('minute'), field('second'))
}

const DAY_MS = 86_400_000

/**
 * The instant a wall time names in `zone`, by RFC 5545's rule (iCalendar, 3.3.5): a time that
 * happens twice (clocks going back) is its first occurrence; a time skipped (clocks going forward)
 * is read with the offset before the gap, so 02:30 on a day that jumps from 02:00 to 03:00 is 03:30.
 */
export function zonedInstant(wall: number, zone: string): number {
  const before = wall - (wallClock(wall - DAY_MS, zone) - (wall - DAY_MS))
  const after = wall - (wallClock(wall + DAY_MS, zone) - (wall + DAY_MS))
  const valid = [before, after].filter((t) => wallClock(t, zone) === wall)
  return valid.length === 0 ? before : Math.min(...valid)
}
