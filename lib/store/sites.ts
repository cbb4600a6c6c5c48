import { parseCause } from '../rules/down-cause.js'
import { chunks, ID_CHUNK } from './checks.js'
import { toDate, type Db } from './db.js'
import type { SiteRow, SiteStatus } from './tables.js'
import type { ExpiryNotice } from '../rules/certificates.js'
import type { Expectations, StatusEntry } from '../rules/expectations.js'
import type { SlowState } from '../rules/slow.js'
import type { SiteSettings } from '../rules/site-settings.js'

/**
 * The kinds of `sites` rows that are probed: web sites and the monitors of tcp, tls and dns
 * (docs/decisions.md, "Checks beyond a GET"). Heartbeats wait for pings instead. Every query that
 * reads the sites to probe or to hold in memory reads these kinds.
 */
export const PROBED_KINDS: readonly string[] = ['http', 'tcp', 'tls', 'dns']

/** Settings to write; without `check`, a site's check is left as stored (a configuration file does not manage it). */
export type SettingsToWrite = Omit<SiteSettings, 'check'> & { check?: string | null }

export function toSiteRow(r: Record<string, unknown>): SiteRow {
  return {
    id: Number(r.id),
    domain: String(r.domain),
    name: String(r.name),
    kind: typeof r.kind === 'string' ? r.kind : 'http',
    target: typeof r.target === 'string' ? r.target : null,
    added_at: toDate(r.added_at) as Date,
    removed_at: toDate(r.removed_at),
    status: String(r.status) as SiteStatus,
    blocked: Boolean(r.blocked),
    partial: Boolean(r.partial),
    response_ms: r.response_ms === null ? null : Number(r.response_ms),
    checked_at: toDate(r.checked_at),
    first_checked_at: toDate(r.first_checked_at),
    tls_expires_at: toDate(r.tls_expires_at),
    tls_issuer: typeof r.tls_issuer === 'string' ? r.tls_issuer : null,
    interval_s: r.interval_s === null || r.interval_s === undefined ? null : Number(r.interval_s),
    expect: expectOf(r),
    check: checkOf(r),
    slow: Boolean(r.slow),
    cause: parseCause(r.cause)
  }
}

/** The stored expectations: the status list as its JSON normal form, the others as they are. */
export function expectOf(r: Record<string, unknown>): Expectations {
  return {
    status: typeof r.expect_status === 'string' ? (JSON.parse(r.expect_status) as StatusEntry[]) : null,
    body_contains: typeof r.body_contains === 'string' ? r.body_contains : null,
    max_response_ms: r.max_response_ms === null || r.max_response_ms === undefined ? null : Number(r.max_response_ms)
  }
}

/** The stored check (sealed JSON), or null for the plain web check. */
export function checkOf(r: Record<string, unknown>): string | null {
  return typeof r.check_spec === 'string' ? r.check_spec : null
}

/** The columns that store a site's expectations. */
export function expectColumns(expect: Readonly<Expectations>): Record<string, unknown> {
  return {
    expect_status: expect.status === null ? null : JSON.stringify(expect.status),
    body_contains: expect.body_contains,
    max_response_ms: expect.max_response_ms
  }
}

export interface SiteEntry {
  domain: string
  name: string | null
  /** Settings to store with a new site or one tracked again (absent: none, or its old ones); a tracked one keeps its own. */
  settings?: SettingsToWrite
}

/** The columns that store a site's settings. */
export function settingsColumns(settings: Readonly<SettingsToWrite>): Record<string, unknown> {
  return {
    interval_s: settings.interval_s,
    ...expectColumns(settings.expect),
    ...(settings.check === undefined ? {} : { check_spec: settings.check })
  }
}
export type AddOutcome = 'added' | 'resumed' | 'already'

/** A site as tracking it left it: its outcome, row id and current name. */
export interface TrackedSite {
  outcome: AddOutcome
  id: number
  domain: string
  name: string
}

/**
 * Tracks normalised domains inside the caller's transaction `db`. A removed site is tracked again
 * in a new tracking period (its history stays); an already tracked one is left alone except for a
 * new name, if one is given and `renameTracked` (the default) allows it. Returns each entry's
 * outcome and row, in order. Entries must be distinct.
 */
export async function trackSites({
  db,
  entries,
  now,
  renameTracked = true
}: {
  db: Db
  entries: readonly SiteEntry[]
  now: Date
  /** False: an entry already tracked is left exactly as it is (the sites API answers 409 for it). */
  renameTracked?: boolean
}): Promise<TrackedSite[]> {
  if (entries.length === 0) return []
  const domains = entries.map((e) => e.domain)
  const existing = new Map<string, { removed: boolean }>()
  for (const r of await db('sites').whereIn('domain', domains).select('domain', 'removed_at')) {
    existing.set(String(r.domain), { removed: r.removed_at !== null })
  }
  const fresh = entries.filter((e) => !existing.has(e.domain))
  for (let i = 0; i < fresh.length; i += 200) {
    await db('sites').insert(
      fresh.slice(i, i + 200).map((e) => ({
        domain: e.domain,
        name: e.name ?? e.domain,
        added_at: now,
        changed_at: now,
        ...(e.settings ? settingsColumns(e.settings) : {})
      }))
    )
  }
  const outcomes = new Map<string, AddOutcome>()
  for (const e of entries) {
    const found = existing.get(e.domain)
    if (!found) {
      outcomes.set(e.domain, 'added')
      continue
    }
    const patch: Record<string, unknown> = {}
    if (e.name !== null && (found.removed || renameTracked)) patch.name = e.name
    // An already tracked site keeps its settings: they change through `changeSite` alone (lib/monitoring/change-site.ts).
    if (e.settings && found.removed) Object.assign(patch, settingsColumns(e.settings))
    if (found.removed)
      Object.assign(patch, {
        removed_at: null,
        added_at: now,
        status: 'unavailable',
        blocked: false,
        partial: false,
        response_ms: null,
        checked_at: null,
        first_checked_at: null,
        tls_expires_at: null,
        tls_issuer: null,
        slow: false,
        slow_streak: 0,
        maintenance_until: null,
        // A new tracking period is scheduled afresh, like a new site.
        due_at: null,
        lease_owner: null,
        lease_until: null
      })
    if (Object.keys(patch).length > 0)
      await db('sites')
        .where({ domain: e.domain })
        .update({ ...patch, changed_at: now })
    outcomes.set(e.domain, found.removed ? 'resumed' : 'already')
  }
  // One read of the rows as written: ids of the new ones, names of the renamed ones.
  const rows = new Map<string, { id: number; name: string }>()
  for (const r of await db('sites').whereIn('domain', domains).select('id', 'domain', 'name')) {
    rows.set(String(r.domain), { id: Number(r.id), name: String(r.name) })
  }
  return entries.map((e) => {
    const row = rows.get(e.domain) as { id: number; name: string }
    return { outcome: outcomes.get(e.domain) as AddOutcome, id: row.id, domain: e.domain, name: row.name }
  })
}

/** A site's row as a write locks it: what recording a check needs to know. */
export interface LockedSite {
  id: number
  domain: string
  name: string
  /** A monitor's kind (tcp, tls, dns), which its events name it by; absent for a web site. */
  kind?: string
  added_at: Date
  removed_at: Date | null
  checked_at: Date | null
  /** What `certificate.expiring` announced last for the site, if anything. */
  tls_notice: ExpiryNotice | null
  /** The slow threshold in force and the slow rule's state. */
  max_response_ms: number | null
  slow: SlowState
  /** The end of the maintenance whose start was announced; null when none is. */
  maintenance_until: Date | null
}

/** `SELECT ... FOR UPDATE` on MySQL; SQLite has one writer at a time and no such clause. */
export const forUpdate = <Q extends { forUpdate(): Q }>(db: Db, query: Q): Q =>
  db.client.config.client === 'mysql2' ? query.forUpdate() : query

/**
 * Reads and locks the sites' rows, in id order (removed ones too), until the transaction `db` ends:
 * concurrent writers of one site queue on its row (SQLite has a single connection anyway). Sites
 * whose row is gone are missing from the map.
 */
export async function lockSites({ db, ids }: { db: Db; ids: readonly number[] }): Promise<Map<number, LockedSite>> {
  const sites = new Map<number, LockedSite>()
  const sorted = [...new Set(ids)].sort((a, b) => a - b)
  for (const part of chunks(sorted, ID_CHUNK)) {
    const query = db('sites')
      .whereIn('id', part)
      .orderBy('id')
      .select(
        'id',
        'domain',
        'name',
        'kind',
        'checked_at',
        'removed_at',
        'added_at',
        'tls_notice_expires_at',
        'tls_notice_days',
        'max_response_ms',
        'slow',
        'slow_streak',
        'maintenance_until'
      )
    for (const row of await forUpdate(db, query)) {
      sites.set(Number(row.id), {
        id: Number(row.id),
        domain: String(row.domain),
        name: String(row.name),
        ...(row.kind === 'http' ? {} : { kind: String(row.kind) }),
        added_at: toDate(row.added_at) as Date,
        removed_at: toDate(row.removed_at),
        checked_at: toDate(row.checked_at),
        tls_notice: noticeOf(row),
        max_response_ms: row.max_response_ms === null ? null : Number(row.max_response_ms),
        slow: { slow: Boolean(row.slow), streak: Number(row.slow_streak) },
        maintenance_until: toDate(row.maintenance_until)
      })
    }
  }
  return sites
}

function noticeOf(row: Record<string, unknown>): ExpiryNotice | null {
  const expiresAt = toDate(row.tls_notice_expires_at)
  return expiresAt === null || row.tls_notice_days === null ? null : { expiresAt, days: Number(row.tls_notice_days) }
}

/** Records what `certificate.expiring` announced for each site, inside the caller's transaction `db`. */
export async function updateExpiryNotices({ db, notices }: { db: Db; notices: ReadonlyMap<number, ExpiryNotice> }): Promise<void> {
  for (const [id, notice] of notices) {
    await db('sites').where({ id }).update({ tls_notice_expires_at: notice.expiresAt, tls_notice_days: notice.days })
  }
}

/**
 * A tracked site's row by domain (a web site's, or a monitor's identity: no route takes one for the
 * other), locked until the caller's transaction `db` ends; null when it is not tracked.
 */
export async function lockTrackedSite({ db, domain }: { db: Db; domain: string }): Promise<SiteRow | null> {
  const row = await forUpdate(db, db('sites').where({ domain }).whereIn('kind', PROBED_KINDS).whereNull('removed_at').first('*'))
  return row ? toSiteRow(row) : null
}

/**
 * Writes a site's settings (and its name, unless null); `changed_at` moves so that every instance
 * re-reads the site.
 */
export async function writeSiteSettings({
  db,
  id,
  settings,
  name,
  now
}: {
  db: Db
  id: number
  settings: SettingsToWrite
  name: string | null
  now: Date
}): Promise<void> {
  await db('sites')
    .where({ id })
    .update({ ...settingsColumns(settings), ...(name === null ? {} : { name }), changed_at: now })
}

/** Marks a site removed (no longer tracked) at `now`; its checks and outages are kept. */
export async function markSiteRemoved({ db, id, now }: { db: Db; id: number; now: Date }): Promise<void> {
  await db('sites').where({ id }).update({ removed_at: now, changed_at: now })
}

export async function listTrackedSites({ db }: { db: Db }): Promise<SiteRow[]> {
  const rows = await db('sites').whereNull('removed_at').where('kind', 'http').orderBy('domain').select('*')
  return rows.map(toSiteRow)
}

/** A site's row by domain, tracked or removed (its history stays); null when it was never tracked. */
export async function findSite({ db, domain }: { db: Db; domain: string }): Promise<SiteRow | null> {
  const row = await db('sites').where({ domain }).first('*')
  return row ? toSiteRow(row) : null
}

/** The ids of the sites with these domains, tracked or removed, by domain: a plain read (lock them with {@link lockSites}). */
export async function siteIdsByDomain({ db, domains }: { db: Db; domains: readonly string[] }): Promise<Map<string, number>> {
  const ids = new Map<string, number>()
  for (const part of chunks([...domains], ID_CHUNK)) {
    const rows: Array<{ id: unknown; domain: unknown }> = await db('sites').whereIn('domain', part).select('id', 'domain')
    for (const row of rows) ids.set(String(row.domain), Number(row.id))
  }
  return ids
}

/** The sites' first recorded checks (null: none yet), by site id. */
export async function listFirstCheckedAt({ db, siteIds }: { db: Db; siteIds: readonly number[] }): Promise<Map<number, Date | null>> {
  const first = new Map<number, Date | null>()
  for (const part of chunks([...new Set(siteIds)], ID_CHUNK)) {
    for (const r of await db('sites').whereIn('id', part).select('id', 'first_checked_at'))
      first.set(Number(r.id), toDate(r.first_checked_at))
  }
  return first
}
