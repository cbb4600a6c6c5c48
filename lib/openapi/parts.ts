/**
 * The small pieces every part of the OpenAPI document is made of. Schemas are JSON Schema 2020-12
 * (OpenAPI 3.1); the API tests validate real responses against them, so a renamed or dropped field
 * fails a test.
 */
export type Json = Record<string, unknown>

export const ref = (kind: string, name: string): Json => ({ $ref: `#/components/${kind}/${name}` })

/** ISO 8601 UTC with milliseconds and Z, the one timestamp format of every response. */
export const timestamp: Json = {
  type: 'string',
  format: 'date-time',
  pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$',
  examples: ['2026-11-22T06:25:07.123Z']
}
export const nullable = (schema: Json): Json => ({ oneOf: [schema, { type: 'null' }] })
/** A check's verdict across its locations. */
export const checkStatus: Json = { type: 'string', enum: ['up', 'down', 'unconfirmed', 'unavailable'] }
/** A tracked site's status: a check's verdict, or `pending` before its first check. */
export const siteStatus: Json = { type: 'string', enum: ['up', 'down', 'unconfirmed', 'unavailable', 'pending'] }
export const percent: Json = { type: 'number', minimum: 0, maximum: 100 }
export const ms: Json = { type: 'number', minimum: 0 }
