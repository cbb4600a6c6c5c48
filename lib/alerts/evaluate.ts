import { maintenanceAt } from '../rules/maintenance.js'
import { timingOf } from '../rules/alert-policy.js'
import { planAlert } from '../rules/alert-timeline.js'
import { listChannels, listPolicies } from '../store/alert-config.js'
import { insertNotifications, lockDueAlerts, saveAlertProgress, type NotificationInsert } from '../store/alert-state.js'
import { listMonitorAlerting, sitesDown } from '../store/alert-targets.js'
import type { Db } from '../store/db.js'
import { listMaintenanceWindows } from '../store/maintenance.js'

/** Alerts evaluated per transaction. */
const BATCH = 500

/**
 * Evaluates the alerts due at `now`: each policy's timeline rule says which steps are due, and
 * each step becomes a notification per channel, written with the alert's new progress in one
 * transaction (the rows locked meanwhile), so a step is made once whichever instance runs it.
 * A monitor is silenced during a maintenance window and while the monitor it depends on is down.
 * Returns how many alerts were evaluated.
 */
export async function evaluateDueAlerts({ db, now, batch = BATCH }: { db: Db; now: Date; batch?: number }): Promise<number> {
  let total = 0
  for (;;) {
    const done = await db.transaction(async (trx) => {
      const due = await lockDueAlerts({ db: trx, now, limit: batch })
      if (due.length === 0) return 0
      const policies = new Map((await listPolicies({ db: trx, ids: [...new Set(due.map((a) => a.policy_id))] })).map((p) => [p.id, p]))
      const channels = new Set((await listChannels({ db: trx })).map((c) => c.id))
      const siteIds = [...new Set(due.map((a) => a.site_id))]
      const windows = await listMaintenanceWindows({ db: trx, siteIds })
      const settings = await listMonitorAlerting({ db: trx, siteIds })
      const parents = [...settings.values()].flatMap((s) => (s.depends_on_site_id === null ? [] : [s.depends_on_site_id]))
      const down = await sitesDown({ db: trx, siteIds: parents })
      const notifications: NotificationInsert[] = []
      for (const alert of due) {
        const policy = policies.get(alert.policy_id)
        if (policy === undefined) {
          await saveAlertProgress({ db: trx, id: alert.id, progress: { ...alert, done: true }, next: null })
          continue
        }
        const parent = settings.get(alert.site_id)?.depends_on_site_id ?? null
        const silenced = maintenanceAt(windows.get(alert.site_id) ?? [], now.getTime()) !== null || (parent !== null && down.has(parent))
        const timing = timingOf(policy, alert.kind)
        const plan = planAlert({
          policy: {
            ...timing,
            channels: timing.channels.filter((c) => channels.has(c)),
            escalate: timing.escalate.map((s) => ({ ...s, channels: s.channels.filter((c) => channels.has(c)) }))
          },
          kind: alert.kind,
          started: alert.started_at,
          ended: alert.ended_at,
          progress: alert,
          silenced,
          now
        })
        for (const step of plan.steps) {
          for (const channelId of step.channels) {
            if (!channels.has(channelId)) continue
            notifications.push({
              alert_id: alert.id,
              policy_id: policy.id,
              channel_id: channelId,
              step: step.step,
              what: step.what,
              created_at: now
            })
          }
        }
        await saveAlertProgress({ db: trx, id: alert.id, progress: plan.progress, next: plan.next })
      }
      await insertNotifications({ db: trx, rows: notifications })
      return due.length
    })
    total += done
    if (done < batch) return total
  }
}
