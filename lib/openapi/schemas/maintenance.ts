import { MAX_ONE_OFF_MS, MAX_WEEKLY_MINUTES, WEEKDAYS } from '../../rules/maintenance.js'
import { nullable, ref, timestamp, type Json } from '../parts.js'

const reason: Json = {
  ...nullable({ type: 'string', minLength: 1, maxLength: 200 }),
  description: 'Shown with the maintenance while it is in force (status record, page, events); null when none.'
}
const DAYS = MAX_ONE_OFF_MS / 86_400_000

/** Maintenance windows: the request, the stored window, the list, and the maintenance in force. */
export const maintenanceSchemas: Json = {
  WeeklySchedule: {
    type: 'object',
    required: ['day', 'time', 'duration_minutes', 'zone'],
    properties: {
      day: { type: 'string', enum: [...WEEKDAYS], description: 'The local day it starts on.' },
      time: { type: 'string', pattern: '^([01]\\d|2[0-3]):[0-5]\\d$', description: 'The local time it starts at.', examples: ['02:00'] },
      duration_minutes: { type: 'integer', minimum: 1, maximum: MAX_WEEKLY_MINUTES, description: 'Elapsed minutes.' },
      zone: { type: 'string', description: 'An IANA time zone (offsets such as +01:00 are refused).', examples: ['Europe/Berlin', 'UTC'] }
    },
    additionalProperties: false
  },
  MaintenanceWindowRequest: {
    description: `One-off: \`from\` and \`to\` (ISO 8601 with a zone, \`from\` first, at most ${DAYS} days apart). Weekly: \`weekly\`. Never both.`,
    oneOf: [
      {
        type: 'object',
        required: ['from', 'to'],
        properties: {
          from: { type: 'string', description: 'Start, inclusive.', examples: ['2026-12-01T02:00:00Z'] },
          to: { type: 'string', description: 'End, exclusive.', examples: ['2026-12-01T02:30:00+00:00'] },
          reason
        },
        additionalProperties: false
      },
      {
        type: 'object',
        required: ['weekly'],
        properties: { weekly: ref('schemas', 'WeeklySchedule'), reason },
        additionalProperties: false
      }
    ]
  },
  MaintenanceWindow: {
    oneOf: [
      {
        type: 'object',
        required: ['id', 'from', 'to', 'reason'],
        properties: { id: { type: 'integer', minimum: 1 }, from: timestamp, to: timestamp, reason },
        additionalProperties: false
      },
      {
        type: 'object',
        required: ['id', 'weekly', 'reason'],
        properties: { id: { type: 'integer', minimum: 1 }, weekly: ref('schemas', 'WeeklySchedule'), reason },
        additionalProperties: false
      }
    ]
  },
  MaintenanceWindowList: {
    type: 'object',
    required: ['windows'],
    properties: { windows: { type: 'array', items: ref('schemas', 'MaintenanceWindow') } },
    additionalProperties: false
  },
  Maintenance: {
    type: 'object',
    description: 'The maintenance in force: windows that overlap or touch count as one.',
    required: ['until', 'reason'],
    properties: {
      until: { ...timestamp, description: 'When it ends.' },
      reason: { ...nullable({ type: 'string' }), description: 'The reason of the earliest-started window in force.' }
    },
    additionalProperties: false
  }
}
