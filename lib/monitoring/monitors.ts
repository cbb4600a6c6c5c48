import { announced, appendToOutbox } from '../events/outbox.js'
import { outageEvent, siteEvent, type NewEvent } from '../rules/events.js'
import { monitorDomain } from '../rules/monitor.js'
import type { MonitorChange, MonitorInput } from '../rules/monitor-fields.js'
import { NO_EXPECTATIONS } from '../rules/expectations.js'
import { outageEndOnRemoval } from '../rules/outages.js'
import type { Db } from '../store/db.js'
import { insertMonitor, lockMonitor, markMonitorRemoved, writeMonitor, type MonitorColumns } from '../store/monitors.js'
import { closeOutage, listOpenOutages } from '../store/outages.js'
import { removeSiteFromPages } from '../store/status-pages.js'
import type { SiteRow } from '../store/tables.js'
import { sealCheck, type Sealer } from './check-secrets.js'

/*
 * The use cases of monitors of kind tcp, tls and dns (lib/rules/monitor.ts): each announces what
 * it does in its own transaction, as the sites' do, its events naming the monitor.
 */

const named = (row: SiteRow) => ({ id: row.id, domain: row.domain, name: row.name, kind: row.kind })

/** Creates a monitor; `site.added` names it. A slug in use throws (`isDuplicateKey`). */
export async function addMonitor({
  db,
  slug,
  input,
  box,
  now
}: {
  db: Db
  slug: string
  input: MonitorInput
  box: Sealer
  now: Date
}): Promise<SiteRow> {
  const monitor: MonitorColumns = {
    name: input.name,
    kind: input.check.type,
    target: input.target,
    interval_s: input.interval_s ?? null,
    expect: { ...NO_EXPECTATIONS, max_response_ms: input.max_response_ms ?? null },
    check: sealCheck(input.check, box)
  }
  const row = await db.transaction(async (trx) => {
    const added = await insertMonitor({ db: trx, domain: monitorDomain(slug), monitor, now })
    await appendToOutbox({ db: trx, events: [siteEvent('added', named(added), now)] })
    return added
  })
  announced()
  return row
}

/** Changes a monitor's settings (keys absent are kept; a check replaces the whole check); null when there is no such monitor. */
export async function changeMonitor({
  db,
  slug,
  change,
  box,
  now
}: {
  db: Db
  slug: string
  change: MonitorChange
  box: Sealer
  now: Date
}): Promise<boolean> {
  return db.transaction(async (trx) => {
    const row = await lockMonitor({ db: trx, domain: monitorDomain(slug) })
    if (row === null) return false
    const monitor: MonitorColumns = {
      name: change.name ?? row.name,
      kind: change.check?.type ?? row.kind,
      target: change.target ?? (row.target as string),
      interval_s: change.interval_s === undefined ? row.interval_s : change.interval_s,
      expect: {
        ...row.expect,
        max_response_ms: change.max_response_ms === undefined ? row.expect.max_response_ms : change.max_response_ms
      },
      check: change.check === undefined ? (row.check as string) : sealCheck(change.check, box)
    }
    await writeMonitor({ db: trx, id: row.id, monitor, now })
    return true
  })
}

/**
 * Removes a monitor: its ongoing outage ends as `outageEndOnRemoval` says, it leaves its status
 * pages, and its row stays as history; `outage.closed` and `site.removed` name it. False when
 * there is no such monitor.
 */
export async function removeMonitor({ db, slug, now }: { db: Db; slug: string; now: Date }): Promise<boolean> {
  const removed = await db.transaction(async (trx) => {
    const row = await lockMonitor({ db: trx, domain: monitorDomain(slug) })
    if (row === null) return false
    await markMonitorRemoved({ db: trx, row, now })
    await removeSiteFromPages({ db: trx, siteId: row.id, now })
    const open = (await listOpenOutages({ db: trx, siteIds: [row.id] })).get(row.id) ?? null
    const end = outageEndOnRemoval(open, now)
    const events: NewEvent[] = []
    if (open && end) {
      await closeOutage({ db: trx, id: open.id, endedAt: end })
      events.push(outageEvent('close', named(row), { started_at: open.started_at, ended_at: end }, now))
    }
    events.push(siteEvent('removed', named(row), now))
    await appendToOutbox({ db: trx, events })
    return true
  })
  if (removed) announced()
  return removed
}
