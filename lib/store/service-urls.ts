import { type Db } from './db.js'

/** The one name written today: the URL `serve` announced. */
const SERVE = 'serve'

/**
 * Records the public URL a serving process answers at (the newest start wins: instances behind one
 * balancer share it), for the operator tool, which may run without the server's environment.
 */
export async function writeServedUrl({ db, url, now }: { db: Db; url: string; now: Date }): Promise<void> {
  await db('service_urls')
    .insert({ name: SERVE, public_url: url.slice(0, 512), updated_at: now })
    .onConflict('name')
    .merge()
}

/** The public URL the newest `serve` announced; null when none has started on this database. */
export async function readServedUrl({ db }: { db: Db }): Promise<string | null> {
  const row: { public_url?: unknown } | undefined = await db('service_urls').where('name', SERVE).first('public_url')
  return typeof row?.public_url === 'string' ? row.public_url : null
}
