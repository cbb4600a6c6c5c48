import Joi from 'joi'
import { validated, type Validated } from './validated.js'
import { clipIntervals, intervalAt, unionIntervals, type Interval } from './intervals.js'
import { parseIsoInstant } from './instants.js'
import { canonicalZone, wallClock, zonedInstant } from './zoned-time.js'

/**
 * Maintenance windows: one-off [from, to) or weekly at a local time in an IANA zone. During one, no
 * outage opens and the time is left out of uptime and SLA; checks still run and are recorded.
 */

const MINUTE_MS = 60_000
const DAY_MS = 86_400_000

export const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const
export type Weekday = (typeof WEEKDAYS)[number]

/** The longest weekly window: the whole week. */
export const MAX_WEEKLY_MINUTES = 7 * 24 * 60
/** The longest one-off window: 31 days, a whole month's SLA and no more. */
export const MAX_ONE_OFF_MS = 31 * DAY_MS
/**
 * Windows a site may have: recording a check works out the maintenance from all its site's windows,
 * so their number bounds that cost. Ended one-off windows count until removed (they keep their time
 * out of past SLA answers).
 */
export const MAX_WINDOWS_PER_SITE = 100
/** How far ahead `maintenanceAt` follows windows that chain into one another to find the end. */
export const UNTIL_HORIZON_MS = 35 * DAY_MS

/** A weekly window: starts every `day` at `time` (HH:MM, local in `zone`) and lasts `duration_minutes` of elapsed time. */
export interface WeeklySchedule {
  day: Weekday
  time: string
  duration_minutes: number
  zone: string
}

/** A window in its normal form: one-off or weekly, with the reason shown while it is in force. */
export type MaintenanceWindow = { from: Date; to: Date; reason: string | null } | { weekly: WeeklySchedule; reason: string | null }

const instant = (name: string) =>
  Joi.any()
    .custom((value: unknown, helpers) => {
      const at = typeof value === 'string' ? parseIsoInstant(value) : null
      return at === null ? helpers.error('any.invalid') : at
    })
    .messages({ 'any.invalid': `"${name}" must be an ISO 8601 date-time with a time zone from 1970 to 9999, such as 2026-11-01T02:00:00Z` })

const weeklySchema = Joi.object({
  day: Joi.string()
    .valid(...WEEKDAYS)
    .required()
    .messages({ 'any.only': '"weekly.day" must be one of mon, tue, wed, thu, fri, sat, sun', 'any.required': '"weekly.day" is required' }),
  time: Joi.string()
    .pattern(/^([01]\d|2[0-3]):[0-5]\d$/)
    .required()
    .messages({
      'string.base': '"weekly.time" must be a local time HH:MM, such as 02:00',
      'string.empty': '"weekly.time" must be a local time HH:MM, such as 02:00',
      'string.pattern.base': '"weekly.time" must be a local time HH:MM, such as 02:00',
      'any.required': '"weekly.time" is required'
    }),
  duration_minutes: Joi.number()
    .integer()
    .min(1)
    .max(MAX_WEEKLY_MINUTES)
    .required()
    .messages({
      'number.base': `"weekly.duration_minutes" must be a whole number of minutes from 1 to ${MAX_WEEKLY_MINUTES}`,
      'number.integer': `"weekly.duration_minutes" must be a whole number of minutes from 1 to ${MAX_WEEKLY_MINUTES}`,
      'number.min': `"weekly.duration_minutes" must be a whole number of minutes from 1 to ${MAX_WEEKLY_MINUTES}`,
      'number.max': `"weekly.duration_minutes" must be a whole number of minutes from 1 to ${MAX_WEEKLY_MINUTES}`,
      'any.required': '"weekly.duration_minutes" is required'
    }),
  zone: Joi.any()
    .required()
    .custom((value: unknown, helpers) => {
      const zone = typeof value === 'string' ? canonicalZone(value) : null
      return zone === null ? helpers.error('any.invalid') : zone
    })
    .messages({
      'any.invalid': '"weekly.zone" must be an IANA time zone such as Europe/Berlin or UTC',
      'any.required': '"weekly.zone" is required'
    })
})
  .unknown(false)
  .messages({
    'object.base': '"weekly" must be an object with "day", "time", "duration_minutes" and "zone"',
    'object.unknown': '"weekly" may hold only "day", "time", "duration_minutes" and "zone", not "{{#child}}"'
  })

const WINDOW_SHAPE =
  'a maintenance window has either "from" and "to", or "weekly" with "day", "time", "duration_minutes" and "zone"; "reason" is optional'

/**
 * The body of `POST /api/v1/sites/{domain}/maintenance` and the operator tool's window: validated
 * values are in their normal form (Dates, the zone's canonical name, `reason` null when absent).
 */
export const maintenanceWindowSchema = Joi.object({
  from: instant('from'),
  to: instant('to'),
  weekly: weeklySchema,
  reason: Joi.string()
    .max(200)
    .pattern(/^\P{Cc}+$/u)
    .allow(null)
    .default(null)
    .messages({
      'string.base': '"reason" must be 1 to 200 printable characters',
      'string.empty': '"reason" must be 1 to 200 printable characters',
      'string.max': '"reason" must be 1 to 200 printable characters',
      'string.pattern.base': '"reason" must be 1 to 200 printable characters'
    })
})
  .xor('from', 'weekly')
  .prefs({ convert: false })
  .and('from', 'to')
  .nand('to', 'weekly')
  .unknown(false)
  .custom((value: { from?: Date; to?: Date }, helpers) => {
    if (value.from === undefined || value.to === undefined) return value
    if (value.from.getTime() >= value.to.getTime()) return helpers.error('window.order')
    if (value.to.getTime() - value.from.getTime() > MAX_ONE_OFF_MS) return helpers.error('window.length')
    return value
  })
  .messages({
    'object.base': WINDOW_SHAPE,
    'object.missing': WINDOW_SHAPE,
    'object.xor': WINDOW_SHAPE,
    'object.and': WINDOW_SHAPE,
    'object.nand': WINDOW_SHAPE,
    'object.unknown': `${WINDOW_SHAPE}; "{{#child}}" is not one of its fields`,
    'window.order': '"from" must be before "to"',
    'window.length': '"to" must be at most 31 days after "from"'
  })

export type ParsedWindow = Validated<MaintenanceWindow>

/** Validates a value outside a route (the operator tool): its normal form, or the 400 message. */
export function parseMaintenanceWindow(input: unknown): ParsedWindow {
  return validated<MaintenanceWindow>(maintenanceWindowSchema, input)
}

function weeklyOccurrences(w: WeeklySchedule, from: number, to: number): Interval[] {
  const durationMs = w.duration_minutes * MINUTE_MS
  const [hh = 0, mm = 0] = w.time.split(':').map(Number)
  const weekday = WEEKDAYS.indexOf(w.day)
  // Local days from one before the earliest start that could still reach `from`, to one after `to`.
  let day = Math.floor(wallClock(from - durationMs, w.zone) / DAY_MS) * DAY_MS - DAY_MS
  const lastDay = Math.floor(wallClock(to, w.zone) / DAY_MS) * DAY_MS + DAY_MS
  day += ((weekday - new Date(day).getUTCDay() + 7) % 7) * DAY_MS
  const found: Interval[] = []
  for (; day <= lastDay; day += 7 * DAY_MS) {
    const start = zonedInstant(day + (hh * 60 + mm) * MINUTE_MS, w.zone)
    if (start < to && start + durationMs > from) found.push({ from: start, to: start + durationMs })
  }
  return found
}

/** The occurrences of one window that overlap [from, to), whole (not cut to it), in time order. */
export function windowOccurrences(window: MaintenanceWindow, from: number, to: number): Interval[] {
  if ('weekly' in window) return weeklyOccurrences(window.weekly, from, to)
  const s = window.from.getTime()
  const e = window.to.getTime()
  return s < to && e > from ? [{ from: s, to: e }] : []
}

/** The time under maintenance inside [from, to): the windows' union as sorted, disjoint intervals. */
export function maintenanceIntervals(windows: readonly MaintenanceWindow[], from: number, to: number): Interval[] {
  return clipIntervals(unionIntervals(windows.flatMap((w) => windowOccurrences(w, from, to))), from, to)
}

/** The maintenance in force: when it ends and why. */
export interface MaintenanceNow {
  /** The end of the maintenance that holds `at`, windows that overlap or touch joined (looked for up to 35 days ahead). */
  until: number
  /** The reason of the window in force that started first; null when it gave none. */
  reason: string | null
}

/** The maintenance in force at `at`, or null; windows hold their start and not their end. */
export function maintenanceAt(windows: readonly MaintenanceWindow[], at: number): MaintenanceNow | null {
  let first: { from: number; reason: string | null } | null = null
  for (const w of windows) {
    for (const o of windowOccurrences(w, at, at + 1)) {
      if (first === null || o.from < first.from) first = { from: o.from, reason: w.reason }
    }
  }
  if (first === null) return null
  const ahead = unionIntervals(windows.flatMap((w) => windowOccurrences(w, at, at + UNTIL_HORIZON_MS)))
  return { until: intervalAt(ahead, at)?.to ?? at, reason: first.reason }
}

/**
 * Whether an outage may open at `at`: not during maintenance. Only opening is held back: an outage
 * already open stays open and closes as usual, and a site still down when the window ends opens
 * one at its next down check.
 */
export function mayOpenOutage(windows: readonly MaintenanceWindow[], at: number): boolean {
  return windows.every((w) => windowOccurrences(w, at, at + 1).length === 0)
}

/** A maintenance window as a configuration file writes it: one-off (ISO 8601 instants) or weekly. */
export type WindowDecl = { from: string; to: string; reason: string | null } | { weekly: WeeklySchedule; reason: string | null }

/** A window in the file's normal form. */
export function windowDecl(w: MaintenanceWindow): WindowDecl {
  return 'weekly' in w
    ? { weekly: { ...w.weekly }, reason: w.reason }
    : { from: w.from.toISOString(), to: w.to.toISOString(), reason: w.reason }
}

/** A file's window as stored. */
export function windowOfDecl(w: WindowDecl): MaintenanceWindow {
  return 'weekly' in w ? { weekly: w.weekly, reason: w.reason } : { from: new Date(w.from), to: new Date(w.to), reason: w.reason }
}
