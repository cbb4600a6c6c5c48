import { json, noContent, ok, scope, scopedErrors } from './operations.js'
import { ref, type Json } from './parts.js'

const idParam = (what: string): Json => ({
  name: 'id',
  in: 'path',
  required: true,
  description: `The ${what}'s id.`,
  schema: { type: 'integer', minimum: 1 }
})
const channelId = idParam('channel')
const policyId = idParam('alert policy')
const body = (name: string): Json => ({ required: true, content: json(ref('schemas', name)) })
/** Errors of a write with a body. */
const bodyErrors = (...extra: string[]): Json => scopedErrors('BadRequest', ...extra, 'PayloadTooLarge', 'UnsupportedMediaType')
const domain = ref('parameters', 'Domain')
const slug: Json = {
  name: 'slug',
  in: 'path',
  required: true,
  description: "The page's slug.",
  schema: { type: 'string', minLength: 1, maxLength: 2048 }
}
const tags = ['alerts']
const manage = scope('manage')

const POLICY_TEXT =
  'An outage alert opens once the outage has lasted `after_min`, is repeated every `remind_every_min` to every channel it reached, escalates to each step\u2019s channels once the outage is that old, and sends a resolution (`on_resolved`) to every channel it reached. Slow, certificate and heartbeat notices go once. Maintenance windows and a down `depends_on` parent silence a monitor. Per policy and channel, notifications within `group_window_s` of the last message go as one grouped message; a channel gets at most 10 messages a minute, the rest summarised. Every channel named must exist (400 otherwise).'

/** Alerting: channels, their delivery logs and tests, policies, and what a site or a page uses. */
export const alertPaths: Json = {
  '/api/v1/channels': {
    post: {
      operationId: 'createChannel',
      tags,
      security: manage,
      summary: 'Add an alert channel (costs 1)',
      description:
        'The config is judged by its kind (see ChannelConfig_<kind>); secrets are sealed at rest and never shown back. Every host it sends to must pass the address policy of checks and webhooks (400 otherwise), judged again at every send.',
      requestBody: body('ChannelRequest'),
      responses: {
        201: ok('The channel (a `webhook` channel with its signing secret, shown only here).', ref('schemas', 'Channel')),
        ...bodyErrors()
      }
    },
    get: {
      operationId: 'listChannels',
      tags,
      security: manage,
      summary: 'Every alert channel, with its health (costs 1)',
      responses: { 200: ok('The channels.', ref('schemas', 'ChannelList')), ...scopedErrors() }
    }
  },
  '/api/v1/channels/{id}': {
    get: {
      operationId: 'getChannel',
      tags,
      security: manage,
      summary: 'An alert channel (costs 1)',
      parameters: [channelId],
      responses: { 200: ok('The channel.', ref('schemas', 'Channel')), ...scopedErrors('BadRequest', 'NotFound') }
    },
    patch: {
      operationId: 'changeChannel',
      tags,
      security: manage,
      summary: "Change a channel's name, config or report channel (costs 1)",
      parameters: [channelId],
      requestBody: body('ChannelChange'),
      responses: { 200: ok('The channel as changed.', ref('schemas', 'Channel')), ...bodyErrors('NotFound') }
    },
    delete: {
      operationId: 'deleteChannel',
      tags,
      security: manage,
      summary: 'Remove a channel, its queue and its log; policies stop naming it (costs 1)',
      parameters: [channelId],
      responses: { 204: noContent('Removed.'), ...scopedErrors('BadRequest', 'NotFound') }
    }
  },
  '/api/v1/channels/{id}/test': {
    post: {
      operationId: 'testChannel',
      tags,
      security: manage,
      summary: 'Send a test message now and say what the receiver answered (costs 1)',
      parameters: [channelId],
      responses: {
        200: ok('What came of it (also in the delivery log).', ref('schemas', 'ChannelTest')),
        ...scopedErrors('BadRequest', 'NotFound')
      }
    }
  },
  '/api/v1/channels/{id}/deliveries': {
    get: {
      operationId: 'listChannelDeliveries',
      tags,
      security: manage,
      summary: "A channel's messages, newest first (costs 1)",
      description:
        'A channel sends one message at a time, in order; a failed attempt is retried after 5 s, doubling to 2 min, for a day. Kept 30 days.',
      parameters: [
        channelId,
        { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 200, default: 50 } },
        {
          name: 'cursor',
          in: 'query',
          required: false,
          description: 'The `next_cursor` of the previous page, as given.',
          schema: { type: 'string', maxLength: 100 }
        }
      ],
      responses: { 200: ok('A page of messages.', ref('schemas', 'AlertMessageList')), ...scopedErrors('BadRequest', 'NotFound') }
    }
  },
  '/api/v1/alert-policies': {
    post: {
      operationId: 'createAlertPolicy',
      tags,
      security: manage,
      summary: 'Add an alert policy (costs 1)',
      description: POLICY_TEXT,
      requestBody: body('AlertPolicyRequest'),
      responses: { 201: ok('The policy.', ref('schemas', 'AlertPolicy')), ...bodyErrors('Conflict') }
    },
    get: {
      operationId: 'listAlertPolicies',
      tags,
      security: manage,
      summary: 'Every alert policy (costs 1)',
      responses: { 200: ok('The policies.', ref('schemas', 'AlertPolicyList')), ...scopedErrors() }
    }
  },
  '/api/v1/alert-policies/{id}': {
    get: {
      operationId: 'getAlertPolicy',
      tags,
      security: manage,
      summary: 'An alert policy (costs 1)',
      parameters: [policyId],
      responses: { 200: ok('The policy.', ref('schemas', 'AlertPolicy')), ...scopedErrors('BadRequest', 'NotFound') }
    },
    patch: {
      operationId: 'changeAlertPolicy',
      tags,
      security: manage,
      summary: 'Change an alert policy (costs 1)',
      description: 'Keys absent are kept; `remind_every_min: null` stops reminders. Alerts already open follow the policy as changed.',
      parameters: [policyId],
      requestBody: body('AlertPolicyRequest'),
      responses: { 200: ok('The policy as changed.', ref('schemas', 'AlertPolicy')), ...bodyErrors('NotFound', 'Conflict') }
    },
    delete: {
      operationId: 'deleteAlertPolicy',
      tags,
      security: manage,
      summary: 'Remove an alert policy; sites and pages using it fall back to the default (costs 1)',
      parameters: [policyId],
      responses: { 204: noContent('Removed.'), ...scopedErrors('BadRequest', 'NotFound') }
    }
  },
  '/api/v1/sites/{domain}/alerting': {
    get: {
      operationId: 'getSiteAlerting',
      tags,
      security: manage,
      summary: "A site's alert policy and parent (costs 1)",
      parameters: [domain],
      responses: { 200: ok('Its alerting.', ref('schemas', 'SiteAlerting')), ...scopedErrors('BadRequest', 'NotFound') }
    },
    put: {
      operationId: 'setSiteAlerting',
      tags,
      security: manage,
      summary: "Set a site's alert policy and what it depends on (costs 1)",
      description: 'Keys absent are kept; null clears. `depends_on` must be a tracked site and must not make a loop.',
      parameters: [domain],
      requestBody: body('SiteAlertingRequest'),
      responses: { 200: ok('Its alerting.', ref('schemas', 'SiteAlerting')), ...bodyErrors('NotFound') }
    }
  },
  '/api/v1/pages/{slug}/alerting': {
    get: {
      operationId: 'getPageAlerting',
      tags,
      security: manage,
      summary: "A status page's alert policy (costs 1)",
      parameters: [slug],
      responses: { 200: ok('Its policy.', ref('schemas', 'PageAlerting')), ...scopedErrors('BadRequest', 'NotFound') }
    },
    put: {
      operationId: 'setPageAlerting',
      tags,
      security: manage,
      summary: "Set a status page's alert policy: that of its sites that name none (costs 1)",
      parameters: [slug],
      requestBody: {
        required: true,
        content: json({
          type: 'object',
          required: ['alert_policy'],
          properties: { alert_policy: { oneOf: [{ type: 'integer', minimum: 1 }, { type: 'null' }] } },
          additionalProperties: false
        })
      },
      responses: { 200: ok('Its policy.', ref('schemas', 'PageAlerting')), ...bodyErrors('NotFound') }
    }
  }
}
