import type { Db } from './db.js'

/** One bucket of a site's checks: the mean and worst response time of the checks that had one. */
export interface ResponseTimeBucket {
  /** Start of the bucket. */
  start: Date
  /** Null when no check in the bucket got an answer. */
  avg_ms: number | null
  max_ms: number | null
  checks: number
  /** Checks that got a response time. */
  answered: number
  /** Checks in the bucket whose verdict was down. */
  down: number
}

/**
 * A site's checks between `from` and `to`, averaged per `bucketMs`, oldest first; buckets without a
 * check are left out. Bucketing happens in the database, so a day of checks at a short interval
 * never crosses the wire row by row; the (site_id, checked_at) index bounds the scan.
 */
export async function listResponseTimes({
  db,
  siteId,
  from,
  to,
  bucketMs
}: {
  db: Db
  siteId: number
  from: Date
  to: Date
  bucketMs: number
}): Promise<ResponseTimeBucket[]> {
  const mysql = db.client.config.client === 'mysql2'
  const bucket = mysql
    ? db.raw('FLOOR(TIMESTAMPDIFF(MICROSECOND, ?, checked_at) / ?)', [from, bucketMs * 1000])
    : db.raw('CAST((checked_at - ?) / ? AS INTEGER)', [from.getTime(), bucketMs])
  const rows = await db('checks')
    .where('site_id', siteId)
    .where('checked_at', '>=', from)
    .where('checked_at', '<', to)
    .select({
      bucket,
      avg_ms: db.raw('AVG(response_ms)'),
      max_ms: db.raw('MAX(response_ms)'),
      checks: db.raw('COUNT(*)'),
      answered: db.raw('COUNT(response_ms)'),
      down: db.raw("SUM(CASE WHEN status = 'down' THEN 1 ELSE 0 END)")
    })
    .groupBy('bucket')
    .orderBy('bucket')
  return rows.map((r: Record<string, unknown>) => ({
    start: new Date(from.getTime() + Number(r.bucket) * bucketMs),
    avg_ms: r.avg_ms === null ? null : Math.round(Number(r.avg_ms) * 10) / 10,
    max_ms: r.max_ms === null ? null : Number(r.max_ms),
    checks: Number(r.checks),
    answered: Number(r.answered),
    down: Number(r.down)
  }))
}
