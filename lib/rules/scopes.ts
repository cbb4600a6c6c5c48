/** What a key may do: `read` status, outages and sites; `check` domains on demand; `manage` sites (and later webhooks). */
export const SCOPES = ['read', 'check', 'manage'] as const
export type Scope = (typeof SCOPES)[number]

/** What every key could do before scopes existed, and what a key gets unless told otherwise. */
export const DEFAULT_SCOPES: readonly Scope[] = ['read', 'check']

export class ScopeListError extends Error {
  constructor() {
    super(`scopes must be a comma-separated list of ${SCOPES.join(', ')} (at least one)`)
    this.name = 'ScopeListError'
  }
}

export function isScope(text: string): text is Scope {
  return (SCOPES as readonly string[]).includes(text)
}

/**
 * A comma-separated scope list (`read,manage`, spaces and repeats allowed) as the scopes it names,
 * in the canonical order; throws {@link ScopeListError} for an unknown scope or an empty list.
 */
export function parseScopes(text: string): Scope[] {
  const named = text
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== '')
  if (named.length === 0 || !named.every(isScope)) throw new ScopeListError()
  return SCOPES.filter((s) => named.includes(s))
}

/** The scopes as stored and shown: comma-separated, canonical order. */
export function formatScopes(scopes: readonly Scope[]): string {
  return SCOPES.filter((s) => scopes.includes(s)).join(',')
}

/**
 * The scopes a stored list grants: unknown names (a newer version's scope, a hand edit) grant
 * nothing rather than failing the key.
 */
export function storedScopes(text: string): Scope[] {
  const named = text.split(',').map((s) => s.trim())
  return SCOPES.filter((s) => named.includes(s))
}
