import { addHeartbeat, changedSettings, changeHeartbeat, removeHeartbeat, type HeartbeatChange } from '../heartbeats/manage.js'
import type { ConfigFile, HeartbeatDecl, WebhookDecl } from '../rules/config-file.js'
import type { ConfigPlan, PlanItem } from '../rules/config-plan.js'
import { markManagedBy } from '../store/config-resources.js'
import type { Db } from '../store/db.js'
import { latestEventId } from '../store/events.js'
import type { HeartbeatSettings } from '../store/heartbeats.js'
import { deleteWebhook, insertWebhook, listWebhooks, updateWebhook } from '../store/webhooks.js'
import { generateSecret, type SecretBox } from '../webhooks/secret-box.js'
import { boxFor } from './write-alerting.js'

/**
 * Writes the heartbeats and webhooks of a plan inside the apply's transaction, through the same
 * operations their APIs use (nested in it as savepoints). A new heartbeat's ping token is made and
 * shown to nobody: `heartbeats rotate` gives one. A new webhook without a secret in the file gets
 * one made, as over the API.
 */

const itemsOf = (plan: ConfigPlan, resource: PlanItem['resource']): PlanItem[] => plan.items.filter((i) => i.resource === resource)

/** A declared heartbeat as the heartbeats API's change: its schedule mapped by the API's own mapping. */
function heartbeatChange(h: HeartbeatDecl): HeartbeatChange {
  return {
    name: h.name,
    schedule: h.schedule as HeartbeatChange['schedule'],
    grace_s: h.grace_s,
    max_runtime_s: h.max_runtime_s
  }
}

export async function writeHeartbeats(trx: Db, file: ConfigFile, plan: ConfigPlan, now: Date): Promise<number> {
  const declared = new Map(file.heartbeats.map((h) => [h.slug, h]))
  const created: string[] = []
  let changed = 0
  for (const item of itemsOf(plan, 'heartbeat')) {
    if (item.action === 'remove') {
      if (await removeHeartbeat({ db: trx, slug: item.key, now })) changed++
      continue
    }
    const settings = changedSettings(heartbeatChange(declared.get(item.key) as HeartbeatDecl))
    if (item.action === 'create') {
      await addHeartbeat({ db: trx, slug: item.key, settings: settings as HeartbeatSettings, now })
      created.push(item.key)
    } else await changeHeartbeat({ db: trx, slug: item.key, patch: settings, now })
    changed++
  }
  await markManagedBy({ db: trx, table: 'heartbeats', column: 'slug', keys: created })
  return changed
}

export async function writeWebhooks(trx: Db, file: ConfigFile, plan: ConfigPlan, box: SecretBox | undefined, now: Date): Promise<void> {
  const items = itemsOf(plan, 'webhook')
  if (items.length === 0) return
  const declared = new Map(file.webhooks.map((w) => [w.url, w]))
  const ids = new Map((await listWebhooks({ db: trx })).map((w) => [w.url, w.id]))
  const created: number[] = []
  for (const item of items) {
    const id = ids.get(item.key)
    if (item.action === 'remove') {
      if (id !== undefined) await deleteWebhook({ db: trx, id })
      continue
    }
    const w = declared.get(item.key) as WebhookDecl
    if (id === undefined) {
      const secret = boxFor(box).seal(w.secret ?? generateSecret())
      const cursor = await latestEventId({ db: trx })
      created.push((await insertWebhook({ db: trx, url: w.url, events: w.events, domains: w.domains, secret, cursor, now })).id)
    } else {
      const secret = item.changes.some((c) => c.field === 'secret') && w.secret !== null ? boxFor(box).seal(w.secret) : undefined
      await updateWebhook({ db: trx, id, events: w.events, domains: w.domains, ...(secret === undefined ? {} : { secret }) })
    }
  }
  await markManagedBy({ db: trx, table: 'webhooks', column: 'id', keys: created })
}
