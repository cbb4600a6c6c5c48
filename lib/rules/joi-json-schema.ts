import type Joi from 'joi'

/**
 * A Joi schema's description as JSON Schema (draft 2020-12), for editors: types, keys, bounds,
 * patterns, allowed values and null where Joi allows it. What Joi checks in code (a custom rule:
 * a domain's normal form, a title's characters) has no JSON Schema form and shows as its base
 * type or as anything; the service judges the file again by the Joi rules themselves.
 */

type Json = Record<string, unknown>
interface Described {
  type: string
  flags?: { presence?: string; only?: boolean; description?: string; unknown?: boolean }
  allow?: unknown[]
  rules?: Array<{ name: string; args?: Record<string, unknown> }>
  keys?: Record<string, Described>
  items?: Described[]
  matches?: Array<{ schema?: Described }>
}

function bounds(d: Described, out: Json, names: Record<string, string>): void {
  for (const rule of d.rules ?? []) {
    const key = names[rule.name]
    if (key !== undefined && rule.args?.limit !== undefined) out[key] = rule.args.limit
    if (rule.name === 'integer') out.type = 'integer'
    if (rule.name === 'pattern' && typeof rule.args?.regex === 'string') out.pattern = rule.args.regex.replace(/^\/(.*)\/[a-z]*$/, '$1')
  }
}

function convert(d: Described): Json {
  const allowed = (d.allow ?? []).filter((v) => v !== null)
  const nullable = (d.allow ?? []).includes(null)
  let out: Json
  if (d.flags?.only === true) out = { enum: allowed }
  else if (d.type === 'object') {
    const keys = d.keys ?? {}
    out = {
      type: 'object',
      properties: Object.fromEntries(Object.entries(keys).map(([k, v]) => [k, convert(v)])),
      additionalProperties: d.flags?.unknown === true
    }
    const required = Object.entries(keys)
      .filter(([, v]) => v.flags?.presence === 'required')
      .map(([k]) => k)
    if (required.length > 0) out.required = required
  } else if (d.type === 'array') {
    out = { type: 'array' }
    const item = d.items?.[0]
    if (item !== undefined) out.items = convert(item)
    bounds(d, out, { min: 'minItems', max: 'maxItems' })
  } else if (d.type === 'string') {
    out = { type: 'string' }
    bounds(d, out, { min: 'minLength', max: 'maxLength' })
  } else if (d.type === 'number') {
    out = { type: 'number' }
    bounds(d, out, { min: 'minimum', max: 'maximum' })
  } else if (d.type === 'boolean') out = { type: 'boolean' }
  else if (d.type === 'alternatives') out = { anyOf: (d.matches ?? []).flatMap((m) => (m.schema ? [convert(m.schema)] : [])) }
  else out = {}
  if (nullable) {
    if (typeof out.type === 'string') out.type = [out.type, 'null']
    else if (Array.isArray(out.enum)) out.enum = [...(out.enum as unknown[]), null]
    else if (Object.keys(out).length > 0) out = { anyOf: [out, { type: 'null' }] }
  }
  if (d.flags?.description !== undefined) out.description = d.flags.description
  return out
}

/** The JSON Schema of a Joi schema, with a title and an id. */
export function joiToJsonSchema(schema: Joi.Schema, { id, title }: { id: string; title: string }): Json {
  return { $schema: 'https://json-schema.org/draft/2020-12/schema', $id: id, title, ...convert(schema.describe() as Described) }
}
