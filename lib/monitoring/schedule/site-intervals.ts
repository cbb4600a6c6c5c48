/**
 * Each tracked site's interval as the lease scheduler last read it from the rows, and the checks a
 * second they add up to (the schedule's load): kept up to date from the rows that change, so the
 * figure costs one look per interval in use, never one per site.
 */
export class SiteIntervals {
  readonly #bySite = new Map<number, number>()
  /** Sites per interval in use. */
  readonly #sites = new Map<number, number>()

  /** Notes the interval of site `id`. */
  set(id: number, intervalMs: number): void {
    const before = this.#bySite.get(id)
    if (before === intervalMs) return
    if (before !== undefined) this.#count(before, -1)
    this.#bySite.set(id, intervalMs)
    this.#count(intervalMs, 1)
  }

  /** Forgets site `id` (no longer tracked). */
  delete(id: number): void {
    const before = this.#bySite.get(id)
    if (before === undefined) return
    this.#bySite.delete(id)
    this.#count(before, -1)
  }

  /** Checks due a second, every site once per its own interval. */
  get duePerS(): number {
    let perS = 0
    for (const [intervalMs, n] of this.#sites) perS += (n * 1000) / intervalMs
    return perS
  }

  #count(intervalMs: number, by: number): void {
    const n = (this.#sites.get(intervalMs) ?? 0) + by
    if (n === 0) this.#sites.delete(intervalMs)
    else this.#sites.set(intervalMs, n)
  }
}
