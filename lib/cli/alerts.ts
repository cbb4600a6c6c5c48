import { parseArgs } from 'node:util'
import type { Config } from '../../config/index.js'
import { parseNewPolicy, parsePolicyChange, policyChannels, type PolicyFields } from '../rules/alert-policy.js'
import { tryNormaliseDomain } from '../rules/domain.js'
import { deletePolicy, findPolicy, insertPolicy, listChannels, listPolicies, updatePolicy } from '../store/alert-config.js'
import { setPageAlertPolicy, setSiteAlerting, wouldLoop } from '../store/alert-targets.js'
import { isDuplicateKey, type Db } from '../store/db.js'
import { findSite } from '../store/sites.js'
import { CommandError, UsageError, println, table, type CliIo } from './io.js'

export const ALERTS_HELP = `usage:
  site-status alerts policy add NAME --channels IDS [--after MIN] [--remind MIN] [--escalate MIN:IDS]...
                                [--events LIST] [--no-resolved] [--window S] [--default]
                                 an alert policy; IDS comma-separated channel ids; --escalate
                                 repeatable (after MIN minutes also these channels); prints its id
  site-status alerts policy set ID [the same options; --remind none stops reminders]
  site-status alerts policy list every policy
  site-status alerts policy remove ID
  site-status alerts site DOMAIN [--policy ID|none] [--depends-on DOMAIN|none]
                                 a site's own policy, and the site whose outage silences it
  site-status alerts page SLUG --policy ID|none
                                 the policy of a status page's sites that name none`

const POLICY_OPTIONS = {
  channels: { type: 'string' },
  after: { type: 'string' },
  remind: { type: 'string' },
  escalate: { type: 'string', multiple: true },
  events: { type: 'string' },
  'no-resolved': { type: 'boolean' },
  window: { type: 'string' },
  default: { type: 'boolean' }
} as const

const ids = (text: string, option: string): number[] => {
  const parts = text.split(',').map((s) => s.trim())
  if (parts.some((p) => !/^[1-9]\d{0,9}$/.test(p))) throw new UsageError(`${option} must be comma-separated channel ids`)
  return parts.map(Number)
}
const whole = (text: string, option: string): number => {
  if (!/^\d{1,6}$/.test(text)) throw new UsageError(`${option} must be a whole number`)
  return Number(text)
}

/** The options given, as the API's body. */
function bodyOf(values: { [K in keyof typeof POLICY_OPTIONS]?: unknown }): Record<string, unknown> {
  const body: Record<string, unknown> = {}
  if (typeof values.channels === 'string') body.channels = ids(values.channels, '--channels')
  if (typeof values.after === 'string') body.after_min = whole(values.after, '--after')
  if (typeof values.remind === 'string') body.remind_every_min = values.remind === 'none' ? null : whole(values.remind, '--remind')
  if (Array.isArray(values.escalate))
    body.escalate = (values.escalate as string[]).map((step) => {
      const m = /^(\d{1,6}):(.+)$/.exec(step)
      if (!m) throw new UsageError('--escalate must be MIN:IDS, such as 15:3 or 30:3,4')
      return { after_min: Number(m[1]), channels: ids(m[2] as string, '--escalate') }
    })
  if (typeof values.events === 'string') body.events = values.events.split(',').map((s) => s.trim())
  if (values['no-resolved'] === true) body.on_resolved = false
  if (typeof values.window === 'string') body.group_window_s = whole(values.window, '--window')
  if (values.default === true) body.default = true
  return body
}

async function checkChannels(db: Db, p: PolicyFields): Promise<void> {
  const known = new Set((await listChannels({ db })).map((c) => c.id))
  const missing = policyChannels(p).find((id) => !known.has(id))
  if (missing !== undefined) throw new CommandError(`channel ${missing} does not exist`)
}

async function policyCommand(args: string[], io: CliIo, open: () => Promise<{ db: Db; config: Config }>): Promise<number> {
  const [sub, ...rest] = args
  const { values, positionals } = parseArgs({ args: rest, options: POLICY_OPTIONS, strict: true, allowPositionals: true })
  if (sub === 'list') {
    const { db } = await open()
    const rows = (await listPolicies({ db })).map((p) => [
      String(p.id),
      p.name + (p.is_default ? ' (default)' : ''),
      p.channels.join(','),
      String(p.after_min),
      p.remind_every_min === null ? '-' : String(p.remind_every_min),
      p.escalate.map((s) => `${s.after_min}:${s.channels.join(',')}`).join(' ') || '-'
    ])
    println(io.stdout, table(['ID', 'NAME', 'CHANNELS', 'AFTER', 'REMIND', 'ESCALATE'], rows))
    return 0
  }
  const [target] = positionals
  if (target === undefined) throw new UsageError(`alerts policy ${sub ?? ''} needs ${sub === 'add' ? 'a NAME' : 'an ID'}`)
  const { db } = await open()
  const write = async (fn: () => Promise<unknown>): Promise<void> => {
    try {
      await fn()
    } catch (err) {
      if (isDuplicateKey(err)) throw new CommandError('a policy with that name exists')
      throw err
    }
  }
  if (sub === 'add') {
    const parsed = parseNewPolicy({ name: target, ...bodyOf(values) })
    if (!parsed.ok) throw new UsageError(parsed.error)
    await checkChannels(db, parsed.value)
    let id = 0
    await write(async () => {
      id = (await db.transaction((trx) => insertPolicy({ db: trx, policy: parsed.value, now: io.now() }))).id
    })
    println(io.stdout, String(id))
    return 0
  }
  const id = whole(target, 'ID')
  const current = await findPolicy({ db, id })
  if (current === null) throw new CommandError(`no alert policy ${id}`)
  if (sub === 'remove') {
    await deletePolicy({ db, id })
    println(io.stdout, `removed alert policy ${id}`)
    return 0
  }
  if (sub === 'set') {
    const parsed = parsePolicyChange(current, bodyOf(values))
    if (!parsed.ok) throw new UsageError(parsed.error)
    await checkChannels(db, parsed.value)
    await write(() => db.transaction((trx) => updatePolicy({ db: trx, id, policy: parsed.value, now: io.now() })))
    println(io.stdout, `changed alert policy ${id}`)
    return 0
  }
  throw new UsageError(`unknown alerts policy command "${sub ?? ''}"`)
}

async function policyIdOf(db: Db, text: string): Promise<number | null> {
  if (text === 'none') return null
  const id = whole(text, '--policy')
  if ((await findPolicy({ db, id })) === null) throw new CommandError(`no alert policy ${id}`)
  return id
}

async function trackedSite(db: Db, raw: string): Promise<number> {
  const parsed = tryNormaliseDomain(raw)
  if (!parsed.ok) throw new UsageError(parsed.error.message)
  const site = await findSite({ db, domain: parsed.domain })
  if (site === null || site.removed_at !== null) throw new CommandError(`${parsed.domain} is not tracked`)
  return site.id
}

/** `site-status alerts policy ...|site|page`: alert policies and what uses them. */
export async function alertsCommand(args: string[], io: CliIo, open: () => Promise<{ db: Db; config: Config }>): Promise<number> {
  const [sub, ...rest] = args
  if (sub === undefined || sub === '--help' || sub === '-h' || rest.includes('--help')) {
    println(sub === undefined ? io.stderr : io.stdout, ALERTS_HELP)
    return sub === undefined ? 2 : 0
  }
  if (sub === 'policy') return policyCommand(rest, io, open)
  const { values, positionals } = parseArgs({
    args: rest,
    options: { policy: { type: 'string' }, 'depends-on': { type: 'string' } },
    strict: true,
    allowPositionals: true
  })
  if (positionals.length !== 1) throw new UsageError(`alerts ${sub} needs one ${sub === 'page' ? 'SLUG' : 'DOMAIN'}`)
  const { db } = await open()
  const policyId = values.policy === undefined ? undefined : await policyIdOf(db, values.policy)
  if (sub === 'site') {
    const siteId = await trackedSite(db, positionals[0] as string)
    let dependsOn: number | null | undefined
    if (values['depends-on'] === 'none') dependsOn = null
    else if (values['depends-on'] !== undefined) {
      dependsOn = await trackedSite(db, values['depends-on'])
      if (await wouldLoop({ db, siteId, parentId: dependsOn })) throw new CommandError('--depends-on would make a loop of dependencies')
    }
    if (policyId === undefined && dependsOn === undefined) throw new UsageError('alerts site needs --policy or --depends-on')
    await setSiteAlerting({ db, siteId, policyId, dependsOn })
    println(io.stdout, 'changed')
    return 0
  }
  if (sub === 'page') {
    if (policyId === undefined) throw new UsageError('alerts page needs --policy ID|none')
    if (!(await setPageAlertPolicy({ db, slug: positionals[0] as string, policyId })))
      throw new CommandError(`no status page ${positionals[0]}`)
    println(io.stdout, 'changed')
    return 0
  }
  throw new UsageError(`unknown alerts command "${sub}"`)
}
