import { budgetHeaders } from './components.js'
import { errors, noKey, ok, scope, scopedErrors } from './operations.js'
import { ref, type Json } from './parts.js'

const prune: Json = {
  name: 'prune',
  in: 'query',
  required: false,
  description: 'Also remove what an earlier apply made that the file no longer names (never what was made by hand).',
  schema: { type: 'boolean', default: false }
}

const file: Json = {
  required: true,
  description:
    'The configuration file: YAML (`application/yaml`, `text/yaml`, `text/plain`) or JSON, at most 16 MiB, as `GET /api/v1/config.schema.json` describes it. The API reads no environment: a `${NAME}` in the body is refused as not set.',
  content: {
    'application/yaml': { schema: { type: 'string' } },
    'text/plain': { schema: { type: 'string' } },
    'application/json': { schema: { type: 'object', additionalProperties: true } }
  }
}

const fileErrors = (...extra: string[]): Json => ({
  ...scopedErrors('BadRequest', ...extra, 'UnsupportedMediaType'),
  ...errors('PayloadTooLarge')
})

const BAD = 'A file that does not pass is a 400 naming each problem as `request body:LINE: FIELD: message`, before anything is written.'

/** Monitoring as code: the file's schema, a plan and an apply. */
export const configPaths: Json = {
  '/api/v1/config.schema.json': {
    get: {
      operationId: 'getConfigSchema',
      tags: ['api'],
      summary: "The configuration file's JSON Schema, generated from the rules the service judges it by",
      security: noKey,
      responses: {
        200: {
          description: 'A JSON Schema (draft 2020-12).',
          content: { 'application/schema+json': { schema: { type: 'object', additionalProperties: true } } }
        },
        ...errors('MethodNotAllowed', 'InternalError')
      }
    }
  },
  '/api/v1/config/plan': {
    post: {
      operationId: 'plan',
      tags: ['api'],
      summary: 'What applying a configuration file would create, change and remove, field by field (costs 1)',
      description: `Reads only. ${BAD} An alert policy the file names that does not exist is a 400 too.`,
      security: scope('manage'),
      parameters: [prune],
      requestBody: file,
      responses: { 200: ok('The plan.', ref('schemas', 'ConfigPlan')), ...fileErrors() }
    }
  },
  '/api/v1/config/apply': {
    post: {
      operationId: 'apply',
      tags: ['api'],
      summary: 'Apply a configuration file in one transaction, all or nothing (costs 1)',
      description: `Makes the plan from what is stored at that moment and carries it out whole; \`changed\` is false when nothing differed (nothing was written). One apply at a time across every instance and the operator tool: another one in progress is a 409 and this one writes nothing. ${BAD} The scheduler of every instance picks the changes up without a restart.`,
      security: scope('manage'),
      parameters: [prune],
      requestBody: file,
      responses: { 200: { ...ok('What was done.', ref('schemas', 'ConfigPlan')), headers: budgetHeaders(true) }, ...fileErrors('Conflict') }
    }
  }
}
