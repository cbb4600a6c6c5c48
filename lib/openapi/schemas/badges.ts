import { BADGE_STYLES } from '../../badge/describe.js'
import type { Json } from '../parts.js'

/** Badges: shields.io's endpoint format. */
export const badgeSchemas: Json = {
  EndpointBadge: {
    type: 'object',
    description: "shields.io's endpoint-badge format (https://shields.io/badges/endpoint-badge).",
    required: ['schemaVersion', 'label', 'message', 'color'],
    properties: {
      schemaVersion: { const: 1 },
      label: { type: 'string' },
      message: { type: 'string' },
      color: { type: 'string', enum: ['green', 'red', 'yellow', 'orange', 'lightgrey', 'blue'] },
      cacheSeconds: { type: 'integer', minimum: 300 },
      style: { type: 'string', enum: [...BADGE_STYLES] },
      logoSvg: { type: 'string', description: 'The `logo` asked for, as an SVG document.' }
    },
    additionalProperties: false
  }
}
