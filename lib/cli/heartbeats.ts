import { parseArgs } from 'node:util'
import type { Config } from '../../config/index.js'
import { addHeartbeat, changedSettings, changeHeartbeat, removeHeartbeat } from '../heartbeats/manage.js'
import type { HeartbeatSchedule } from '../rules/heartbeat.js'
import { heartbeatBody, heartbeatPatch, slugFromName } from '../rules/heartbeat-fields.js'
import { isDuplicateKey, type Db } from '../store/db.js'
import { listAllHeartbeats } from '../store/heartbeats.js'
import { CommandError, UsageError, println, table, type CliIo } from './io.js'

export const HEARTBEATS_HELP = `usage:
  site-status heartbeats add NAME (--every S | --cron EXPR --zone ZONE) --grace S [--slug SLUG]
                                 [--max-runtime S]
                                 a heartbeat due every S seconds (30 to a year) after its last
                                 success, or at the next time the cron expression fires in the
                                 IANA zone ('0 3 * * *' Europe/Berlin); down after the grace (5 s
                                 at least); prints its ping URL, shown only now
  site-status heartbeats list    every heartbeat: slug, name, state, schedule, grace, last ping
  site-status heartbeats set SLUG [--name NAME] [--every S | --cron EXPR --zone ZONE] [--grace S]
                                 [--max-runtime S|none]
                                 change a heartbeat's settings
  site-status heartbeats pause SLUG [--resume]
                                 pause a heartbeat (no deadlines, its outage closed); a ping or
                                 --resume resumes it
  site-status heartbeats remove SLUG
                                 remove a heartbeat; its outages stay as history`

const options = {
  every: { type: 'string' },
  cron: { type: 'string' },
  zone: { type: 'string' },
  grace: { type: 'string' },
  slug: { type: 'string' },
  name: { type: 'string' },
  'max-runtime': { type: 'string' },
  resume: { type: 'boolean' }
} as const

function seconds(text: string | undefined, flag: string): number | undefined {
  if (text === undefined) return undefined
  if (!/^\d{1,9}$/.test(text)) throw new UsageError(`--${flag} must be a whole number of seconds`)
  return Number(text)
}

/** The schedule the flags give, for the API's rules to judge; none when no schedule flag is given. */
function scheduleFlags(values: { every?: string; cron?: string; zone?: string }): { schedule?: Record<string, unknown> } {
  if (values.every === undefined && values.cron === undefined && values.zone === undefined) return {}
  if (values.every !== undefined && (values.cron !== undefined || values.zone !== undefined))
    throw new UsageError('give --every, or --cron with --zone, not both')
  if (values.every !== undefined) return { schedule: { every_s: seconds(values.every, 'every') } }
  if (values.cron === undefined || values.zone === undefined) throw new UsageError('--cron and --zone go together')
  return { schedule: { cron: values.cron, zone: values.zone } }
}

/** A schedule as the list shows it: `86400s`, or the expression and its zone. */
const scheduleText = (schedule: HeartbeatSchedule): string =>
  'cron' in schedule ? `${schedule.cron} (${schedule.zone})` : `${schedule.every_s}s`

interface Judged {
  name?: string
  slug?: string
  schedule?: HeartbeatSchedule
  grace_s?: number
  max_runtime_s?: number | null
  paused?: boolean
}

function judged(schema: typeof heartbeatBody, body: Record<string, unknown>): Judged {
  const result = schema.validate(body, { abortEarly: true })
  if (result.error) throw new UsageError(result.error.message)
  return result.value as Judged
}

function one(positionals: string[], command: string, what: string): string {
  if (positionals.length !== 1) throw new UsageError(`heartbeats ${command} needs one ${what}`)
  return positionals[0] as string
}

/** `site-status heartbeats add|list|set|pause|remove`: the heartbeats API for the operator, judged by the same rules. */
export async function heartbeatsCommand(args: string[], io: CliIo, open: () => Promise<{ db: Db; config: Config }>): Promise<number> {
  const [sub, ...rest] = args
  if (sub === undefined || sub === '--help' || sub === '-h' || rest.includes('--help')) {
    println(sub === undefined ? io.stderr : io.stdout, HEARTBEATS_HELP)
    return sub === undefined ? 2 : 0
  }
  const { values, positionals } = parseArgs({ args: rest, options, strict: true, allowPositionals: true })
  const maxRuntime = values['max-runtime'] === 'none' ? null : seconds(values['max-runtime'], 'max-runtime')
  if (sub === 'add') {
    const name = one(positionals, 'add', 'NAME (quote it if it has spaces)')
    const body = judged(heartbeatBody, {
      name,
      ...(values.slug === undefined ? {} : { slug: values.slug }),
      ...scheduleFlags(values),
      ...(values.grace === undefined ? {} : { grace_s: seconds(values.grace, 'grace') }),
      ...(maxRuntime === undefined ? {} : { max_runtime_s: maxRuntime })
    }) as Required<Pick<Judged, 'name' | 'schedule' | 'grace_s'>> & Judged
    const slug = body.slug ?? slugFromName(body.name)
    if (slug === '') throw new UsageError('--slug is needed when the name has no letters or digits')
    const { db, config } = await open()
    const settings = { name: body.name, schedule: body.schedule, grace_s: body.grace_s, max_runtime_s: body.max_runtime_s ?? null }
    const added = await addHeartbeat({ db, slug, settings, now: io.now() }).catch((err: unknown) => {
      if (isDuplicateKey(err)) throw new CommandError(`a heartbeat named ${slug} exists`)
      throw err
    })
    println(io.stderr, `heartbeat ${slug} added; its ping URL (shown only now):`)
    println(io.stdout, `${config.publicUrl}/ping/${added.token}`)
    return 0
  }
  if (sub === 'list') {
    if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`)
    const { db } = await open()
    const rows = (await listAllHeartbeats({ db })).map((h) => [
      h.slug,
      h.name,
      h.state,
      scheduleText(h.schedule),
      `${h.grace_s}s`,
      h.last_ping_at?.toISOString() ?? 'never'
    ])
    println(io.stdout, table(['SLUG', 'NAME', 'STATE', 'SCHEDULE', 'GRACE', 'LAST PING'], rows))
    return 0
  }
  if (sub === 'set' || sub === 'pause') {
    const slug = one(positionals, sub, 'SLUG')
    const raw =
      sub === 'pause'
        ? { paused: values.resume !== true }
        : {
            ...(values.name === undefined ? {} : { name: values.name }),
            ...scheduleFlags(values),
            ...(values.grace === undefined ? {} : { grace_s: seconds(values.grace, 'grace') }),
            ...(maxRuntime === undefined ? {} : { max_runtime_s: maxRuntime })
          }
    const body = judged(heartbeatPatch, raw)
    const patch = changedSettings(body)
    const { db } = await open()
    const row = await changeHeartbeat({ db, slug, patch, now: io.now() })
    if (row === null) throw new CommandError(`no heartbeat ${slug}`)
    println(io.stdout, `heartbeat ${slug}: ${row.state}`)
    return 0
  }
  if (sub === 'remove') {
    const slug = one(positionals, 'remove', 'SLUG')
    const { db } = await open()
    if (!(await removeHeartbeat({ db, slug, now: io.now() }))) throw new CommandError(`no heartbeat ${slug}`)
    println(io.stdout, `removed heartbeat ${slug}`)
    return 0
  }
  throw new UsageError(`unknown heartbeats command "${sub}"`)
}
