const DAY_MS = 86_400_000
const TWO = Array.from({ length: 60 }, (_, i) => String(i).padStart(2, '0'))
const THREE = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'))

/**
 * A formatter of epoch milliseconds as `Date#toISOString` writes them (`2026-11-22T06:25:07.123Z`),
 * for answers that list thousands of timestamps: the date part is formatted once per day met, the
 * time of day from lookup tables, and no Date is made per call (a `toISOString` per timestamp would
 * be the largest cost of a year's SLA). Each formatter keeps its own last day.
 */
export function isoTimes(): (ms: number) => string {
  let day = NaN
  let prefix = ''
  return (ms) => {
    const d = Math.floor(ms / DAY_MS)
    if (d !== day) {
      day = d
      prefix = new Date(d * DAY_MS).toISOString().slice(0, -13)
    }
    let rest = ms - d * DAY_MS
    const millis = rest % 1000
    rest = (rest - millis) / 1000
    const seconds = rest % 60
    rest = (rest - seconds) / 60
    const minutes = rest % 60
    return `${prefix}${TWO[(rest - minutes) / 60]}:${TWO[minutes]}:${TWO[seconds]}.${THREE[millis]}Z`
  }
}
