import { LRUCache } from 'lru-cache'
import { durationSecondsMs } from '../rules/outages.js'
import { SLA_MAX_MS, type OutageInterval } from '../rules/sla.js'
import type { Db } from '../store/db.js'
import { listOutageTimes, newestOutageTimes, type OutageTimes } from '../store/outages.js'
import { isoTimes } from './iso-times.js'

const DAY_MS = 86_400_000
/** Memory the copies may take together; a site whose copy alone is larger is answered uncached. */
const HISTORY_BYTES = 64 * 1024 * 1024

/** A site as its outage records name it. */
export interface NamedSite {
  id: number
  domain: string
  name: string
}

/**
 * The site's outages as the outages endpoint shows them, as JSON text. Written out directly: a year
 * of 10,000 outages as objects with Dates and ISO strings, then stringified, costs several times the
 * rest of the answer.
 */
export function outagesJson(outages: readonly OutageInterval[], site: { domain: string; name: string }, now: number): string {
  const head = recordHead(site)
  const iso = isoTimes()
  // One string grown in place: V8 joins the pieces once, cheaper here than an array joined.
  let json = '['
  for (const o of outages) {
    if (json.length > 1) json += ','
    json += outageJson(head, iso, o, now)
  }
  return json + ']'
}

function recordHead(site: { domain: string; name: string }): string {
  return `{"domain":${JSON.stringify(site.domain)},"name":${JSON.stringify(site.name)},"started_at":"`
}

function outageJson(head: string, iso: (ms: number) => string, o: OutageInterval, now: number): string {
  const ended = o.ended === null ? 'null' : '"' + iso(o.ended) + '"'
  return head + iso(o.started) + '","ended_at":' + ended + ',"duration_seconds":' + String(durationSecondsMs(o.started, o.ended, now)) + '}'
}

/** One site's closed outages from `coverFrom` on, oldest first, with their records as JSON. */
interface History {
  name: string
  /** Every closed outage ending after this instant is here. */
  coverFrom: number
  /** The newest closed outage's id when this was read: the copy is current while it is the same. */
  lastClosedId: number | null
  closed: OutageTimes[]
  /** The records, each followed by a comma: record i is bytes offsets[i] to offsets[i + 1] - 1. */
  json: Buffer
  offsets: Float64Array
}

/** The outages of a window and, when the records could be copied whole, the JSON of the list. */
export interface WindowOutages {
  outages: OutageInterval[]
  /** The records of `counted` as the parts of a JSON array, if they are exactly `outages`. */
  json: (counted: readonly OutageInterval[]) => Buffer[] | null
}

/**
 * The closed outages of recently asked sites, kept as their SLA records so that a year of them is
 * sliced, not read and formatted, on every request. Closed outages never change and a site's
 * outages are only added as its newest, so a copy is checked against the store on every request by
 * reading the site's two newest outages (the ongoing one is always read fresh): a change by any
 * instance is seen at once. A copy covers the longest window back from when it was made; an older
 * window, a renamed site or a change in the newest closed outage reads the store directly.
 */
export class SlaHistory {
  private readonly copies = new LRUCache<number, History>({
    maxSize: HISTORY_BYTES,
    sizeCalculation: (h) => h.json.length + h.closed.length * 96 + 256
  })

  /**
   * The outages overlapping [from, to) in time order, or null when `from` is older than a copy
   * would cover (the caller reads the store).
   */
  async window({
    db,
    site,
    from,
    to,
    now
  }: {
    db: Db
    site: NamedSite
    from: number
    to: number
    now: number
  }): Promise<WindowOutages | null> {
    const coverFrom = now - SLA_MAX_MS - DAY_MS
    if (from < coverFrom) return null
    let history = this.copies.get(site.id)
    let open: OutageTimes | null = null
    if (history !== undefined && history.name === site.name && history.coverFrom <= from) {
      const newest = await newestOutageTimes({ db, siteId: site.id })
      if ((newest.find((o) => o.ended !== null)?.id ?? null) !== history.lastClosedId) history = undefined
      else open = newest[0]?.ended === null ? newest[0] : null
    } else history = undefined
    if (history === undefined) {
      const rows = await listOutageTimes({ db, siteId: site.id, from: new Date(coverFrom) })
      open = rows.at(-1)?.ended === null ? (rows.pop() as OutageTimes) : null
      history = copyOf(site, rows, coverFrom)
      this.copies.set(site.id, history)
    }
    return sliceOf(history, site, from, to, open, now)
  }
}

function copyOf(site: NamedSite, closed: OutageTimes[], coverFrom: number): History {
  const head = recordHead(site)
  // The head is the only part that can hold more than ASCII.
  const headExtra = Buffer.byteLength(head) - head.length
  const iso = isoTimes()
  const offsets = new Float64Array(closed.length + 1)
  let text = ''
  let bytes = 0
  for (let i = 0; i < closed.length; i++) {
    const record = outageJson(head, iso, closed[i] as OutageTimes, 0) + ','
    text += record
    bytes += record.length + headExtra
    offsets[i + 1] = bytes
  }
  return { name: site.name, coverFrom, lastClosedId: closed.at(-1)?.id ?? null, closed, json: Buffer.from(text), offsets }
}

function sliceOf(history: History, site: NamedSite, from: number, to: number, open: OutageTimes | null, now: number): WindowOutages {
  const { closed } = history
  // Outages never overlap, so ends are in order as starts are: the window is one run of them.
  const first = firstIndex(closed, (o) => (o.ended as number) > from)
  const end = firstIndex(closed, (o) => o.started >= to)
  const outages: OutageInterval[] = closed.slice(first, Math.max(first, end))
  if (open !== null && open.started < to) outages.push(open)
  return {
    outages,
    json: (counted) => {
      if (counted.length !== outages.length || counted.some((o, i) => o !== outages[i])) return null
      const ongoing = open !== null && counted.at(-1) === open
      const copied = ongoing ? counted.length - 1 : counted.length
      const parts: Buffer[] = [Buffer.from('[')]
      // Without the last record's comma.
      if (copied > 0) parts.push(history.json.subarray(history.offsets[first], (history.offsets[first + copied] as number) - 1))
      if (ongoing) parts.push(Buffer.from((copied > 0 ? ',' : '') + outageJson(recordHead(site), isoTimes(), open, now)))
      parts.push(Buffer.from(']'))
      return parts
    }
  }
}

/** The first index whose outage passes `test`, which fails for a prefix and passes for the rest. */
function firstIndex(outages: readonly OutageTimes[], test: (o: OutageTimes) => boolean): number {
  let [low, high] = [0, outages.length]
  while (low < high) {
    const mid = (low + high) >>> 1
    if (test(outages[mid] as OutageTimes)) high = mid
    else low = mid + 1
  }
  return low
}
