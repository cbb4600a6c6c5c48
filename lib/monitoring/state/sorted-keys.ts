import { isMonitorDomain } from '../../rules/monitor.js'

/** The index of the first of `sorted` that sorts after `after` (a binary search). */
export function indexAfter(sorted: readonly string[], after: string): number {
  let lo = 0
  let hi = sorted.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if ((sorted[mid] as string) <= after) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** The web sites' domains of `keys`, in order: monitors (`monitor:<slug>`, tcp, tls, dns) have lists of their own. */
export function sortedWebDomains(keys: Iterable<string>): string[] {
  const domains: string[] = []
  for (const key of keys) if (!isMonitorDomain(key)) domains.push(key)
  return domains.sort()
}
