import { parseArgs } from 'node:util'
import type { Config } from '../../config/index.js'
import { generateKey, hashKey } from '../keys.js'
import { DEFAULT_SCOPES, formatScopes, parseScopes, ScopeListError, SCOPES, type Scope } from '../rules/scopes.js'
import type { Db } from '../store/db.js'
import { createKey, listKeys, revokeKey } from '../store/keys.js'
import { CommandError, UsageError, println, table, type CliIo } from './io.js'

export const KEYS_HELP = `usage:
  site-status keys create --name NAME [--limit N] [--scopes LIST]
                                issue a key (N requests/minute); prints it once. LIST is a
                                comma-separated subset of ${SCOPES.join(', ')} (default ${DEFAULT_SCOPES.join(',')}):
                                read: status, outages, sites list; check: on-demand checks;
                                manage: add and remove sites
  site-status keys list         keys with id, name, limit, created, revoked, scopes
  site-status keys revoke ID    revoke a key (effective within one second)`

const MAX_LIMIT = 1_000_000

function parseLimit(text: string | undefined): number | null {
  if (text === undefined) return null
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > MAX_LIMIT) {
    throw new UsageError(`--limit must be a whole number from 1 to ${MAX_LIMIT}`)
  }
  return Number(text)
}

function parseScopesOption(text: string | undefined): Scope[] {
  if (text === undefined) return [...DEFAULT_SCOPES]
  try {
    return parseScopes(text)
  } catch (err) {
    if (err instanceof ScopeListError) throw new UsageError(`--${err.message}`)
    throw err
  }
}

export async function keysCommand(args: string[], io: CliIo, open: () => Promise<{ db: Db; config: Config }>): Promise<number> {
  const [sub, ...rest] = args
  if (sub === undefined || sub === '--help' || sub === '-h' || rest.includes('--help')) {
    // Asked for, help is output (stdout); without a command it is a usage error (stderr, exit 2).
    println(sub === undefined ? io.stderr : io.stdout, KEYS_HELP)
    return sub === undefined ? 2 : 0
  }
  if (sub === 'create') {
    const { values, positionals } = parseArgs({
      args: rest,
      options: { name: { type: 'string' }, limit: { type: 'string' }, scopes: { type: 'string' } },
      strict: true,
      allowPositionals: true
    })
    if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`)
    const name = values.name?.trim()
    if (!name) throw new UsageError('keys create needs --name NAME')
    if (name.length > 100 || /\p{Cc}/u.test(name)) throw new UsageError('--name must be 1 to 100 printable characters')
    const rateLimit = parseLimit(values.limit)
    const scopes = formatScopes(parseScopesOption(values.scopes))
    const { db, config } = await open()
    const key = generateKey()
    const row = await createKey({ db, name, keyHash: hashKey(key), rateLimit, scopes, now: io.now() })
    println(
      io.stderr,
      `created key ${row.id} "${name}" with a limit of ${rateLimit ?? config.rateLimitPerMin} requests/minute${rateLimit === null ? ' (the default)' : ''} and the scopes ${scopes}`
    )
    println(io.stderr, 'store it now: it is shown only this once')
    println(io.stdout, key)
    return 0
  }
  if (sub === 'list') {
    parseArgs({ args: rest, options: {}, strict: true })
    const { db, config } = await open()
    const rows = await listKeys({ db })
    println(
      io.stdout,
      table(
        ['ID', 'NAME', 'LIMIT', 'CREATED', 'REVOKED', 'SCOPES'],
        rows.map((k) => [
          String(k.id),
          k.name,
          k.rate_limit === null ? `${config.rateLimitPerMin} (default)` : String(k.rate_limit),
          k.created_at.toISOString(),
          k.revoked_at?.toISOString() ?? '-',
          k.scopes
        ])
      )
    )
    return 0
  }
  if (sub === 'revoke') {
    const { positionals } = parseArgs({ args: rest, options: {}, strict: true, allowPositionals: true })
    if (positionals.length !== 1 || !/^\d+$/.test(positionals[0] as string))
      throw new UsageError('keys revoke needs one numeric key ID, as keys list shows it')
    const text = positionals[0] as string
    const id = Number(text)
    const { db } = await open()
    // An ID past 2^53 cannot be stored; say so with the digits given, not as 1e+23.
    const outcome = Number.isSafeInteger(id) ? await revokeKey({ db, id, now: io.now() }) : 'missing'
    if (outcome === 'missing') throw new CommandError(`no key with ID ${text}`)
    println(io.stdout, outcome === 'revoked' ? `revoked key ${id}` : `key ${id} was already revoked`)
    return 0
  }
  throw new UsageError(`unknown keys command "${sub}"`)
}
