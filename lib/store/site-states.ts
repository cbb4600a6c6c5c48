import { toDate, type Db } from './db.js'
import { checkOf, expectOf, PROBED_KINDS, toSiteRow } from './sites.js'
import type { Expectations } from '../rules/expectations.js'
import type { SiteRow } from './tables.js'
import { parseCause } from '../rules/down-cause.js'

/** An outage's span of time, open-ended while ongoing. */
export interface OutageSpan {
  started_at: Date
  ended_at: Date | null
}

export interface StoredSiteState {
  site: SiteRow
  /** Outages that may matter for uptime (ended inside the window or ongoing), oldest first. */
  outages: OutageSpan[]
  /** The site's newest outage, however old. */
  lastOutage: OutageSpan | null
}

function span(r: Record<string, unknown>): OutageSpan {
  return { started_at: toDate(r.started_at) as Date, ended_at: toDate(r.ended_at) }
}

/**
 * Everything the status endpoint needs for the given tracked sites (all tracked sites when `siteIds`
 * is absent): their rows, the outages since `since`, and each one's newest outage.
 */
export async function loadSiteStates({ db, since, siteIds }: { db: Db; since: Date; siteIds?: number[] }): Promise<StoredSiteState[]> {
  if (siteIds !== undefined && siteIds.length === 0) return []
  const scope = <Q extends { whereIn(col: string, v: number[]): Q }>(q: Q, col: string): Q => (siteIds ? q.whereIn(col, siteIds) : q)
  const sites = (await scope(db('sites').whereNull('removed_at').whereIn('kind', PROBED_KINDS), 'id').select('*')).map(toSiteRow)
  const states = new Map<number, StoredSiteState>(sites.map((site) => [site.id, { site, outages: [], lastOutage: null }]))
  const recent = await scope(db('outages'), 'site_id')
    .where((q) => {
      q.whereNull('ended_at').orWhere('ended_at', '>=', since)
    })
    .orderBy([{ column: 'started_at' }, { column: 'id' }])
    .select('site_id', 'started_at', 'ended_at')
  for (const r of recent) states.get(Number(r.site_id))?.outages.push(span(r))
  const newestIds = (await scope(db('outages'), 'site_id').groupBy('site_id').select(db.raw('max(id) as id'))).map(
    (r: { id: number }) => r.id
  )
  for (let i = 0; i < newestIds.length; i += 500) {
    const rows = await db('outages')
      .whereIn('id', newestIds.slice(i, i + 500))
      .select('site_id', 'started_at', 'ended_at')
    for (const r of rows) {
      const state = states.get(Number(r.site_id))
      if (state) state.lastOutage = span(r)
    }
  }
  return [...states.values()]
}

/**
 * A mark that moves whenever a site is added, renamed, resumed or removed through the store: the
 * number of rows and the newest `changed_at`. One indexed query, however many sites there are.
 */
export async function sitesVersion({ db }: { db: Db }): Promise<string> {
  const row = (await db('sites').count({ n: '*' }).max({ at: 'changed_at' }).first()) as { n?: unknown; at?: unknown } | undefined
  return `${Number(row?.n ?? 0)}@${toDate(row?.at)?.getTime() ?? '-'}`
}

/** A tracked site as the list of them reads it: what the operator may change besides its state. */
export interface TrackedId {
  id: number
  domain: string
  name: string
  added_at: Date
  interval_s: number | null
  expect: Expectations
  check: string | null
  /** `http`, or a monitor's kind. */
  kind: string
  /** The host a monitor probes; null for a web site. */
  target: string | null
}

/** The tracked sites' ids, domains and settings, for noticing additions, removals and changes cheaply. */
export async function listTrackedIds({ db }: { db: Db }): Promise<TrackedId[]> {
  const rows = await db('sites')
    .whereNull('removed_at')
    .whereIn('kind', PROBED_KINDS)
    .select(
      'id',
      'domain',
      'name',
      'added_at',
      'interval_s',
      'expect_status',
      'body_contains',
      'max_response_ms',
      'check_spec',
      'kind',
      'target'
    )
  return rows.map((r) => ({
    id: Number(r.id),
    domain: String(r.domain),
    name: String(r.name),
    added_at: toDate(r.added_at) as Date,
    interval_s: r.interval_s === null ? null : Number(r.interval_s),
    expect: expectOf(r),
    check: checkOf(r),
    kind: String(r.kind),
    target: typeof r.target === 'string' ? r.target : null
  }))
}

/** A site's current state as a check last wrote it, with when that was written. */
export interface ChangedState {
  id: number
  status: SiteRow['status']
  blocked: boolean
  partial: boolean
  response_ms: number | null
  checked_at: Date | null
  slow: boolean
  cause: SiteRow['cause']
  state_at: Date
}

/** When the newest state was written, by any writer; null when none was. One read of the `state_at` index. */
export async function newestStateAt({ db }: { db: Db }): Promise<Date | null> {
  const row: { at?: unknown } | undefined = await db('sites').max({ at: 'state_at' }).first()
  return toDate(row?.at)
}

/**
 * The tracked sites whose state was written at or after `since` (one indexed range read), but for
 * those whose state `except` wrote.
 */
export async function listChangedStates({
  db,
  since,
  except = null
}: {
  db: Db
  since: Date
  except?: string | null
}): Promise<ChangedState[]> {
  const query = db('sites').where('state_at', '>=', since).whereNull('removed_at').whereIn('kind', PROBED_KINDS)
  if (except !== null)
    query.where((q) => {
      q.whereNull('state_by').orWhere('state_by', '<>', except)
    })
  const rows = await query.select('id', 'status', 'blocked', 'partial', 'response_ms', 'checked_at', 'slow', 'cause', 'state_at')
  return rows.map((r) => ({
    id: Number(r.id),
    status: String(r.status) as SiteRow['status'],
    blocked: Boolean(r.blocked),
    partial: Boolean(r.partial),
    response_ms: r.response_ms === null ? null : Number(r.response_ms),
    checked_at: toDate(r.checked_at),
    slow: Boolean(r.slow),
    cause: parseCause(r.cause),
    state_at: toDate(r.state_at) as Date
  }))
}
