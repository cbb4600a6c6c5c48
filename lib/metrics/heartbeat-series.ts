import type { Db } from '../store/db.js'
import { listAllHeartbeats } from '../store/heartbeats.js'

const STATES = ['new', 'up', 'late', 'down', 'paused'] as const

/**
 * The heartbeats' series, read from the database at scrape time (every instance answers the same):
 * `site_status_heartbeat_state` (1 for the state it is in, one series per heartbeat) and
 * `site_status_heartbeat_last_ping_age_seconds` (absent before the first ping). Slugs are
 * `[a-z0-9-]`, so labels need no escaping.
 */
export async function heartbeatExposition({ db, now }: { db: Db; now: () => Date }): Promise<string> {
  const rows = await listAllHeartbeats({ db })
  if (rows.length === 0) return ''
  const at = now().getTime()
  let text = '# HELP site_status_heartbeat_state The state a heartbeat is in (1), by slug.\n# TYPE site_status_heartbeat_state gauge\n'
  for (const r of rows) if (STATES.includes(r.state)) text += `site_status_heartbeat_state{slug="${r.slug}",state="${r.state}"} 1\n`
  text +=
    '# HELP site_status_heartbeat_last_ping_age_seconds Seconds since the heartbeat was last pinged.\n# TYPE site_status_heartbeat_last_ping_age_seconds gauge\n'
  for (const r of rows) {
    if (r.last_ping_at === null) continue
    text += `site_status_heartbeat_last_ping_age_seconds{slug="${r.slug}"} ${Math.max(0, (at - r.last_ping_at.getTime()) / 1000)}\n`
  }
  return text
}
