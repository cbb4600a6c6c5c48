/** The lane of the scheduler's checks, which go before any other. */
export const SCHEDULED_LANE = 'schedule'

/**
 * Work taken in turns, by lane: a lane is a key's on-demand checks, or the scheduler's. Both
 * threads that a check's work goes through use one (see decisions.md, Probing):
 * - each location actor, for starting its probes. Starting one is the costly part of a probe (its
 *   dials, a TLS handshake), and an actor reads its tasks in the order they were sent: started on
 *   arrival, thousands of checks of one consumer arriving together would hold every actor for
 *   seconds, and a check of another consumer sent behind them would wait all that time;
 * - the main thread, for handing a check to the actors and for answering it once they have.
 *
 * At most `perTurn` items run, then the thread looks at its I/O again (requests and messages that
 * came meanwhile, answers of running probes). Those still waiting run one per lane in turn, so a
 * consumer with a few checks is not queued behind another's thousands, and the priority lane (the
 * scheduler's) runs before any other, as scheduled checks are admitted ahead of on-demand ones.
 *
 * When nothing waits, an item runs at once: a thread that keeps up adds no delay at all.
 */
export class FairStarts {
  readonly #perTurn: number
  readonly #priority: string
  /** Lanes with work waiting, in turn order: the first is served next, then moves to the end. */
  readonly #lanes = new Map<string, Lane>()
  #waiting = 0
  #startedThisTurn = 0
  #armed = false

  constructor({ perTurn, priority }: { perTurn: number; priority: string }) {
    if (!(Number.isInteger(perTurn) && perTurn >= 1)) throw new RangeError('perTurn must be a positive integer')
    this.#perTurn = perTurn
    this.#priority = priority
  }

  /** Items waiting for their turn. */
  get waiting(): number {
    return this.#waiting
  }

  /** Runs `start` now if its turn has come, otherwise once it has; resolves as what it returns. */
  run<T>(lane: string, start: () => Promise<T>): Promise<T> {
    if (this.#waiting === 0 && this.#startedThisTurn < this.#perTurn) {
      this.#startedThisTurn++
      this.#arm()
      return start()
    }
    return new Promise<T>((resolve, reject) => {
      let waiting = this.#lanes.get(lane)
      if (waiting === undefined) this.#lanes.set(lane, (waiting = new Lane()))
      waiting.push(() => {
        start().then(resolve, reject)
      })
      this.#waiting++
      this.#arm()
    })
  }

  #arm(): void {
    if (this.#armed) return
    this.#armed = true
    setImmediate(this.#turn)
  }

  /** After the thread's look at I/O: a new turn. */
  readonly #turn = (): void => {
    this.#armed = false
    this.#startedThisTurn = 0
    while (this.#waiting > 0 && this.#startedThisTurn < this.#perTurn) {
      this.#startedThisTurn++
      this.#waiting--
      this.#next()()
    }
    // Another turn either runs what still waits or, after a busy one, resets the count.
    if (this.#startedThisTurn > 0) this.#arm()
  }

  #next(): () => void {
    const priority = this.#lanes.get(this.#priority)
    const [name, lane] = priority !== undefined ? [this.#priority, priority] : (this.#lanes.entries().next().value as [string, Lane])
    const start = lane.shift()
    // Served: to the end of the turn order, or gone when empty.
    this.#lanes.delete(name)
    if (lane.size > 0) this.#lanes.set(name, lane)
    return start
  }
}

/** A first-in, first-out list with a moving head (shifting a long array moves all the rest). */
class Lane {
  #items: Array<() => void> = []
  #head = 0

  get size(): number {
    return this.#items.length - this.#head
  }

  push(item: () => void): void {
    this.#items.push(item)
  }

  shift(): () => void {
    const item = this.#items[this.#head] as () => void
    this.#items[this.#head] = undefined as unknown as () => void
    this.#head++
    if (this.#head === this.#items.length) {
      this.#items = []
      this.#head = 0
    } else if (this.#head >= 1024 && this.#head * 2 >= this.#items.length) {
      this.#items = this.#items.slice(this.#head)
      this.#head = 0
    }
    return item
  }
}
