import Joi from 'joi'
import type { CheckSpec, DnsCheck, TcpCheck, TlsCheck } from './check-spec.js'
import { maintenanceWindowSchema, MAX_WINDOWS_PER_SITE, windowDecl, type MaintenanceWindow, type WindowDecl } from './maintenance.js'
import { monitorBody } from './monitor-fields.js'

/**
 * Monitors of kind tcp, tls and dns in a configuration file (lib/rules/monitor.ts): judged by the
 * monitors API's own Joi rules, named by their slug, which a file must give (a monitor renamed
 * stays the same monitor). Their checks hold no secrets.
 */

/** A monitor as the file declares it, in normal form. */
export interface MonitorDecl {
  slug: string
  name: string
  /** The host it probes. */
  target: string
  check: TcpCheck | TlsCheck | DnsCheck
  interval_s: number | null
  max_response_ms: number | null
  /** Its maintenance windows, in the order given; the file's list replaces the stored one, as a site's. */
  maintenance: WindowDecl[]
}

export interface MonitorProblem {
  path: Array<string | number>
  message: string
}

export const MAX_FILE_MONITORS = 10_000

const monitorField = (key: string): Joi.Schema => monitorBody.extract(key)

export const monitorSchema = Joi.object({
  slug: monitorField('slug').required(),
  name: monitorField('name').required(),
  target: monitorField('target').required(),
  check: monitorField('check').required(),
  interval_s: monitorField('interval_s'),
  max_response_ms: monitorField('max_response_ms'),
  maintenance: Joi.array().items(maintenanceWindowSchema).max(MAX_WINDOWS_PER_SITE)
}).unknown(false)

interface RawMonitor {
  slug: string
  name: string
  target: string
  check: CheckSpec
  interval_s?: number | null
  max_response_ms?: number | null
  maintenance?: MaintenanceWindow[]
}

/** A check with its keys in one order, so that a file and the store compare equal whatever order each wrote them in. */
export function orderedCheck<T extends CheckSpec>(check: T): T {
  return Object.fromEntries(Object.entries(check).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) as T
}

/** The file's monitors in normal form (sorted by slug); problems pushed with where they are. */
export function checkMonitors(raw: readonly RawMonitor[], problems: MonitorProblem[]): MonitorDecl[] {
  const seen = new Map<string, number>()
  const out: MonitorDecl[] = []
  raw.forEach((m, i) => {
    if (seen.has(m.slug)) {
      problems.push({
        path: ['monitors', i, 'slug'],
        message: `the slug "${m.slug}" is declared twice (also monitors[${seen.get(m.slug)}])`
      })
      return
    }
    seen.set(m.slug, i)
    out.push({
      slug: m.slug,
      name: m.name,
      target: m.target,
      check: orderedCheck(m.check as MonitorDecl['check']),
      interval_s: m.interval_s ?? null,
      max_response_ms: m.max_response_ms ?? null,
      maintenance: (m.maintenance ?? []).map(windowDecl)
    })
  })
  return out.sort((a, b) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0))
}
