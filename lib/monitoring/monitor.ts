import { hostname } from 'node:os'
import type { Logger } from 'pino'
import { engineOf, type Db } from '../store/db.js'
import { pruneChecks } from '../store/checks.js'
import { prunePings } from '../store/heartbeats.js'
import { pruneEvents } from '../store/events.js'
import { scheduleHealth, type ScheduleLoad } from './schedule/schedule-load.js'
import { LeaseScheduler } from './schedule/lease-scheduler.js'
import { Scheduler } from './schedule/scheduler.js'
import type { SiteScheduler } from './schedule/site-scheduler.js'
import type { SiteStates } from './state/site-state.js'
import { StateSync } from './state/state-sync.js'
import type { CheckSupervisor } from '../probing/supervisor.js'

/** Scheduled checks running at once by default; the service passes its admission's scheduled slots. */
const CONCURRENCY = 500
const PRUNE_EVERY_MS = 3_600_000
/** The first prune comes soon after start, so a service restarted more often than hourly still prunes. */
const FIRST_PRUNE_MS = 60_000
const DAY_MS = 86_400_000
/** Events are kept this long: streams and webhooks resume from them (see docs/decisions.md, Events). */
export const EVENT_RETENTION_DAYS = 7

export interface Monitoring {
  scheduler: SiteScheduler
  /** Several instances (MySQL): the sync that keeps the in-memory state in line with the others' checks; null on SQLite. */
  sync: StateSync | null
  /** The scheduler's last minute: checks due and run per second, late, skipped, shed, behind or not. */
  load(): ScheduleLoad
  /** `behind` while the scheduler does not keep up (see `isBehind`), for /healthz. */
  schedule(): 'ok' | 'behind'
  /** Sites were added or removed in this process: re-read them now; resolves once the scheduler and the in-memory state hold the change. */
  sitesChanged(): Promise<void>
  stop(): Promise<void>
  /** After `stop`, once the checks are recorded: the other instances take over this one's claims at once. */
  retire(): Promise<void>
}

/** The once-a-minute warning's figures, as log fields. */
export function behindFields({ seconds, duePerS, runPerS, started, late, skipped, shed }: ScheduleLoad): Record<string, number> {
  return { seconds, duePerS, runPerS, started, late, skipped, shed }
}

/** The warning itself, figures included, for whoever reads the log as text. */
export function behindMessage({ seconds, duePerS, runPerS, late, skipped, shed }: ScheduleLoad): string {
  return (
    `scheduler behind: ${duePerS} checks due per second, ${runPerS} run per second; ` +
    `in the last ${seconds} s ${shed} shed, ${skipped} skipped, ${late} started late`
  )
}

/**
 * Checks every tracked site from all locations once per interval (the supervisor records each
 * result) and prunes raw checks past their retention, and events past {@link EVENT_RETENTION_DAYS}. The site list, and with it the in-memory
 * state the status endpoint serves, is re-read on every scheduler refresh. The first prune runs a
 * minute after start, then one every hour. While the scheduler is behind, a warning with its figures
 * is logged once a minute.
 */
export async function startMonitoring({
  db,
  states,
  checks,
  intervalMs,
  retentionDays,
  logger,
  now = () => new Date(),
  firstPruneMs = FIRST_PRUNE_MS,
  concurrency = CONCURRENCY,
  onCheckStarted,
  instanceId = `${hostname()}:${process.pid}`
}: {
  db: Db
  states: SiteStates
  checks: CheckSupervisor
  intervalMs: number
  retentionDays: number
  logger: Logger
  now?: () => Date
  /** Scheduled checks running at once; slow targets hold a slot for at most the probe deadline. */
  concurrency?: number
  /** Delay before the first prune (tests shorten it). */
  firstPruneMs?: number
  /** Told, as each scheduled check starts, how long after its due time it did (the metrics' scheduler lag). */
  onCheckStarted?: (lagMs: number) => void
  /** This instance's name in the scheduler's claims (INSTANCE_ID). */
  instanceId?: string
}): Promise<Monitoring> {
  const runCheck = async (site: { domain: string }, dueAt: number): Promise<void> => {
    onCheckStarted?.(now().getTime() - dueAt)
    if ((await checks.probeNow(site.domain)) === null) {
      logger.warn({ domain: site.domain }, 'tracked site not checked: it resolves to a non-public address')
    }
  }
  const onBehind = (load: ScheduleLoad): void => {
    logger.warn(behindFields(load), behindMessage(load))
  }
  let scheduler: SiteScheduler
  let sync: StateSync | null = null
  if (engineOf(db) === 'mysql') {
    // Several instances may share this database: the schedule lives in its rows (leases), and the
    // in-memory state follows what every instance records.
    const stateSync = new StateSync({ db, states, logger, now })
    sync = stateSync
    await states.refresh(db, now())
    scheduler = new LeaseScheduler({
      db,
      owner: instanceId,
      intervalMs,
      now: () => now().getTime(),
      runCheck,
      concurrency,
      tracked: (site) => states.siteId(site.domain) === site.id,
      learn: () => {
        states.changed()
        return stateSync.syncNow()
      },
      sites: () => states.size,
      onError: (err, what) => {
        const message = {
          list: 'cannot claim due checks, the database is unreachable: checking the sites claimed last until it answers',
          round: 'claiming due checks failed; trying again',
          check: 'a scheduled check failed'
        }[what]
        logger.warn({ err }, message)
      },
      onReconnect: () => {
        logger.info('claiming due checks again')
      },
      onBehind
    })
  } else {
    scheduler = new Scheduler({
      intervalMs,
      now: () => now().getTime(),
      listSites: () => states.refresh(db, now()),
      runCheck,
      concurrency,
      onError: (err, what) => {
        logger.warn({ err }, what === 'list' ? 'reading the tracked sites failed' : 'a scheduled check failed')
      },
      onBehind
    })
  }
  await scheduler.start()
  sync?.start()
  const prune = async (): Promise<void> => {
    try {
      const pruned = await pruneChecks({ db, before: new Date(now().getTime() - retentionDays * DAY_MS) })
      if (pruned > 0) logger.info({ pruned }, 'old checks pruned')
    } catch (err) {
      logger.warn({ err }, 'pruning old checks failed')
    }
    try {
      // Heartbeat pings are a heartbeat's checks: kept as long.
      const pruned = await prunePings({ db, before: new Date(now().getTime() - retentionDays * DAY_MS) })
      if (pruned > 0) logger.info({ pruned }, 'old heartbeat pings pruned')
    } catch (err) {
      logger.warn({ err }, 'pruning old heartbeat pings failed')
    }
    try {
      const pruned = await pruneEvents({ db, before: new Date(now().getTime() - EVENT_RETENTION_DAYS * DAY_MS) })
      if (pruned > 0) logger.info({ pruned }, 'old events pruned')
    } catch (err) {
      logger.warn({ err }, 'pruning old events failed')
    }
  }
  let every: NodeJS.Timeout | undefined
  const first = setTimeout(() => {
    every = setInterval(() => void prune(), PRUNE_EVERY_MS)
    every.unref()
    void prune()
  }, firstPruneMs)
  first.unref()
  return {
    scheduler,
    sync,
    load: () => scheduler.load(),
    schedule: () => scheduleHealth(scheduler.load()),
    sitesChanged: async () => {
      states.changed()
      if (sync !== null) await sync.syncNow()
      await scheduler.refreshNow()
    },
    stop: async () => {
      clearTimeout(first)
      clearInterval(every)
      await sync?.stop()
      await scheduler.stop()
    },
    retire: () => scheduler.retire()
  }
}
