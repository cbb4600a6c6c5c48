/** A span of time [from, to) in epoch milliseconds: `from` is inside it, `to` is not. */
export interface Interval {
  from: number
  to: number
}

/** The union of intervals as sorted, disjoint ones; touching intervals join, empty ones vanish. */
export function unionIntervals(intervals: readonly Interval[]): Interval[] {
  const sorted = intervals.filter((i) => i.to > i.from).sort((a, b) => a.from - b.from || a.to - b.to)
  const merged: Interval[] = []
  for (const { from, to } of sorted) {
    const last = merged[merged.length - 1]
    if (last !== undefined && from <= last.to) last.to = Math.max(last.to, to)
    else merged.push({ from, to })
  }
  return merged
}

/** The intervals cut to [from, to), the empty ones dropped. */
export function clipIntervals(intervals: readonly Interval[], from: number, to: number): Interval[] {
  const clipped: Interval[] = []
  for (const i of intervals) {
    const s = Math.max(i.from, from)
    const e = Math.min(i.to, to)
    if (e > s) clipped.push({ from: s, to: e })
  }
  return clipped
}

/** How much of [from, to) the sorted, disjoint `intervals` cover, in milliseconds. */
export function coveredMs(from: number, to: number, intervals: readonly Interval[]): number {
  let ms = 0
  for (const i of intervals) {
    if (i.from >= to) break
    const s = Math.max(i.from, from)
    const e = Math.min(i.to, to)
    if (e > s) ms += e - s
  }
  return ms
}

/** The interval of the sorted, disjoint `intervals` that holds `at`, or undefined. */
export function intervalAt(intervals: readonly Interval[], at: number): Interval | undefined {
  return intervals.find((i) => i.from <= at && at < i.to)
}
