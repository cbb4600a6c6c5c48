import type { Sealer } from '../monitoring/check-secrets.js'
import { addMonitor, changeMonitor, removeMonitor } from '../monitoring/monitors.js'
import type { ConfigFile, MonitorDecl } from '../rules/config-file.js'
import type { ConfigPlan } from '../rules/config-plan.js'
import { windowOfDecl } from '../rules/maintenance.js'
import { monitorDomain } from '../rules/monitor.js'
import { markManaged } from '../store/config-state.js'
import type { Db } from '../store/db.js'
import { replaceMaintenanceWindows } from '../store/maintenance.js'
import { siteIdsByDomain } from '../store/sites.js'

/**
 * Writes the monitors of a plan inside the apply's transaction, through the monitors API's own use
 * cases (nested in it as savepoints), so that a monitor made by a file is the one the API makes:
 * its events, its check's stored form. A change writes every setting the file gives.
 */

/** A tcp, tls or dns check holds no secret: nothing is sealed, and no key is needed. */
const NO_SECRETS: Sealer = {
  seal: () => {
    throw new Error('a monitor check holds no secret to seal')
  },
  open: () => {
    throw new Error('a monitor check holds no secret to open')
  }
}

/** Creates and changes the plan's monitors (before the pages, which may list them); returns how many events were written. */
export async function writeMonitors(trx: Db, file: ConfigFile, plan: ConfigPlan, now: Date): Promise<number> {
  const declared = new Map(file.monitors.map((m) => [m.slug, m]))
  const created: string[] = []
  let events = 0
  for (const item of plan.items) {
    if (item.resource !== 'monitor' || item.action === 'remove') continue
    const m = declared.get(item.key) as MonitorDecl
    const { slug: _slug, maintenance, ...settings } = m
    const domain = monitorDomain(m.slug)
    if (item.action === 'create') {
      await addMonitor({ db: trx, slug: m.slug, input: settings, box: NO_SECRETS, now })
      created.push(domain)
      events++
    } else if (item.changes.some((c) => c.field !== 'maintenance'))
      await changeMonitor({ db: trx, slug: m.slug, change: settings, box: NO_SECRETS, now })
    if (!item.changes.some((c) => c.field === 'maintenance')) continue
    const ids = await siteIdsByDomain({ db: trx, domains: [domain] })
    await replaceMaintenanceWindows({
      db: trx,
      siteId: ids.get(domain) as number,
      windows: maintenance.map(windowOfDecl),
      now
    })
  }
  await markManaged({ db: trx, table: 'sites', column: 'domain', keys: created })
  return events
}

/** Removes the plan's pruned monitors (after the pages are written); returns how many events were written. */
export async function removeMonitors(trx: Db, plan: ConfigPlan, now: Date): Promise<number> {
  let events = 0
  for (const item of plan.items) {
    if (item.resource === 'monitor' && item.action === 'remove' && (await removeMonitor({ db: trx, slug: item.key, now }))) events++
  }
  return events
}
