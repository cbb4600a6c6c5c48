import type { Knex } from 'knex'
import { engineOf, type Db } from './db.js'
import type { HeartbeatProgress } from './heartbeats.js'

/** Rows of one table to write by id: each column of `cases` a value of its own per row, each of `same` one for all. */
interface RowsById {
  table: 'heartbeats' | 'sites'
  /** Distinct, each with one value a column at most. */
  ids: readonly number[]
  cases: Record<string, ReadonlyArray<readonly [number, Knex.Value]>>
  same: Record<string, Knex.Value>
}

const sameValue = (a: Knex.Value, b: Knex.Value): boolean =>
  a === b || (a instanceof Date && b instanceof Date && a.getTime() === b.getTime())

/**
 * The SET clauses of `rows`: `CASE id WHEN ... THEN ... ELSE column END` for a value per row, or
 * the value once where each of the `reached` rows the statement reaches takes the same (most
 * columns of a batch of pings: a statement a fraction of the size to format, send and parse);
 * `qualified`, columns named with their table (a statement writing two).
 */
function setClauses(
  { table, cases, same }: RowsById,
  { qualified, reached }: { qualified: boolean; reached: number }
): { sets: string[]; bindings: Knex.Value[] } {
  const name = (column: string): string => (qualified ? `${table}.${column}` : column)
  const sets: string[] = []
  const bindings: Knex.Value[] = []
  for (const [column, values] of Object.entries(cases)) {
    if (values.length === 0) continue
    const first = values[0]?.[1] ?? null
    if (values.length === reached && values.every(([, v]) => sameValue(v, first))) {
      sets.push('?? = ?')
      bindings.push(name(column), first)
      continue
    }
    sets.push(`?? = CASE ?? ${values.map(() => 'WHEN ? THEN ?').join(' ')} ELSE ?? END`)
    bindings.push(name(column), name('id'))
    for (const [id, value] of values) bindings.push(id, value)
    bindings.push(name(column))
  }
  for (const [column, value] of Object.entries(same)) {
    sets.push('?? = ?')
    bindings.push(name(column), value)
  }
  return { sets, bindings }
}

const placeholders = (ids: readonly number[]): string => ids.map(() => '?').join(', ')

/**
 * Writes heartbeats' rows by id and, when given, their own `sites` rows: a statement a table, one
 * for both on MySQL (a round trip less a batch of pings), each heartbeat joined to its `sites`
 * row. On MySQL the primary keys are forced: for an id list covering much of a small table the
 * optimizer scans the whole key instead, and a scan under REPEATABLE READ locks every row it
 * passes, rows other instances hold among them (a deadlock, seen with three instances sweeping at once).
 */
async function writeRowsById(db: Db, heartbeats: RowsById, sites: RowsById | null): Promise<void> {
  if (engineOf(db) === 'mysql' && sites !== null) {
    // Every heartbeat reaches its own sites row, written or not.
    const a = setClauses(heartbeats, { qualified: true, reached: heartbeats.ids.length })
    const b = setClauses(sites, { qualified: true, reached: heartbeats.ids.length })
    await db.raw(
      'UPDATE heartbeats FORCE INDEX (PRIMARY) LEFT JOIN sites FORCE INDEX (PRIMARY) ON sites.id = heartbeats.site_id ' +
        `SET ${[...a.sets, ...b.sets].join(', ')} WHERE heartbeats.id IN (${placeholders(heartbeats.ids)})`,
      [...a.bindings, ...b.bindings, ...heartbeats.ids]
    )
    return
  }
  const hint = engineOf(db) === 'mysql' ? ' FORCE INDEX (PRIMARY)' : ''
  for (const rows of sites === null ? [heartbeats] : [heartbeats, sites]) {
    const { sets, bindings } = setClauses(rows, { qualified: false, reached: rows.ids.length })
    await db.raw(`UPDATE ${rows.table}${hint} SET ${sets.join(', ')} WHERE id IN (${placeholders(rows.ids)})`, [...bindings, ...rows.ids])
  }
}

/** A heartbeat's rows to write after the rules: its progress, and the last message when a ping carried one. */
export interface HeartbeatProgressWrite {
  id: number
  progress: HeartbeatProgress
  message?: string | null
}

/** A heartbeat's state as its `sites` row mirrors it. */
export interface HeartbeatSiteWrite {
  siteId: number
  status: 'up' | 'down' | 'unavailable'
  at: Date | null
  /** The first ping: `first_checked_at` is set to `at`. */
  firstPing: boolean
}

/**
 * Writes what the rules left for each heartbeat (and the last message where a ping carried one),
 * and mirrors states on their `sites` rows, where uptime, pages and alerts read them: one
 * statement a table, one in all on MySQL. `sites` are the written heartbeats' own.
 */
export async function writeHeartbeatProgresses({
  db,
  writes,
  sites = [],
  now
}: {
  db: Db
  writes: readonly HeartbeatProgressWrite[]
  sites?: readonly HeartbeatSiteWrite[]
  now: Date
}): Promise<void> {
  if (writes.length === 0) return
  const columns = Object.keys(writes[0]?.progress ?? {}) as Array<keyof HeartbeatProgress>
  const cases: Record<string, ReadonlyArray<readonly [number, Knex.Value]>> = {}
  for (const column of columns)
    cases[column] = writes.map((w) => [
      w.id,
      column === 'open_runs' ? JSON.stringify(w.progress.open_runs) : (w.progress[column] as Knex.Value)
    ])
  cases.last_message = writes.flatMap((w) => (w.message === undefined ? [] : [[w.id, w.message] as const]))
  const siteRows: RowsById | null =
    sites.length === 0
      ? null
      : {
          table: 'sites',
          ids: sites.map((s) => s.siteId),
          cases: {
            status: sites.map((s) => [s.siteId, s.status] as const),
            checked_at: sites.map((s) => [s.siteId, s.at] as const),
            first_checked_at: sites.filter((s) => s.firstPing).map((s) => [s.siteId, s.at] as const)
          },
          same: {}
        }
  await writeRowsById(db, { table: 'heartbeats', ids: writes.map((w) => w.id), cases, same: { changed_at: now } }, siteRows)
}
