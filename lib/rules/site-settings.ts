import Joi from 'joi'
import {
  applyExpectations,
  expectSchema,
  NO_EXPECTATIONS,
  sameExpectations,
  type Expectations,
  type ExpectationsPatch,
  type StatusEntry
} from './expectations.js'
import { shownCheck, type CheckSpec } from './check-spec.js'

/**
 * A site's own settings besides its name: the interval it is checked at, the expectations its
 * answers are judged by, and the request it sends with its assertions. Null (or absent in a change)
 * keeps the service's default.
 */

/** The shortest and longest interval a site may set, in seconds. */
export const MIN_INTERVAL_S = 30
export const MAX_INTERVAL_S = 3600

export interface SiteSettings {
  /** Null: CHECK_INTERVAL_S. */
  interval_s: number | null
  expect: Expectations
  /**
   * The site's own request and assertions (an http check, lib/rules/check-spec.ts) as stored: the
   * JSON of its normal form with the values of its secret headers sealed
   * (lib/monitoring/check-secrets.ts). Null: the plain web check.
   */
  check: string | null
}

/** A change: absent keys keep their value, null clears one (`expect: null` clears every expectation). */
export interface SettingsPatch {
  interval_s?: number | null
  expect?: ExpectationsPatch | null
  /** A new check, whole (stored form); null: back to the plain web check. */
  check?: string | null
}

export const NO_SETTINGS: Readonly<SiteSettings> = Object.freeze({ interval_s: null, expect: NO_EXPECTATIONS, check: null })

const INTERVAL_MESSAGE = `"interval_s" must be a whole number of seconds from ${MIN_INTERVAL_S} to ${MAX_INTERVAL_S} (null: the default)`

export const intervalSchema = Joi.number()
  .integer()
  .min(MIN_INTERVAL_S)
  .max(MAX_INTERVAL_S)
  .allow(null)
  .prefs({ convert: false })
  .messages({
    'number.base': INTERVAL_MESSAGE,
    'number.integer': INTERVAL_MESSAGE,
    'number.min': INTERVAL_MESSAGE,
    'number.max': INTERVAL_MESSAGE,
    'number.unsafe': INTERVAL_MESSAGE
  })

/**
 * A site's name and settings as the sites API, the operator tool and a configuration file take
 * them. Empty strings are let through to the name rule, so every door says the same words.
 */
export const siteFieldKeys = { name: Joi.string().allow(''), interval_s: intervalSchema, expect: expectSchema.allow(null) }

/** The settings after a change. */
export function applySettings(current: Readonly<SiteSettings>, patch: SettingsPatch): SiteSettings {
  return {
    interval_s: patch.interval_s === undefined ? current.interval_s : patch.interval_s,
    expect:
      patch.expect === undefined
        ? current.expect
        : applyExpectations(patch.expect === null ? NO_EXPECTATIONS : current.expect, patch.expect ?? {}),
    check: patch.check === undefined ? current.check : patch.check
  }
}

/** The expectations when any is set; null when none is (the probe's own rule decides alone). */
export function setExpectations(expect: Readonly<Expectations>): Readonly<Expectations> | null {
  return expect.status === null && expect.body_contains === null && expect.max_response_ms === null ? null : expect
}

/** What the status record and the sites list show as `settings`: only what is set. */
export interface SettingsView {
  interval_s?: number
  expect?: { status?: StatusEntry[]; body_contains?: string; max_response_ms?: number }
  /** The check with its secret header values masked. */
  check?: CheckSpec
}

export function settingsView({ interval_s, expect, check }: Readonly<SiteSettings>): SettingsView {
  const view: SettingsView = {}
  if (interval_s !== null) view.interval_s = interval_s
  const shown: NonNullable<SettingsView['expect']> = {}
  if (expect.status !== null) shown.status = expect.status
  if (expect.body_contains !== null) shown.body_contains = expect.body_contains
  if (expect.max_response_ms !== null) shown.max_response_ms = expect.max_response_ms
  if (Object.keys(shown).length > 0) view.expect = shown
  // The stored form's secret values are sealed; shown, they are masked all the same.
  if (check !== null) view.check = shownCheck(JSON.parse(check) as CheckSpec)
  return view
}

/** Whether two sites' settings are the same (each in its normal form). */
export function sameSettings(a: Readonly<SiteSettings>, b: Readonly<SiteSettings>): boolean {
  return a.interval_s === b.interval_s && sameExpectations(a.expect, b.expect) && a.check === b.check
}
