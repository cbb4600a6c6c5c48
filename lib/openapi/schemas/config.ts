import type { Json } from '../parts.js'

const value: Json = { description: 'The value in the normal form (null: not set).' }

export const configSchemas: Json = {
  ConfigPlan: {
    type: 'object',
    required: ['changed', 'summary', 'kept', 'items', 'text'],
    properties: {
      changed: { type: 'boolean', description: 'Whether anything differs (plan) or was written (apply).' },
      summary: {
        type: 'object',
        required: ['create', 'change', 'remove'],
        properties: { create: { type: 'integer' }, change: { type: 'integer' }, remove: { type: 'integer' } }
      },
      kept: {
        type: 'integer',
        description: 'Resources an earlier apply made that the file leaves out, kept because `prune` was not asked.'
      },
      items: {
        type: 'array',
        items: {
          type: 'object',
          required: ['resource', 'key', 'action', 'changes'],
          properties: {
            resource: { type: 'string', enum: ['site', 'monitor', 'page', 'webhook', 'heartbeat', 'channel', 'alert_policy'] },
            key: { type: 'string', description: 'The domain, slug, URL or name.' },
            action: { type: 'string', enum: ['create', 'change', 'remove'] },
            changes: {
              type: 'array',
              items: {
                type: 'object',
                required: ['field', 'old', 'new'],
                properties: { field: { type: 'string', description: 'Such as `expect.status`.' }, old: value, new: value }
              }
            }
          }
        }
      },
      text: { type: 'string', description: 'The plan as the operator tool prints it.' }
    }
  }
}
