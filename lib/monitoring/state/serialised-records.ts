/** How long a serialised status record is served while the site's state does not change. */
export const SERIALISED_MS = 1000

/**
 * Status records serialised for the status endpoint, by site id, each served for less than
 * {@link SERIALISED_MS}. Two generations, the older dropped whole when the newer is that old: what is
 * kept is the records of the sites asked for in the last two seconds or so. A single map would keep
 * a stale record of nearly every site ever asked for until its next check.
 */
export class SerialisedRecords {
  #current = new Map<number, { json: string; at: number }>()
  #previous = new Map<number, { json: string; at: number }>()
  #since = -Infinity

  get(id: number, at: number): string | undefined {
    const kept = this.#current.get(id) ?? this.#previous.get(id)
    return kept !== undefined && at >= kept.at && at - kept.at < SERIALISED_MS ? kept.json : undefined
  }

  set(id: number, json: string, at: number): void {
    if (at - this.#since >= SERIALISED_MS) {
      // The current generation's records are all stale too when it began two ages ago.
      this.#previous = at - this.#since >= 2 * SERIALISED_MS ? new Map<number, { json: string; at: number }>() : this.#current
      this.#current = new Map()
      this.#since = at
    }
    this.#current.set(id, { json, at })
  }

  /** Changes counted so far, all sites together, and each site's place in that count at its last. */
  #changes = 0
  readonly #changedAt = new Map<number, number>()

  /**
   * The site's state changed: its record is dropped, and the change counted. Badge answers kept
   * for a second follow the counts (lib/routes/badge-hits.ts).
   */
  delete(id: number): void {
    this.#current.delete(id)
    this.#previous.delete(id)
    this.#changedAt.set(id, ++this.#changes)
  }

  /** The site is no longer tracked: its record and its place in the count go. */
  forget(id: number): void {
    this.delete(id)
    this.#changedAt.delete(id)
  }

  /** Every change counted so far. */
  get changes(): number {
    return this.#changes
  }

  /** The count at the site's last change, which no other site shares; -1 for a site not known. */
  changesOf(id: number): number {
    return this.#changedAt.get(id) ?? -1
  }

  get size(): number {
    return this.#current.size + this.#previous.size
  }
}
