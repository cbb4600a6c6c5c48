// What the service stored, read back and judged: shared by test/reliability/shutdown.test.ts and
// bench/load-mix.mjs. Plain JavaScript (typed by stored-rows.d.mts) so that the bench, which runs
// the build without tap's TypeScript loader, imports the very same checks.

const STATUSES = new Set(['up', 'down', 'unconfirmed', 'unavailable'])
const SOURCES = new Set(['schedule', 'demand'])

/** Sites, checks (in replay order) and outages as plain values; timestamps in ms since the epoch. */
export async function readStoredRows(db, toDate) {
  const ms = (v) => toDate(v)?.getTime() ?? null
  const sites = (await db('sites').select('id', 'domain', 'status', 'checked_at')).map((s) => ({
    id: Number(s.id),
    domain: s.domain,
    status: s.status,
    at: ms(s.checked_at)
  }))
  const checks = (
    await db('checks')
      .orderBy([{ column: 'site_id' }, { column: 'checked_at' }, { column: 'id' }])
      .select('site_id', 'checked_at', 'status', 'source', 'locations', 'locations_answered', 'locations_total')
  ).map((c) => ({
    site: Number(c.site_id),
    at: ms(c.checked_at),
    status: c.status,
    source: c.source,
    locations: String(c.locations),
    answered: Number(c.locations_answered),
    total: Number(c.locations_total)
  }))
  const outages = (
    await db('outages')
      .orderBy([{ column: 'site_id' }, { column: 'started_at' }])
      .select('site_id', 'started_at', 'ended_at', 'open_site_id')
  ).map((o) => ({ site: Number(o.site_id), start: ms(o.started_at), end: ms(o.ended_at), open: o.open_site_id }))
  return { sites, checks, outages }
}

/** The outages a site's checks (oldest first) imply under the outage rules (`outageStep`). */
export function replayOutages(checks, outageStep) {
  const expected = []
  for (const c of checks) {
    const step = outageStep(expected.at(-1)?.end === null, c.status)
    if (step === 'open') expected.push({ start: c.at, end: null })
    if (step === 'close') expected.at(-1).end = c.at
  }
  return expected
}

/** A check row whose fields do not make a whole check: a reason, or null. */
export function incompleteCheck(c) {
  if (!Number.isFinite(c.at)) return 'no checked_at'
  if (!STATUSES.has(c.status)) return `status ${c.status}`
  if (!SOURCES.has(c.source)) return `source ${c.source}`
  let locations
  try {
    locations = JSON.parse(c.locations)
  } catch {
    return 'locations not JSON'
  }
  if (!Array.isArray(locations) || locations.length !== c.total)
    return `${Array.isArray(locations) ? locations.length : 'no'} locations of ${c.total}`
  if (c.answered > c.total) return `${c.answered} of ${c.total} answered`
  if (locations.some((l) => typeof l?.location !== 'string' || typeof l?.status !== 'string')) return 'a location without its result'
  return null
}

/**
 * Every way the stored rows disagree with each other, as sentences (none when consistent): a check
 * row that is not whole, an outage ending before it starts, `open_site_id` not set exactly while an
 * outage is open, a site row that is not its newest check, and outages that do not replay from
 * the site's checks.
 */
export function storedRowProblems({ sites, checks, outages }, outageStep) {
  const problems = []
  for (const c of checks) {
    const why = incompleteCheck(c)
    if (why !== null) problems.push(`check of site ${c.site} at ${c.at}: ${why}`)
  }
  for (const o of outages) {
    if (o.end !== null && o.end < o.start) problems.push(`outage of site ${o.site} ends before it starts`)
    if ((o.end === null) !== (o.open !== null))
      problems.push(`outage of site ${o.site} at ${o.start}: open_site_id ${o.open} with end ${o.end}`)
  }
  for (const site of sites) {
    const own = checks.filter((c) => c.site === site.id)
    const newest = own.at(-1)
    if (newest && (site.at !== newest.at || site.status !== newest.status))
      problems.push(
        `${site.domain}: the site row (${site.status} at ${site.at}) is not its newest check (${newest.status} at ${newest.at})`
      )
    const stored = outages.filter((o) => o.site === site.id).map((o) => ({ start: o.start, end: o.end }))
    const expected = replayOutages(own, outageStep)
    if (JSON.stringify(stored) !== JSON.stringify(expected))
      problems.push(`${site.domain}: outages ${JSON.stringify(stored)} where its checks give ${JSON.stringify(expected)}`)
  }
  return problems
}
