import { readFileSync } from 'node:fs'
import Joi from 'joi'
import { ConfigError } from './errors.js'

/**
 * One location: a label in the spec's form and how it reaches sites: from this machine, through a
 * regional forward proxy (`proxy`), or from a region of its own through the agents that serve it
 * over NATS (`agent`).
 */
export interface LocationConfig {
  readonly label: string
  readonly proxy: string | null
  /**
   * Who resolves the site's name behind a proxy: `local` (this machine resolves and vets it, the
   * proxy is asked to CONNECT to the vetted address) or `proxy` (the proxy resolves: regional
   * answers, safe only behind a proxy that itself denies non-public destinations).
   */
  readonly resolve: 'local' | 'proxy'
  /** The agent location (`site-status agent --location ID`) that serves this location; unset: none. */
  readonly agent?: string
}

/** An agent location's name: it is part of the NATS subject its probes travel on. */
export const AGENT_LOCATION = /^[a-z0-9-]{1,32}$/

export const DEFAULT_LOCATIONS: LocationConfig[] = [1, 2, 3].map((n) => ({
  label: `Local ${n}, Local`,
  proxy: null,
  resolve: 'local' as const
}))

const locationSchema = Joi.object({
  label: Joi.string()
    .trim()
    .max(100)
    .pattern(/^[^,]+ \d+, [^,]+$/)
    .required()
    .messages({ 'string.pattern.base': 'label "{#value}" must have the form "City 1, Country"' }),
  proxy: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .allow(null),
  resolve: Joi.string().valid('local', 'proxy'),
  agent: Joi.string()
    .pattern(AGENT_LOCATION)
    .messages({ 'string.pattern.base': 'agent "{#value}" must be 1 to 32 lower-case letters, digits or hyphens, such as fra1' })
})
  .oxor('proxy', 'agent')
  .oxor('resolve', 'agent')
  .unknown(false)

/** A location as LOCATIONS gives it, before the defaults are filled in. */
interface LocationInput {
  label: string
  proxy?: string | null
  resolve?: 'local' | 'proxy'
  agent?: string
}

const locationsSchema = Joi.array().items(locationSchema).min(1).max(50).unique('label')

/** LOCATIONS: inline JSON or a file holding it; unset, three local locations. */
export function parseLocations(raw: string | undefined): LocationConfig[] {
  if (raw === undefined) return DEFAULT_LOCATIONS
  let text = raw.trim()
  // Inline JSON starts with `[` (or `{`, so that a lone object is reported as "not an array" rather than as a missing file).
  if (!text.startsWith('[') && !text.startsWith('{')) {
    try {
      text = readFileSync(text, 'utf8')
    } catch (err) {
      throw new ConfigError(`LOCATIONS: cannot read file "${raw}" (${(err as NodeJS.ErrnoException).code ?? 'error'})`)
    }
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw new ConfigError(
      'LOCATIONS: not valid JSON (expected an array like [{"label":"Frankfurt 1, Germany","proxy":"http://10.0.0.5:3128"}])'
    )
  }
  // Joi's results are typed `any`; the schema above is what makes them this shape.
  const result = locationsSchema.validate(parsed) as Joi.ValidationResult<LocationInput[]>
  if (result.error) throw new ConfigError(`LOCATIONS: ${result.error.message}`)
  return result.value.map((l) => ({
    label: l.label,
    proxy: l.proxy ?? null,
    resolve: l.resolve ?? 'local',
    ...(l.agent === undefined ? {} : { agent: l.agent })
  }))
}
