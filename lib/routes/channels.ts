import Boom from '@hapi/boom'
import type { ServerRoute } from '@hapi/hapi'
import Joi from 'joi'
import { requireScope } from '../auth.js'
import { changeChannel, channelRecord, createChannel, testChannel, type ChannelRefusal } from '../alerts/channels.js'
import type { DeliverDeps } from '../alerts/deliver.js'
import type { Resolve } from '../net/resolver.js'
import { channelChangeSchema, newChannelSchema, type ChannelKind } from '../rules/alert-channels.js'
import type { TargetPolicy } from '../rules/target-policy.js'
import { deleteChannel, findChannel, listChannels } from '../store/alert-config.js'
import { listMessages, type MessageRow } from '../store/alert-messages.js'
import type { Db } from '../store/db.js'
import type { SecretBox } from '../webhooks/secret-box.js'
import { pageLimit } from './paging.js'

/** What the alerting routes need: the store, the secret box, the address policy, and a way to send (tests of channels). */
export interface AlertRouteDeps {
  db: Db
  now: () => Date
  box: SecretBox
  policy: TargetPolicy
  lookup?: Resolve
  /** Sends a channel's test message now. */
  deliver: DeliverDeps
  /** Tells the dispatcher there is work. */
  wake: () => void
}

/** A channel body may carry a PEM or a long recipient list, never more. */
const BODY_BYTES = 16 * 1024

export const idParam = (what: string): Joi.ObjectSchema =>
  Joi.object({
    id: Joi.number()
      .integer()
      .min(1)
      .max(2 ** 31)
      .required()
  }).messages({
    'number.base': `${what} id must be a whole number`,
    'number.integer': `${what} id must be a whole number`,
    'number.min': `${what} id must be a whole number`,
    'number.max': `${what} id must be a whole number`
  })

const deliveriesQuery = Joi.object({ limit: pageLimit, cursor: Joi.string().max(100) }).unknown(false)

const encodeCursor = (id: number): string => Buffer.from(`m${id}`).toString('base64url')
function decodeCursor(text: string): number {
  const m = /^m(\d{1,15})$/.exec(Buffer.from(text, 'base64url').toString('latin1'))
  if (!m) throw Boom.badRequest('"cursor" is not a cursor this API returned (use next_cursor as given)')
  return Number(m[1])
}

/** A message as a channel's delivery log shows it: never its body (it may name what the channel's secrets guard). */
export function messageRecord(m: MessageRow): Record<string, unknown> {
  return {
    id: m.id,
    kind: m.kind,
    title: m.title,
    items: m.items,
    status: m.status,
    attempts: m.attempts,
    last_http_code: m.last_http_code,
    last_error: m.last_error,
    answer: m.answer,
    next_attempt_at: m.status === 'pending' ? m.next_attempt_at.toISOString() : null,
    created_at: m.created_at.toISOString(),
    delivered_at: m.delivered_at?.toISOString() ?? null
  }
}

function refused(outcome: ChannelRefusal): never {
  if (outcome.reason === 'invalid') throw Boom.badRequest(outcome.error)
  if (outcome.reason === 'no_channel') throw Boom.notFound('no such channel')
  throw Boom.badRequest('"report_to" must name another existing channel')
}

/** Alert channels: where alerts go (manage). Secrets go in, never out. */
export function channelRoutes(deps: AlertRouteDeps): ServerRoute[] {
  const { db, now, box } = deps
  const write = (): Parameters<typeof createChannel>[0] => ({ db, box, policy: deps.policy, lookup: deps.lookup, now: now() })
  const payload = { allow: 'application/json', maxBytes: BODY_BYTES }
  return [
    {
      method: 'POST',
      path: '/api/v1/channels',
      options: { auth: requireScope('manage'), payload, validate: { payload: newChannelSchema } },
      handler: async (request, h) => {
        const body = request.payload as { name: string; kind: ChannelKind; config: unknown; report_to?: number | null }
        const made = await createChannel(write(), body)
        if (!made.ok) refused(made)
        const record = channelRecord(made.channel, box)
        return h
          .response(made.secret === null ? record : { ...record, secret: made.secret })
          .code(201)
          .location(`/api/v1/channels/${made.channel.id}`)
      }
    },
    {
      method: 'GET',
      path: '/api/v1/channels',
      options: { auth: requireScope('manage') },
      handler: async () => ({ channels: (await listChannels({ db })).map((c) => channelRecord(c, box)) })
    },
    {
      method: 'GET',
      path: '/api/v1/channels/{id}',
      options: { auth: requireScope('manage'), validate: { params: idParam('channel') } },
      handler: async (request) => {
        const channel = await findChannel({ db, id: (request.params as { id: number }).id })
        if (channel === null) throw Boom.notFound('no such channel')
        return channelRecord(channel, box)
      }
    },
    {
      method: 'PATCH',
      path: '/api/v1/channels/{id}',
      options: { auth: requireScope('manage'), payload, validate: { params: idParam('channel'), payload: channelChangeSchema } },
      handler: async (request) => {
        const changed = await changeChannel(write(), (request.params as { id: number }).id, request.payload as Record<string, never>)
        if (!changed.ok) refused(changed)
        return channelRecord(changed.channel, box)
      }
    },
    {
      method: 'DELETE',
      path: '/api/v1/channels/{id}',
      options: { auth: requireScope('manage'), validate: { params: idParam('channel') } },
      handler: async (request, h) => {
        if (!(await deleteChannel({ db, id: (request.params as { id: number }).id, now: now() }))) throw Boom.notFound('no such channel')
        return h.response().code(204)
      }
    },
    {
      method: 'POST',
      path: '/api/v1/channels/{id}/test',
      options: { auth: requireScope('manage'), validate: { params: idParam('channel') } },
      handler: async (request) => {
        const channel = await findChannel({ db, id: (request.params as { id: number }).id })
        if (channel === null) throw Boom.notFound('no such channel')
        return testChannel(deps.deliver, channel)
      }
    },
    {
      method: 'GET',
      path: '/api/v1/channels/{id}/deliveries',
      options: { auth: requireScope('manage'), validate: { params: idParam('channel'), query: deliveriesQuery } },
      handler: async (request) => {
        const { id } = request.params as { id: number }
        const q = request.query as { limit: number; cursor?: string }
        const beforeId = q.cursor === undefined ? undefined : decodeCursor(q.cursor)
        if ((await findChannel({ db, id })) === null) throw Boom.notFound('no such channel')
        const rows = await listMessages({ db, channelId: id, limit: q.limit + 1, beforeId })
        const page = rows.slice(0, q.limit)
        const last = page.at(-1)
        return {
          deliveries: page.map(messageRecord),
          next_cursor: rows.length > q.limit && last !== undefined ? encodeCursor(last.id) : null
        }
      }
    }
  ]
}
