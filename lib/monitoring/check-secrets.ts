import type { CheckSpec } from '../rules/check-spec.js'

/** What seals a secret for the database and opens it again (the webhooks' SecretBox: AES-256-GCM, WEBHOOK_KEY). */
export interface Sealer {
  seal(secret: string): string
  open(stored: string): string
}

/**
 * A tracked site's check as the database keeps it: the JSON of its normal form, each secret header's
 * value (`authorization`, `cookie`, those marked secret) sealed. A dump of the database, a log of a
 * row or a status record never holds the secret itself.
 */
export function sealCheck(spec: CheckSpec, box: Sealer): string {
  return JSON.stringify(withSecrets(spec, (value) => box.seal(value)))
}

/** The check a location is sent, its secret header values opened. */
export function openCheck(stored: string, box: Sealer): CheckSpec {
  return withSecrets(JSON.parse(stored) as CheckSpec, (value) => box.open(value))
}

function withSecrets(spec: CheckSpec, change: (value: string) => string): CheckSpec {
  if (spec.type !== 'http' || spec.secret_headers.length === 0) return spec
  const headers = { ...spec.headers }
  for (const name of spec.secret_headers) {
    const value = headers[name]
    if (value !== undefined) headers[name] = change(value)
  }
  return { ...spec, headers }
}
