import type { Logger } from 'pino'
import { alertRetryDelayMs, channelHealthAfter, pastRetrying } from '../rules/alert-delivery.js'
import { findChannel, updateChannelHealth, type ChannelRow } from '../store/alert-config.js'
import { hasPending, insertMessage, recordMessageAttempt, type MessageOutcome, type MessageRow } from '../store/alert-messages.js'
import { firingOnChannel } from '../store/alert-state.js'
import type { Db } from '../store/db.js'
import type { Post } from '../webhooks/post.js'
import { SecretBoxError, type SecretBox } from '../webhooks/secret-box.js'
import { render } from './kinds/index.js'
import type { MessageBody, MessageItem } from './message.js'
import { sendOutbound, type SendResult } from './send.js'
import type { SmtpSend, SmtpTarget } from './smtp.js'

/** What sending needs: the store, the secrets, the two ways out, the clock and where links point. */
export interface DeliverDeps {
  db: Db
  box: SecretBox
  post: Post
  smtp: SmtpSend
  logger: Logger
  now: () => Date
  random: () => number
  publicUrl: string
}

/** A channel's secrets, opened; a SecretBoxError when this instance's key did not seal them. */
export function openSecrets(box: SecretBox, channel: ChannelRow): Record<string, unknown> {
  if (channel.secret === null) return {}
  return JSON.parse(box.open(channel.secret)) as Record<string, unknown>
}

/** An e-mail channel's SMTP target. */
export function smtpTargetOf(channel: ChannelRow, secrets: Record<string, unknown>): SmtpTarget | undefined {
  if (channel.kind !== 'email') return undefined
  return { ...(channel.config as unknown as SmtpTarget), ...(typeof secrets.password === 'string' ? { password: secrets.password } : {}) }
}

/** Renders a message for its channel and sends it once; never throws for the receiver's faults. */
export async function attempt(
  deps: DeliverDeps,
  channel: ChannelRow,
  body: MessageBody,
  messageId: number,
  signal?: AbortSignal
): Promise<SendResult> {
  let secrets: Record<string, unknown>
  try {
    secrets = openSecrets(deps.box, channel)
  } catch (err) {
    if (!(err instanceof SecretBoxError)) throw err
    deps.logger.error({ channelId: channel.id, code: err.code }, 'alert channel secrets cannot be opened: check WEBHOOK_KEY')
    return { verdict: 'retry', status: null, error: `secret: ${err.message}`, answer: null }
  }
  const out = render(body, { kind: channel.kind, config: channel.config, secrets, messageId, now: deps.now(), publicUrl: deps.publicUrl })
  return sendOutbound(out, { post: deps.post, smtp: deps.smtp, smtpTarget: smtpTargetOf(channel, secrets), signal })
}

/** A re-send to an Alertmanager: its body is what is firing there now. */
async function refreshBody(db: Db, channelId: number, at: Date): Promise<MessageBody> {
  const items: MessageItem[] = (await firingOnChannel({ db, channelId })).map((a) => ({
    alert_id: a.id,
    step: 'refresh',
    what: 'opened',
    kind: a.kind,
    subject: a.subject,
    started_at: a.started_at.toISOString(),
    ended_at: null,
    detail: a.detail,
    incident: `a${a.id}`,
    resolves: false
  }))
  return { kind: 'refresh', policy: null, title: `${items.length} firing`, text: null, at: at.toISOString(), items }
}

/**
 * Sends one claimed message and records the outcome under its lease, then the channel's health:
 * a channel that keeps failing is marked failing and, when it names another channel to report to,
 * said there (and its recovery too). Returns the outcome, or null when the attempt did not count.
 */
export async function deliverMessage(deps: DeliverDeps, m: MessageRow, owner: string, signal: AbortSignal): Promise<MessageOutcome | null> {
  const { db } = deps
  const channel = await findChannel({ db, id: m.channel_id })
  if (channel === null) return null
  const body = m.kind === 'refresh' ? await refreshBody(db, channel.id, deps.now()) : (JSON.parse(m.body) as MessageBody)
  const result: SendResult =
    m.kind === 'refresh' && body.items.length === 0
      ? { verdict: 'delivered', status: null, error: null, answer: 'nothing firing' }
      : await attempt(deps, channel, body, m.id, signal)
  if (result.aborted === true) return null
  const at = deps.now()
  const attempts = m.attempts + 1
  const outcome: MessageOutcome = {
    status: 'pending',
    attempts,
    last_http_code: result.status,
    last_error: result.error,
    answer: result.answer,
    next_attempt_at: at,
    delivered_at: null
  }
  if (result.verdict === 'delivered') Object.assign(outcome, { status: 'delivered', delivered_at: at })
  else if (result.verdict === 'refused' || pastRetrying(m.created_at, at)) outcome.status = 'failed'
  else outcome.next_attempt_at = new Date(at.getTime() + alertRetryDelayMs(attempts, deps.random))
  if (!(await recordMessageAttempt({ db, id: m.id, owner, outcome }))) return null
  await updateHealth(deps, channel, result, at)
  return outcome
}

async function updateHealth(deps: DeliverDeps, channel: ChannelRow, result: SendResult, at: Date): Promise<void> {
  const { db, logger } = deps
  const health = channelHealthAfter(channel, result.verdict === 'delivered', at)
  await updateChannelHealth({
    db,
    id: channel.id,
    failures: health.failures,
    failingSince: health.failing_since,
    lastError: result.error ?? channel.last_error
  })
  if (health.became === null) return
  const what = health.became === 'failing' ? `is failing: ${result.error ?? 'no answer'}` : 'has recovered'
  const title = `Alert channel "${channel.name}" (${channel.kind}) ${what}`
  if (health.became === 'failing')
    logger.warn({ channelId: channel.id, kind: channel.kind, error: result.error }, 'alert channel is failing')
  else logger.info({ channelId: channel.id, kind: channel.kind }, 'alert channel recovered')
  if (channel.report_to === null || channel.report_to === channel.id) return
  const report = await findChannel({ db, id: channel.report_to })
  if (report === null) return
  const body: MessageBody = {
    kind: 'failing',
    policy: channel.name,
    title,
    text:
      health.became === 'failing' ? `Messages to it are kept and retried; see its delivery log.` : 'Its held messages are being delivered.',
    at: at.toISOString(),
    items: []
  }
  await insertMessage({ db, channelId: report.id, policyId: null, kind: 'failing', title, items: 0, body: JSON.stringify(body), now: at })
}

/** Enqueues a re-send for an Alertmanager channel with firing alerts, unless one is waiting already. */
export async function enqueueRefresh(db: Db, channelId: number, now: Date): Promise<boolean> {
  if ((await firingOnChannel({ db, channelId })).length === 0) return false
  if (await hasPending({ db, channelId, kind: 'refresh' })) return false
  const body: MessageBody = { kind: 'refresh', policy: null, title: 'firing alerts', text: null, at: now.toISOString(), items: [] }
  await insertMessage({
    db,
    channelId,
    policyId: null,
    kind: 'refresh',
    title: 'Re-send of the firing alerts',
    items: 0,
    body: JSON.stringify(body),
    now
  })
  return true
}
