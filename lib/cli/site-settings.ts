import { parseArgs } from 'node:util'
import Joi from 'joi'
import { expectSchema, parseStatusList, type ExpectationsPatch } from '../rules/expectations.js'
import { intervalSchema, settingsView, type SettingsPatch, type SiteSettings } from '../rules/site-settings.js'
import { validated } from '../rules/validated.js'
import { UsageError } from './io.js'
import { CHECK_HELP, CHECK_OPTIONS } from './site-checks.js'

/** The settings flags of `sites add` and `sites set`: the same fields and rules as the sites API. */
export const SETTINGS_OPTIONS = {
  name: { type: 'string' },
  interval: { type: 'string' },
  'expect-status': { type: 'string' },
  'body-contains': { type: 'string' },
  'max-response-ms': { type: 'string' },
  clear: { type: 'string', multiple: true },
  ...CHECK_OPTIONS
} as const

export const SETTINGS_HELP = `settings (sites add and sites set):
  --interval S             check every S seconds (30-3600) instead of CHECK_INTERVAL_S
  --expect-status LIST     healthy status codes and ranges after redirects, e.g. 200-299,401
  --body-contains TEXT     a literal, case-sensitive text the first 64 KiB of the body must hold
  --max-response-ms N      over N ms the site is up but slow
  --clear FIELD            clear one: interval, expect-status, body-contains, max-response-ms
                           or expect (all three expectations), or check; may be repeated
${CHECK_HELP}`

const CLEARABLE = ['interval', 'expect-status', 'body-contains', 'max-response-ms', 'expect', 'check'] as const

type Values = ReturnType<typeof parseArgs<{ options: typeof SETTINGS_OPTIONS; allowPositionals: true }>>['values']

/** A whole number as the API takes it; anything else is left as text for the schema to refuse. */
const number = (text: string): number | string => (/^-?\d+$/.test(text) ? Number(text) : text)

/** The flags as a change of settings, validated by the API's own schemas (and worded as its 400s). */
export function settingsPatchOf(values: Values): SettingsPatch {
  const clear = new Set(values.clear ?? [])
  for (const field of clear) {
    if (!(CLEARABLE as readonly string[]).includes(field))
      throw new UsageError(`--clear takes one of ${CLEARABLE.join(', ')}, not "${field}"`)
  }
  const patch: SettingsPatch = {}
  const interval = clear.has('interval') ? null : values.interval === undefined ? undefined : number(values.interval)
  if (interval !== undefined) patch.interval_s = check(intervalSchema, interval) as number | null
  if (clear.has('expect')) {
    patch.expect = null
    return patch
  }
  const expect: Record<string, unknown> = {}
  const given = (flag: keyof Values, key: string, value: (text: string) => unknown): void => {
    const text = values[flag]
    if (clear.has(flag)) expect[key] = null
    else if (typeof text === 'string') expect[key] = value(text)
  }
  given('expect-status', 'status', parseStatusList)
  given('body-contains', 'body_contains', (text) => text)
  given('max-response-ms', 'max_response_ms', number)
  if (Object.keys(expect).length > 0) patch.expect = check(expectSchema, expect) as ExpectationsPatch
  return patch
}

function check(schema: Joi.Schema, value: unknown): unknown {
  const result = validated<unknown>(schema, value)
  if (!result.ok) throw new UsageError(result.error)
  return result.value
}

/** The settings as one `sites list` cell: `every 60s; status 200-299,401; contains "Sign in"; slow over 2000ms`. */
export function settingsCell(settings: Readonly<SiteSettings>): string {
  const view = settingsView(settings)
  const parts: string[] = []
  if (view.interval_s !== undefined) parts.push(`every ${view.interval_s}s`)
  if (view.expect?.status) parts.push(`status ${view.expect.status.join(',')}`)
  if (view.expect?.body_contains !== undefined) parts.push(`contains ${JSON.stringify(view.expect.body_contains)}`)
  if (view.expect?.max_response_ms !== undefined) parts.push(`slow over ${view.expect.max_response_ms}ms`)
  if (view.check?.type === 'http') parts.push(`${view.check.method} ${view.check.path}, ${view.check.assertions.length} assertions`)
  return parts.length === 0 ? '-' : parts.join('; ')
}
