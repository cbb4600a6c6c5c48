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

  delete(id: number): void {
    this.#current.delete(id)
    this.#previous.delete(id)
  }

  get size(): number {
    return this.#current.size + this.#previous.size
  }
}
