import { createReadStream } from 'node:fs'
import { createInterface } from 'node:readline'
import { parseArgs } from 'node:util'
import type { Config } from '../../config/index.js'
import { DomainError, normaliseDomain } from '../rules/domain.js'
import { addSite, addSites } from '../monitoring/add-sites.js'
import { parseSiteName, SiteNameError } from '../rules/site-name.js'
import { removeSite } from '../monitoring/remove-site.js'
import { currentVerdict } from '../monitoring/state/status-record.js'
import type { Db } from '../store/db.js'
import { applySettings, NO_SETTINGS, type SettingsPatch } from '../rules/site-settings.js'
import { changeSite } from '../monitoring/change-site.js'
import { listTrackedSites, type AddOutcome, type SiteEntry } from '../store/sites.js'
import { SETTINGS_HELP, SETTINGS_OPTIONS, settingsCell, settingsPatchOf } from './site-settings.js'
import { checkOfFlags, storedCheck } from './site-checks.js'
import { CommandError, UsageError, println, table, type CliIo } from './io.js'
import { MAINTENANCE_HELP, maintenanceCommand } from './maintenance.js'
import { addMonitorCommand } from './monitors.js'

export const SITES_HELP = `usage:
  site-status sites add DOMAIN [--name NAME] [settings]
                                               start tracking a domain; prints the normalised domain
  site-status sites add --kind tcp|tls|dns HOST [monitor flags]
                                               a monitor of one host (site-status monitors --help)
  site-status sites set DOMAIN [--name NAME] [settings]
                                               change a tracked site's name or settings
  site-status sites remove DOMAIN              stop tracking (history kept)
  site-status sites list                       tracked sites with their current status
  site-status sites import FILE                add many: one domain per line, optionally "domain,name";
                                               blank lines and lines starting with # are skipped;
                                               FILE - reads standard input; exits 3 if any line was rejected
${MAINTENANCE_HELP}
${SETTINGS_HELP}`

/** `--kind K` or `--kind=K` among `sites add`'s arguments: where, and how many arguments it takes. */
function kindOf(args: readonly string[]): { value: string; at: number; width: number } | undefined {
  const at = args.findIndex((a) => a === '--kind' || a.startsWith('--kind='))
  if (at === -1) return undefined
  const arg = args[at] as string
  if (arg !== '--kind') return { value: arg.slice('--kind='.length), at, width: 1 }
  return { value: args[at + 1] ?? '', at, width: 2 }
}

/** How many sites one import transaction writes: small enough to show progress, large enough to be fast. */
const IMPORT_BATCH = 500

function domainArg(positionals: string[], command: string): string {
  if (positionals.length !== 1) throw new UsageError(`sites ${command} needs one DOMAIN`)
  try {
    return normaliseDomain(positionals[0])
  } catch (err) {
    if (err instanceof DomainError) throw new CommandError(err.message)
    throw err
  }
}

export async function sitesCommand(args: string[], io: CliIo, open: () => Promise<{ db: Db; config: Config }>): Promise<number> {
  const [sub, ...rest] = args
  if (sub === undefined || sub === '--help' || sub === '-h' || rest.includes('--help')) {
    // Asked for, help is output (stdout); without a command it is a usage error (stderr, exit 2).
    println(sub === undefined ? io.stderr : io.stdout, SITES_HELP)
    return sub === undefined ? 2 : 0
  }
  const kind = sub === 'add' ? kindOf(rest) : undefined
  if (kind !== undefined && kind.value !== 'http') return addMonitorCommand(rest, io, open)
  if (kind !== undefined) rest.splice(kind.at, kind.width)
  if (sub === 'add' || sub === 'set') {
    const { values, positionals } = parseArgs({ args: rest, options: SETTINGS_OPTIONS, strict: true, allowPositionals: true })
    const domain = domainArg(positionals, sub)
    let name: string | null
    try {
      name = parseSiteName(values.name)
    } catch (err) {
      throw new UsageError(`--${(err as Error).message}`)
    }
    const given = settingsPatchOf(values)
    const check = checkOfFlags(values, (values.clear ?? []).includes('check'))
    if (sub === 'set' && name === null && Object.keys(given).length === 0 && check === undefined)
      throw new UsageError('sites set needs --name or a setting to change')
    const { db, config } = await open()
    const patch = check === undefined ? given : { ...given, check: storedCheck(check, config) }
    if (sub === 'set') return setSite({ domain, name, patch }, io, db)
    const settings = Object.keys(patch).length === 0 ? undefined : applySettings(NO_SETTINGS, patch)
    const outcome = await addSite({ db, entry: { domain, name, ...(settings ? { settings } : {}) }, now: io.now() })
    if (outcome === 'already' && settings) println(io.stderr, 'settings not changed: use sites set for a tracked site')
    println(io.stderr, { added: 'now tracking', resumed: 'tracking again', already: 'already tracked' }[outcome])
    println(io.stdout, domain)
    return 0
  }
  if (sub === 'remove') {
    const { positionals } = parseArgs({ args: rest, options: {}, strict: true, allowPositionals: true })
    const domain = domainArg(positionals, 'remove')
    const { db } = await open()
    if (!(await removeSite({ db, domain, now: io.now() }))) throw new CommandError(`${domain} is not tracked`)
    println(io.stdout, `stopped tracking ${domain} (its history is kept)`)
    return 0
  }
  if (sub === 'list') {
    parseArgs({ args: rest, options: {}, strict: true })
    const { db, config } = await open()
    const sites = await listTrackedSites({ db })
    const now = io.now()
    println(
      io.stdout,
      table(
        ['DOMAIN', 'NAME', 'STATUS', 'RESPONSE_MS', 'CHECKED_AT', 'SETTINGS'],
        sites.map((s) => {
          // The same freshness rule as the status endpoint: no check in three intervals is `unavailable`, none ever `pending`.
          const v = currentVerdict(s, now, config.checkIntervalS * 1000)
          return [
            s.domain,
            s.name,
            v.status + (v.blocked ? ' (blocked)' : '') + (v.partial ? ' (partial)' : ''),
            v.response_ms === null ? '-' : String(Math.round(v.response_ms)),
            s.checked_at?.toISOString() ?? '-',
            settingsCell(s)
          ]
        })
      )
    )
    return 0
  }
  if (sub === 'maintenance') return maintenanceCommand(rest, io, open)
  if (sub === 'import') {
    const { positionals } = parseArgs({ args: rest, options: {}, strict: true, allowPositionals: true })
    if (positionals.length !== 1) throw new UsageError('sites import needs one FILE (or - for standard input)')
    return importSites(positionals[0] as string, io, open)
  }
  throw new UsageError(`unknown sites command "${sub}"`)
}

async function setSite(
  { domain, name, patch }: { domain: string; name: string | null; patch: SettingsPatch },
  io: CliIo,
  db: Db
): Promise<number> {
  const changed = await db.transaction((trx) => changeSite({ db: trx, domain, name, patch, now: io.now() }))
  if (!changed) throw new CommandError(`${domain} is not tracked`)
  println(io.stdout, domain)
  return 0
}

interface ParsedFile {
  entries: SiteEntry[]
  bad: string[]
  duplicates: number
}

async function readImportFile(file: string, io: CliIo): Promise<ParsedFile> {
  const input = file === '-' ? process.stdin : createReadStream(file)
  const opened = new Promise<void>((resolve, reject) => {
    if (file === '-') resolve()
    else
      input
        .once('open', () => {
          resolve()
        })
        .once('error', reject)
  })
  try {
    await opened
  } catch (err) {
    throw new CommandError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`)
  }
  const seen = new Set<string>()
  const result: ParsedFile = { entries: [], bad: [], duplicates: 0 }
  let lineNo = 0
  try {
    for await (const raw of createInterface({ input, crlfDelay: Infinity })) {
      lineNo++
      const line = raw.trim()
      if (line === '' || line.startsWith('#')) continue
      const comma = line.indexOf(',')
      try {
        const domain = normaliseDomain(comma === -1 ? line : line.slice(0, comma))
        const name = comma === -1 ? null : parseSiteName(line.slice(comma + 1))
        if (seen.has(domain)) {
          result.duplicates++
          continue
        }
        seen.add(domain)
        result.entries.push({ domain, name })
      } catch (err) {
        if (!(err instanceof DomainError) && !(err instanceof SiteNameError)) throw err
        result.bad.push(`line ${lineNo}: ${err.message}`)
      }
    }
  } catch (err) {
    // A folder or an unreadable device opens but fails on read: one clear line, as for a missing file.
    const code = (err as NodeJS.ErrnoException).code
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) throw new CommandError(`cannot read ${file}: ${code}`)
    throw err
  }
  if (io.stderr.isTTY) io.stderr.write(`read ${lineNo} lines\n`)
  return result
}

async function importSites(file: string, io: CliIo, open: () => Promise<{ db: Db }>): Promise<number> {
  const { entries, bad, duplicates } = await readImportFile(file, io)
  const { db } = await open()
  const counts: Record<AddOutcome, number> = { added: 0, resumed: 0, already: 0 }
  const now = io.now()
  for (let i = 0; i < entries.length; i += IMPORT_BATCH) {
    for (const outcome of await addSites({ db, entries: entries.slice(i, i + IMPORT_BATCH), now })) counts[outcome]++
    if (io.stderr.isTTY) io.stderr.write(`\rimporting: ${Math.min(i + IMPORT_BATCH, entries.length)}/${entries.length}`)
  }
  if (io.stderr.isTTY && entries.length > 0) io.stderr.write('\n')
  for (const line of bad) println(io.stderr, line)
  println(
    io.stdout,
    `added ${counts.added}, tracking again ${counts.resumed}, already tracked ${counts.already}, duplicate lines ${duplicates}, rejected lines ${bad.length}`
  )
  return bad.length > 0 ? 3 : 0
}
