import { checkHost } from '../net/host-check.js'
import type { Resolve } from '../net/resolver.js'
import {
  channelUrls,
  mergeConfig,
  parseChannelConfig,
  SECRET_FIELDS,
  type ChannelConfig,
  type ChannelKind
} from '../rules/alert-channels.js'
import type { TargetPolicy } from '../rules/target-policy.js'
import { findChannel, insertChannel, updateChannel, type ChannelRow } from '../store/alert-config.js'
import { insertSentMessage } from '../store/alert-messages.js'
import type { Db } from '../store/db.js'
import { refuseWebhookUrl } from '../webhooks/manage.js'
import { generateSecret, type SecretBox } from '../webhooks/secret-box.js'
import { attempt, openSecrets, type DeliverDeps } from './deliver.js'
import type { MessageBody } from './message.js'

/** Why a channel cannot be stored: its config (a 400's text), or a report channel that does not exist. */
export type ChannelRefusal = { ok: false; reason: 'invalid'; error: string } | { ok: false; reason: 'no_channel' | 'no_report_channel' }

/** The receivers a config names, judged by the address policy as webhook URLs are: null when all may be reached. */
export async function refuseChannelTargets(parsed: ChannelConfig, policy: TargetPolicy, lookup?: Resolve): Promise<string | null> {
  if (parsed.kind === 'email') {
    const verdict = await checkHost(String(parsed.config.host), policy, { lookup, timeoutMs: 5000 })
    if (verdict.ok) return null
    return verdict.reason === 'non_public'
      ? '"config.host" resolves to a non-public address'
      : `"config.host" does not resolve (${verdict.code ?? 'DNS_ERROR'})`
  }
  for (const raw of channelUrls(parsed.kind, parsed.config, parsed.secrets)) {
    const url = new URL(raw)
    if (url.username !== '' || url.password !== '') return 'a channel URL must not include a username or password'
    const refusal = await refuseWebhookUrl(url, policy, lookup)
    if (refusal !== null) return refusal
  }
  return null
}

/** The sealed form of a config's secrets (null when it has none). */
function seal(box: SecretBox, secrets: Record<string, unknown>): string | null {
  return Object.keys(secrets).length === 0 ? null : box.seal(JSON.stringify(secrets))
}

export interface ChannelWrite {
  db: Db
  box: SecretBox
  policy: TargetPolicy
  lookup?: Resolve
  now: Date
}

/**
 * Stores a new channel, its secrets sealed. A `webhook` channel gets a new signing secret,
 * returned here once (as webhooks do).
 */
export async function createChannel(
  w: ChannelWrite,
  input: { name: string; kind: ChannelKind; config: unknown; report_to?: number | null }
): Promise<{ ok: true; channel: ChannelRow; secret: string | null } | ChannelRefusal> {
  const parsed = parseChannelConfig(input.kind, input.config)
  if (!parsed.ok) return { ok: false, reason: 'invalid', error: parsed.error }
  const refusal = await refuseChannelTargets(parsed.value, w.policy, w.lookup)
  if (refusal !== null) return { ok: false, reason: 'invalid', error: refusal }
  const reportTo = input.report_to ?? null
  if (reportTo !== null && (await findChannel({ db: w.db, id: reportTo })) === null) return { ok: false, reason: 'no_report_channel' }
  const secret = input.kind === 'webhook' ? generateSecret() : null
  const secrets = secret === null ? parsed.value.secrets : { ...parsed.value.secrets, secret }
  const channel = await insertChannel({
    db: w.db,
    name: input.name,
    kind: input.kind,
    config: parsed.value.config,
    secret: seal(w.box, secrets),
    reportTo,
    now: w.now
  })
  return { ok: true, channel, secret }
}

/** Changes a channel: `config` keys given replace the stored ones (secrets left out are kept), judged whole again. */
export async function changeChannel(
  w: ChannelWrite,
  id: number,
  change: { name?: string; config?: Record<string, unknown>; report_to?: number | null }
): Promise<{ ok: true; channel: ChannelRow } | ChannelRefusal> {
  const current = await findChannel({ db: w.db, id })
  if (current === null) return { ok: false, reason: 'no_channel' }
  const fields: Parameters<typeof updateChannel>[0]['fields'] = { name: change.name }
  if (change.config !== undefined) {
    const stored = openSecrets(w.box, current)
    const { secret: signing, ...secrets } = stored
    const parsed = parseChannelConfig(current.kind, mergeConfig({ config: current.config, secrets }, change.config))
    if (!parsed.ok) return { ok: false, reason: 'invalid', error: parsed.error }
    const refusal = await refuseChannelTargets(parsed.value, w.policy, w.lookup)
    if (refusal !== null) return { ok: false, reason: 'invalid', error: refusal }
    fields.config = parsed.value.config
    fields.secret = seal(w.box, signing === undefined ? parsed.value.secrets : { ...parsed.value.secrets, secret: signing })
  }
  if (change.report_to !== undefined) {
    if (change.report_to !== null && (change.report_to === id || (await findChannel({ db: w.db, id: change.report_to })) === null))
      return { ok: false, reason: 'no_report_channel' }
    fields.report_to = change.report_to
  }
  await updateChannel({ db: w.db, id, fields, now: w.now })
  return { ok: true, channel: (await findChannel({ db: w.db, id })) as ChannelRow }
}

/** A channel as the API shows it: its config without secrets, which secrets are set, the origin a secret URL points at, its health. */
export function channelRecord(c: ChannelRow, box: SecretBox): Record<string, unknown> {
  let secrets: Record<string, unknown> = {}
  try {
    secrets = openSecrets(box, c)
  } catch {
    // A key that cannot open them: the record says none is readable; sending says why.
  }
  const url = typeof secrets.url === 'string' ? secrets.url : typeof c.config.url === 'string' ? c.config.url : null
  return {
    id: c.id,
    name: c.name,
    kind: c.kind,
    config: c.config,
    secret_fields: SECRET_FIELDS[c.kind].filter((f) => f in secrets),
    target: url === null ? null : new URL(url).origin,
    report_to: c.report_to,
    failing: c.failing_since !== null,
    failing_since: c.failing_since?.toISOString() ?? null,
    last_error: c.last_error,
    created_at: c.created_at.toISOString()
  }
}

/** Sends a test message now, records it in the channel's log, and says what the receiver answered. */
export async function testChannel(
  deps: DeliverDeps,
  channel: ChannelRow
): Promise<{ delivered: boolean; http_code: number | null; answer: string | null; error: string | null; message_id: number }> {
  const at = deps.now()
  const title = `Test message from Site Status API to "${channel.name}"`
  const body: MessageBody = {
    kind: 'test',
    policy: null,
    title,
    text: `If you can read this, the ${channel.kind} channel "${channel.name}" works.`,
    at: at.toISOString(),
    items: []
  }
  const result = await attempt(deps, channel, body, at.getTime(), AbortSignal.timeout(30_000))
  const delivered = result.verdict === 'delivered'
  const messageId = await insertSentMessage({
    db: deps.db,
    channelId: channel.id,
    title,
    body: JSON.stringify(body),
    outcome: {
      status: delivered ? 'delivered' : 'failed',
      attempts: 1,
      last_http_code: result.status,
      last_error: result.error,
      answer: result.answer,
      delivered_at: delivered ? deps.now() : null
    },
    now: at
  })
  return { delivered, http_code: result.status, answer: result.answer, error: result.error, message_id: messageId }
}
