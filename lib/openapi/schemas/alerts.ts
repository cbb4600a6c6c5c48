import { CHANNEL_KINDS } from '../../rules/alert-channels.js'
import { channelConfigs as configs } from './channel-configs.js'
import { ALERT_EVENTS, MAX_AFTER_MIN, MAX_ESCALATION_STEPS, MAX_GROUP_WINDOW_S, MAX_POLICY_CHANNELS } from '../../rules/alert-policy.js'
import { nullable, ref, timestamp, type Json } from '../parts.js'

const id: Json = { type: 'integer', minimum: 1 }

const kindEnum: Json = { type: 'string', enum: [...CHANNEL_KINDS] }

/** Alerting: channels, their delivery logs, policies, and what a site or a page uses. */
export const alertSchemas: Json = {
  ...Object.fromEntries(Object.entries(configs).map(([kind, schema]) => [`ChannelConfig_${kind}`, schema])),
  ChannelRequest: {
    type: 'object',
    required: ['name', 'kind', 'config'],
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 100 },
      kind: kindEnum,
      config: {
        description: "The kind's config (see ChannelConfig_<kind>).",
        anyOf: Object.keys(configs).map((k) => ref('schemas', `ChannelConfig_${k}`))
      },
      report_to: { ...nullable(id), description: 'Another channel told when this one is failing, and when it recovers.' }
    },
    additionalProperties: false
  },
  ChannelChange: {
    type: 'object',
    minProperties: 1,
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 100 },
      config: { type: 'object', description: 'Keys given replace the stored ones (secrets left out are kept); the whole is judged again.' },
      report_to: nullable(id)
    },
    additionalProperties: false
  },
  Channel: {
    type: 'object',
    required: [
      'id',
      'name',
      'kind',
      'config',
      'secret_fields',
      'target',
      'report_to',
      'failing',
      'failing_since',
      'last_error',
      'created_at'
    ],
    properties: {
      id,
      name: { type: 'string' },
      kind: kindEnum,
      config: { type: 'object', description: 'Without its secrets.' },
      secret_fields: { type: 'array', items: { type: 'string' }, description: 'The secrets set (their values are never shown).' },
      target: { ...nullable({ type: 'string' }), description: 'The origin a secret URL points at.' },
      report_to: nullable(id),
      failing: { type: 'boolean', description: 'Its last 3 attempts or more failed in a row.' },
      failing_since: nullable(timestamp),
      last_error: nullable({ type: 'string' }),
      created_at: timestamp,
      secret: {
        type: 'string',
        pattern: '^whsec_',
        description: 'A `webhook` channel\u2019s signing secret, only in the answer that created it.'
      }
    },
    additionalProperties: false
  },
  ChannelList: {
    type: 'object',
    required: ['channels'],
    properties: { channels: { type: 'array', items: ref('schemas', 'Channel') } },
    additionalProperties: false
  },
  ChannelTest: {
    type: 'object',
    required: ['delivered', 'http_code', 'answer', 'error', 'message_id'],
    properties: {
      delivered: { type: 'boolean' },
      http_code: { ...nullable({ type: 'integer' }), description: 'The receiver\u2019s last HTTP status (null for e-mail or no answer).' },
      answer: {
        ...nullable({ type: 'string' }),
        description: 'What the receiver said: the start of its answer, or the SMTP server\u2019s reply.'
      },
      error: nullable({ type: 'string' }),
      message_id: { ...id, description: 'The test in the channel\u2019s delivery log.' }
    },
    additionalProperties: false
  },
  AlertMessage: {
    type: 'object',
    required: [
      'id',
      'kind',
      'title',
      'items',
      'status',
      'attempts',
      'last_http_code',
      'last_error',
      'answer',
      'next_attempt_at',
      'created_at',
      'delivered_at'
    ],
    properties: {
      id,
      kind: { type: 'string', enum: ['alert', 'summary', 'test', 'failing', 'refresh'] },
      title: { type: 'string' },
      items: { type: 'integer', minimum: 0, description: 'Alert steps in it (a grouped message: several).' },
      status: { type: 'string', enum: ['pending', 'delivered', 'failed'] },
      attempts: { type: 'integer', minimum: 0 },
      last_http_code: nullable({ type: 'integer' }),
      last_error: nullable({ type: 'string' }),
      answer: nullable({ type: 'string' }),
      next_attempt_at: nullable(timestamp),
      created_at: timestamp,
      delivered_at: nullable(timestamp)
    },
    additionalProperties: false
  },
  AlertMessageList: {
    type: 'object',
    required: ['deliveries', 'next_cursor'],
    properties: {
      deliveries: { type: 'array', maxItems: 200, items: ref('schemas', 'AlertMessage') },
      next_cursor: nullable({ type: 'string' })
    },
    additionalProperties: false
  },
  AlertPolicyRequest: {
    type: 'object',
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 100 },
      channels: { type: 'array', minItems: 1, maxItems: MAX_POLICY_CHANNELS, uniqueItems: true, items: id },
      events: {
        type: 'array',
        minItems: 1,
        uniqueItems: true,
        items: { type: 'string', enum: [...ALERT_EVENTS] },
        description: 'Default: all.'
      },
      after_min: {
        type: 'integer',
        minimum: 0,
        maximum: MAX_AFTER_MIN,
        description: 'Alert only once an outage has lasted this long (default 0).'
      },
      remind_every_min: {
        ...nullable({ type: 'integer', minimum: 1, maximum: MAX_AFTER_MIN }),
        description: 'Remind while it lasts; null: never.'
      },
      escalate: {
        type: 'array',
        maxItems: MAX_ESCALATION_STEPS,
        items: {
          type: 'object',
          required: ['after_min', 'channels'],
          properties: {
            after_min: { type: 'integer', minimum: 0, maximum: MAX_AFTER_MIN },
            channels: { type: 'array', minItems: 1, items: id }
          },
          additionalProperties: false
        }
      },
      on_resolved: { type: 'boolean', description: 'Send resolutions (default true).' },
      group_window_s: {
        type: 'integer',
        minimum: 0,
        maximum: MAX_GROUP_WINDOW_S,
        description: 'Grouping window per channel (default 60).'
      },
      default: { type: 'boolean', description: 'The policy of every monitor that names none (one at a time).' }
    },
    additionalProperties: false
  },
  AlertPolicy: {
    type: 'object',
    required: [
      'id',
      'name',
      'channels',
      'events',
      'after_min',
      'remind_every_min',
      'escalate',
      'on_resolved',
      'group_window_s',
      'default',
      'attached'
    ],
    properties: {
      id,
      name: { type: 'string' },
      channels: { type: 'array', items: id },
      events: { type: 'array', items: { type: 'string', enum: [...ALERT_EVENTS] } },
      after_min: { type: 'integer', minimum: 0 },
      remind_every_min: nullable({ type: 'integer', minimum: 1 }),
      escalate: {
        type: 'array',
        items: {
          type: 'object',
          required: ['after_min', 'channels'],
          properties: { after_min: { type: 'integer' }, channels: { type: 'array', items: id } }
        }
      },
      on_resolved: { type: 'boolean' },
      group_window_s: { type: 'integer', minimum: 0 },
      default: { type: 'boolean' },
      attached: {
        type: 'object',
        required: ['sites', 'pages'],
        properties: { sites: { type: 'integer', minimum: 0 }, pages: { type: 'integer', minimum: 0 } },
        additionalProperties: false
      }
    },
    additionalProperties: false
  },
  AlertPolicyList: {
    type: 'object',
    required: ['policies'],
    properties: { policies: { type: 'array', items: ref('schemas', 'AlertPolicy') } },
    additionalProperties: false
  },
  SiteAlertingRequest: {
    type: 'object',
    minProperties: 1,
    properties: {
      alert_policy: { ...nullable(id), description: 'The site\u2019s own policy; null: its pages\u2019 policies, else the default.' },
      depends_on: {
        ...nullable({ type: 'string', maxLength: 2048 }),
        description: 'A tracked site: while it is down this one sends nothing of its own.'
      }
    },
    additionalProperties: false
  },
  SiteAlerting: {
    type: 'object',
    required: ['domain', 'alert_policy', 'page_policies', 'depends_on'],
    properties: {
      domain: { type: 'string' },
      alert_policy: nullable(id),
      page_policies: { type: 'array', items: id },
      depends_on: nullable({ type: 'string' })
    },
    additionalProperties: false
  },
  PageAlerting: {
    type: 'object',
    required: ['slug', 'alert_policy'],
    properties: { slug: { type: 'string' }, alert_policy: nullable(id) },
    additionalProperties: false
  },
  AlertHealth: {
    type: 'object',
    description: 'Alert channels: how many, and the failing ones. A failing channel never makes /healthz 503.',
    required: ['channels', 'failing'],
    properties: {
      channels: { type: 'integer', minimum: 0 },
      failing: {
        type: 'array',
        items: {
          type: 'object',
          required: ['id', 'name', 'kind', 'failing_since', 'last_error', 'pending'],
          properties: {
            id,
            name: { type: 'string' },
            kind: kindEnum,
            failing_since: nullable({ type: 'string' }),
            last_error: nullable({ type: 'string' }),
            pending: { type: 'integer', minimum: 0 }
          },
          additionalProperties: false
        }
      }
    },
    additionalProperties: false
  }
}
