import { parseArgs } from 'node:util'
import { DomainError, normaliseDomain } from '../rules/domain.js'
import { addMaintenanceWindow, listSiteMaintenanceWindows, removeMaintenanceWindow } from '../monitoring/maintenance-windows.js'
import { MAX_WINDOWS_PER_SITE, parseMaintenanceWindow } from '../rules/maintenance.js'
import type { Db } from '../store/db.js'
import type { StoredWindow } from '../store/maintenance.js'
import { CommandError, UsageError, println, table, type CliIo } from './io.js'

export const MAINTENANCE_HELP = `  site-status sites maintenance add DOMAIN --from ISO --to ISO [--reason TEXT]
  site-status sites maintenance add DOMAIN --weekly-day DAY --time HH:MM --duration MINUTES --zone ZONE [--reason TEXT]
                                               a maintenance window, one-off [from, to) or weekly at a local
                                               time in an IANA zone (DAY mon..sun); prints its id. Checks go
                                               on, no outage opens, and the time is left out of uptime and SLA
  site-status sites maintenance list DOMAIN    the site's maintenance windows
  site-status sites maintenance remove DOMAIN ID
                                               remove a maintenance window`

const SHAPE = 'sites maintenance add needs either --from and --to, or --weekly-day, --time, --duration and --zone'

/** The rule's messages name the API's fields; here they name the options. */
const OPTION_NAMES: ReadonlyArray<[string, string]> = [
  ['"weekly.day"', '--weekly-day'],
  ['"weekly.time"', '--time'],
  ['"weekly.duration_minutes"', '--duration'],
  ['"weekly.zone"', '--zone'],
  ['"from"', '--from'],
  ['"to"', '--to'],
  ['"reason"', '--reason']
]

function domainOf(text: string | undefined): string {
  try {
    return normaliseDomain(text)
  } catch (err) {
    if (err instanceof DomainError) throw new CommandError(err.message)
    throw err
  }
}

/** A window in a line: what the list shows and the addition confirms. */
export function describeWindow(w: StoredWindow): string {
  if ('weekly' in w) return `weekly ${w.weekly.day} ${w.weekly.time} ${w.weekly.zone} for ${w.weekly.duration_minutes} min`
  return `${w.from.toISOString()} to ${w.to.toISOString()}`
}

/** The request body the options say, in the API's own shape, for the rule to judge. */
function windowBody(values: Record<string, string | undefined>): Record<string, unknown> {
  const { from, to, reason } = values
  const weekly = { day: values['weekly-day'], time: values.time, duration: values.duration, zone: values.zone }
  const isWeekly = Object.values(weekly).some((v) => v !== undefined)
  if (isWeekly === (from !== undefined || to !== undefined)) throw new UsageError(SHAPE)
  const body: Record<string, unknown> = reason === undefined ? {} : { reason }
  if (!isWeekly) {
    if (from === undefined || to === undefined) throw new UsageError('--from and --to go together')
    return { ...body, from, to }
  }
  const minutes = weekly.duration !== undefined && /^\d{1,6}$/.test(weekly.duration) ? Number(weekly.duration) : weekly.duration
  const schedule = Object.fromEntries(
    Object.entries({ day: weekly.day, time: weekly.time, duration_minutes: minutes, zone: weekly.zone }).filter(([, v]) => v !== undefined)
  )
  return { ...body, weekly: schedule }
}

/** `site-status sites maintenance add|list|remove DOMAIN ...`: the API's maintenance routes, for the operator. */
export async function maintenanceCommand(args: string[], io: CliIo, open: () => Promise<{ db: Db }>): Promise<number> {
  const [sub, ...rest] = args
  if (sub === 'add') {
    const text = { type: 'string' } as const
    const { values, positionals } = parseArgs({
      args: rest,
      options: { from: text, to: text, 'weekly-day': text, time: text, duration: text, zone: text, reason: text },
      strict: true,
      allowPositionals: true
    })
    if (positionals.length !== 1) throw new UsageError('sites maintenance add needs one DOMAIN')
    const domain = domainOf(positionals[0])
    const parsed = parseMaintenanceWindow(windowBody(values))
    if (!parsed.ok) throw new UsageError(OPTION_NAMES.reduce((m, [field, option]) => m.replaceAll(field, option), parsed.error))
    const { db } = await open()
    const added = await addMaintenanceWindow({ db, domain, window: parsed.value, now: io.now() })
    if (!added.ok) {
      if (added.reason === 'not_tracked') throw new CommandError(`${domain} is not tracked`)
      throw new CommandError(
        `${domain} already has ${MAX_WINDOWS_PER_SITE} maintenance windows, the most a site may have; remove one first`
      )
    }
    println(io.stderr, `maintenance window added to ${domain}: ${describeWindow(added.window)}`)
    println(io.stdout, String(added.window.id))
    return 0
  }
  if (sub === 'list') {
    const { positionals } = parseArgs({ args: rest, options: {}, strict: true, allowPositionals: true })
    if (positionals.length !== 1) throw new UsageError('sites maintenance list needs one DOMAIN')
    const domain = domainOf(positionals[0])
    const { db } = await open()
    const windows = await listSiteMaintenanceWindows({ db, domain })
    if (windows === null) throw new CommandError(`${domain} is not tracked`)
    println(
      io.stdout,
      table(
        ['ID', 'WINDOW', 'REASON'],
        windows.map((w) => [String(w.id), describeWindow(w), w.reason ?? '-'])
      )
    )
    return 0
  }
  if (sub === 'remove') {
    const { positionals } = parseArgs({ args: rest, options: {}, strict: true, allowPositionals: true })
    const [domainText, idText] = positionals
    if (positionals.length !== 2 || !/^[1-9]\d{0,14}$/.test(idText ?? '')) {
      throw new UsageError('sites maintenance remove needs a DOMAIN and a window ID (a whole number)')
    }
    const domain = domainOf(domainText)
    const { db } = await open()
    const outcome = await removeMaintenanceWindow({ db, domain, id: Number(idText), now: io.now() })
    if (outcome === 'not_tracked') throw new CommandError(`${domain} is not tracked`)
    if (outcome === 'no_window') throw new CommandError(`${domain} has no maintenance window ${idText}`)
    println(io.stdout, `removed maintenance window ${idText} of ${domain}`)
    return 0
  }
  throw new UsageError(sub === undefined ? 'sites maintenance needs add, list or remove' : `unknown sites maintenance command "${sub}"`)
}
