import { configFileSchema } from '../rules/config-file.js'
import { joiToJsonSchema } from '../rules/joi-json-schema.js'

/** Where the service serves the file's JSON Schema. */
export const SCHEMA_PATH = '/api/v1/config.schema.json'

/** The configuration file's JSON Schema, generated from the Joi rules the service judges it by. */
export function configJsonSchema(publicUrl: string): Record<string, unknown> {
  return joiToJsonSchema(configFileSchema, { id: `${publicUrl}${SCHEMA_PATH}`, title: 'Site Status API: monitoring as code' })
}
