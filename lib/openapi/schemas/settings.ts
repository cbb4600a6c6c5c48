import { MAX_INTERVAL_S, MIN_INTERVAL_S } from '../../rules/site-settings.js'
import { nullable, ref, type Json } from '../parts.js'

const intervalS: Json = { type: 'integer', minimum: MIN_INTERVAL_S, maximum: MAX_INTERVAL_S }
const domain: Json = {
  type: 'string',
  description: 'A hostname, or an http(s) URL reduced to its host; normalised like everywhere (lower case, punycode).',
  examples: ['example.com']
}
const name: Json = { type: 'string', minLength: 1, maxLength: 200, description: 'Display name; the domain when absent.' }
const settingKeys: Json = {
  interval_s: {
    ...nullable(intervalS),
    description: "How often the site is checked, in seconds; null or absent: the service's CHECK_INTERVAL_S."
  },
  expect: {
    oneOf: [ref('schemas', 'CheckExpectations'), { type: 'null' }],
    description:
      "What each location expects of the site's final answer (a location whose answer fails reports `down`, counted by the quorum) and the slow threshold. In a change, keys absent are kept and a key set to null is cleared; `expect: null` clears them all."
  },
  check: {
    oneOf: [ref('schemas', 'Check'), { type: 'null' }],
    description:
      "The request the site's checks send and the assertions each location judges its answer by: a `check` of type `http` only (a tcp, tls or dns check runs on demand, 400 here). Replaced whole in a change; null: back to the plain `GET /`. The values of `authorization`, `cookie` and the headers named in `secret_headers` are stored sealed (WEBHOOK_KEY) and shown as `********`; a change must send them again."
  }
}

/** A site's own settings: as requests set them and as the status record shows them. */
export const settingsSchemas: Json = {
  AddSiteRequest: {
    type: 'object',
    required: ['domain'],
    properties: { domain, name, ...settingKeys },
    additionalProperties: false
  },
  ChangeSiteRequest: {
    type: 'object',
    minProperties: 1,
    properties: { name, ...settingKeys },
    additionalProperties: false
  },
  SiteSettings: {
    type: 'object',
    description: 'What the site sets for itself, and only that: an empty object when it keeps every default.',
    properties: {
      interval_s: intervalS,
      expect: {
        type: 'object',
        properties: {
          status: { type: 'array', minItems: 1, items: { oneOf: [{ type: 'integer' }, { type: 'string' }] } },
          body_contains: { type: 'string', minLength: 1 },
          max_response_ms: { type: 'integer', minimum: 1 }
        },
        additionalProperties: false
      },
      check: { ...ref('schemas', 'Check'), description: 'The http check the site sends, its secret header values shown as `********`.' }
    },
    additionalProperties: false
  }
}
