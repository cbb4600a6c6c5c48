import { randomBytes } from 'node:crypto'
import type { Logger } from 'pino'
import { AlertDispatcher } from '../../lib/alerts/dispatcher.js'
import { createChannel } from '../../lib/alerts/channels.js'
import { createSmtpSend } from '../../lib/alerts/smtp.js'
import { createLogger } from '../../lib/logger.js'
import { outageEvent } from '../../lib/rules/events.js'
import type { ChannelKind } from '../../lib/rules/alert-channels.js'
import { parseNewPolicy, type AlertPolicy } from '../../lib/rules/alert-policy.js'
import { addSites } from '../../lib/monitoring/add-sites.js'
import { appendEvents } from '../../lib/store/events.js'
import { insertPolicy, type ChannelRow } from '../../lib/store/alert-config.js'
import type { Db } from '../../lib/store/db.js'
import { closeOutage, insertOutage } from '../../lib/store/outages.js'
import { siteIdsByDomain } from '../../lib/store/sites.js'
import { createPost } from '../../lib/webhooks/post.js'
import { SecretBox } from '../../lib/webhooks/secret-box.js'
import { LogCapture } from './server.js'

/** Loopback receivers may be reached: the tests' targets are all on 127.0.0.1. */
export const LOOPBACK_POLICY = { allowPrivate: true }

/** The alerting machinery on a database, on a clock the test moves (`clock.now`, ms). */
export interface AlertStack {
  db: Db
  box: SecretBox
  clock: { now: number }
  dispatcher: AlertDispatcher
  logs: LogCapture
  logger: Logger
  /** One cycle at the clock's time, its sends awaited. */
  tick(): Promise<void>
  /** Moves the clock by `ms` in steps of `stepMs`, a cycle at each. */
  advance(ms: number, stepMs?: number): Promise<void>
  channel(kind: ChannelKind, config: Record<string, unknown>, name?: string, reportTo?: number | null): Promise<ChannelRow>
  policy(input: Record<string, unknown>): Promise<AlertPolicy>
  sites(...domains: string[]): Promise<number[]>
  down(siteId: number, domain: string, at: number, name?: string): Promise<void>
  up(siteId: number, domain: string, startedAt: number, at: number): Promise<void>
  stop(): Promise<void>
}

export async function alertStack(db: Db, startMs: number, opts: { smtpCa?: string; instance?: string } = {}): Promise<AlertStack> {
  const clock = { now: startMs }
  const box = new SecretBox({ key: randomBytes(32), keyFile: '/nonexistent/never-used' })
  const logs = new LogCapture()
  const logger = createLogger({ level: 'info', stream: logs })
  const outbound = createPost({ policy: LOOPBACK_POLICY, userAgent: 'site-status-test' })
  const smtp = createSmtpSend({ policy: LOOPBACK_POLICY, ca: opts.smtpCa })
  const now = (): Date => new Date(clock.now)
  const dispatcher = new AlertDispatcher({
    db,
    box,
    post: outbound.post,
    smtp,
    logger,
    now,
    random: () => 0.5,
    publicUrl: 'https://status.example.net',
    instance: opts.instance ?? 'test'
  })
  const outages = new Map<number, number>()
  const stack: AlertStack = {
    db,
    box,
    clock,
    dispatcher,
    logs,
    logger,
    tick: () => dispatcher.tick(),
    advance: async (ms, stepMs = 30_000) => {
      const end = clock.now + ms
      while (clock.now < end) {
        clock.now = Math.min(end, clock.now + stepMs)
        await dispatcher.tick()
      }
    },
    channel: async (kind, config, name = kind, reportTo = null) => {
      const made = await createChannel({ db, box, policy: LOOPBACK_POLICY, now: now() }, { name, kind, config, report_to: reportTo })
      if (!made.ok) throw new Error(`channel refused: ${JSON.stringify(made)}`)
      return made.channel
    },
    policy: async (input) => {
      const parsed = parseNewPolicy(input)
      if (!parsed.ok) throw new Error(parsed.error)
      return db.transaction((trx) => insertPolicy({ db: trx, policy: parsed.value, now: now() }))
    },
    sites: async (...domains) => {
      await addSites({ db, entries: domains.map((domain) => ({ domain, name: null })), now: now() })
      const ids = await siteIdsByDomain({ db, domains })
      return domains.map((d) => ids.get(d) as number)
    },
    down: async (siteId, domain, at, name = domain) => {
      await db.transaction(async (trx) => {
        outages.set(siteId, await insertOutage({ db: trx, siteId, startedAt: new Date(at) }))
        const e = outageEvent('open', { id: siteId, domain, name }, { started_at: new Date(at), ended_at: null }, new Date(at))
        await appendEvents({ db: trx, events: [{ type: e.type, siteId, data: JSON.stringify(e.data), at: e.at }] })
      })
    },
    up: async (siteId, domain, startedAt, at) => {
      await db.transaction(async (trx) => {
        await closeOutage({ db: trx, id: outages.get(siteId) as number, endedAt: new Date(at) })
        const e = outageEvent(
          'close',
          { id: siteId, domain, name: domain },
          { started_at: new Date(startedAt), ended_at: new Date(at) },
          new Date(at)
        )
        await appendEvents({ db: trx, events: [{ type: e.type, siteId, data: JSON.stringify(e.data), at: e.at }] })
      })
    },
    stop: async () => {
      await dispatcher.stop(0)
      await outbound.close()
    }
  }
  return stack
}
