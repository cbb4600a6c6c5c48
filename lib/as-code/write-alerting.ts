import type { ChannelDecl, ConfigFile, PolicyDecl } from '../rules/config-file.js'
import type { ConfigPlan, PlanItem } from '../rules/config-plan.js'
import { deleteChannel, deletePolicy, insertChannel, insertPolicy, updateChannel, updatePolicy } from '../store/alert-config.js'
import { markManagedBy, readStoredChannels, readStoredPolicies } from '../store/config-resources.js'
import type { Db } from '../store/db.js'
import { generateSecret, type SecretBox } from '../webhooks/secret-box.js'

/**
 * Writes the channels and alert policies of a plan inside the apply's transaction, before the
 * sites (a site names its policy) and removes the pruned ones after them. Names are resolved to
 * ids here, against what the file declares and what is stored.
 */

const itemsOf = (plan: ConfigPlan, resource: PlanItem['resource']): PlanItem[] => plan.items.filter((i) => i.resource === resource)

/** The box secrets are sealed with; an apply that writes one without it is a setup mistake. */
export function boxFor(box: SecretBox | undefined): SecretBox {
  if (box === undefined) throw new Error('applying a file that writes secrets needs the secret box')
  return box
}

/** Channel ids by name, what is stored (after this apply's writes) included. */
export async function channelIds(db: Db): Promise<Map<string, number>> {
  const ids = new Map<string, number>()
  for (const c of await readStoredChannels({ db, open: null })) if (!ids.has(c.name)) ids.set(c.name, c.id)
  return ids
}

function sealedSecrets(box: SecretBox, decl: ChannelDecl, signing: string | null): string | null {
  const secrets = decl.kind === 'webhook' ? { ...decl.secrets, secret: signing ?? generateSecret() } : decl.secrets
  return Object.keys(secrets).length === 0 ? null : box.seal(JSON.stringify(secrets))
}

/** Creates and changes the plan's channels; report targets are set once every channel exists. */
export async function writeChannels(trx: Db, file: ConfigFile, plan: ConfigPlan, box: SecretBox | undefined, now: Date): Promise<void> {
  const declared = new Map(file.channels.map((c) => [c.name, c]))
  const items = itemsOf(plan, 'channel').filter((i) => i.action !== 'remove')
  if (items.length === 0) return
  const stored = new Map((await readStoredChannels({ db: trx, open: null })).map((c) => [c.name, c]))
  const created: number[] = []
  for (const item of items) {
    const decl = declared.get(item.key) as ChannelDecl
    const old = stored.get(item.key)
    if (item.action === 'create' || old === undefined) {
      const row = await insertChannel({
        db: trx,
        name: decl.name,
        kind: decl.kind,
        config: decl.config,
        secret: sealedSecrets(boxFor(box), decl, null),
        reportTo: null,
        now
      })
      created.push(row.id)
      continue
    }
    let signing: string | null = null
    const sealed: { secret?: unknown } | undefined = await trx('alert_channels').where({ id: old.id }).first('secret')
    if (decl.kind === 'webhook' && typeof sealed?.secret === 'string') {
      const opened = JSON.parse(boxFor(box).open(sealed.secret)) as { secret?: unknown }
      signing = typeof opened.secret === 'string' ? opened.secret : null
    }
    const secretsChange = item.changes.some((c) => c.field.startsWith('config.'))
    await updateChannel({
      db: trx,
      id: old.id,
      fields: { config: decl.config, ...(secretsChange ? { secret: sealedSecrets(boxFor(box), decl, signing) } : {}) },
      now
    })
  }
  await markManagedBy({ db: trx, table: 'alert_channels', column: 'id', keys: created })
  const ids = await channelIds(trx)
  for (const item of items.filter((i) => i.action === 'create' || i.changes.some((c) => c.field === 'report_to'))) {
    const decl = declared.get(item.key) as ChannelDecl
    await updateChannel({
      db: trx,
      id: ids.get(decl.name) as number,
      fields: { report_to: decl.report_to === null ? null : (ids.get(decl.report_to) ?? null) },
      now
    })
  }
}

/** Creates and changes the plan's policies, their channels named by name. */
export async function writePolicies(trx: Db, file: ConfigFile, plan: ConfigPlan, now: Date): Promise<void> {
  const items = itemsOf(plan, 'alert_policy').filter((i) => i.action !== 'remove')
  if (items.length === 0) return
  const declared = new Map(file.alert_policies.map((p) => [p.name, p]))
  const channels = await channelIds(trx)
  const stored = new Map((await readStoredPolicies({ db: trx })).map((p) => [p.name, p.id]))
  const ids = (names: readonly string[]): number[] => names.map((n) => channels.get(n) as number)
  const created: number[] = []
  for (const item of items) {
    const p = declared.get(item.key) as PolicyDecl
    const policy = {
      name: p.name,
      channels: ids(p.channels),
      events: p.events,
      after_min: p.after_min,
      remind_every_min: p.remind_every_min,
      escalate: p.escalate.map((s) => ({ after_min: s.after_min, channels: ids(s.channels) })),
      on_resolved: p.on_resolved,
      group_window_s: p.group_window_s,
      is_default: p.default
    }
    const id = stored.get(p.name)
    if (id === undefined) created.push((await insertPolicy({ db: trx, policy, now })).id)
    else await updatePolicy({ db: trx, id, policy, now })
  }
  await markManagedBy({ db: trx, table: 'alert_policies', column: 'id', keys: created })
}

/** Removes the pruned policies, then the pruned channels (a policy may name them until then). */
export async function removeAlerting(trx: Db, plan: ConfigPlan, now: Date): Promise<void> {
  const policies = new Map((await readStoredPolicies({ db: trx })).map((p) => [p.name, p.id]))
  for (const item of itemsOf(plan, 'alert_policy').filter((i) => i.action === 'remove'))
    await deletePolicy({ db: trx, id: policies.get(item.key) as number })
  const channels = await channelIds(trx)
  for (const item of itemsOf(plan, 'channel').filter((i) => i.action === 'remove'))
    await deleteChannel({ db: trx, id: channels.get(item.key) as number, now })
}

/**
 * What the file names that neither it nor the database holds: a policy's channel, a channel's
 * report target, a site's policy; and a channel whose kind would change (delete it and declare
 * it anew under another name). Each as `resource key: field: message`.
 */
export function unknownNames(file: ConfigFile, stored: { channels: Map<string, string>; policies: ReadonlySet<string> }): string[] {
  const channels = new Set([...file.channels.map((c) => c.name), ...stored.channels.keys()])
  const policies = new Set([...file.alert_policies.map((p) => p.name), ...stored.policies])
  const problems: string[] = []
  for (const c of file.channels) {
    if (c.report_to !== null && !channels.has(c.report_to))
      problems.push(`channel ${c.name}: report_to: no channel is named ${JSON.stringify(c.report_to)}`)
    const kind = stored.channels.get(c.name)
    if (kind !== undefined && kind !== c.kind)
      problems.push(`channel ${c.name}: kind: a channel's kind cannot change (${kind} to ${c.kind}); declare a new channel`)
  }
  for (const p of file.alert_policies) {
    for (const name of [...p.channels, ...p.escalate.flatMap((s) => s.channels)])
      if (!channels.has(name)) problems.push(`alert policy ${p.name}: channels: no channel is named ${JSON.stringify(name)}`)
  }
  for (const s of file.sites) {
    if (s.alert_policy !== null && !policies.has(s.alert_policy))
      problems.push(`site ${s.domain}: alert_policy: no alert policy is named ${JSON.stringify(s.alert_policy)}`)
  }
  return [...new Set(problems)]
}
