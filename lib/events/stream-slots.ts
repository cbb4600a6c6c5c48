import type { PassThrough } from 'node:stream'

export type StreamRefusedCode = 'STREAMS_PER_KEY' | 'STREAMS_PER_CLIENT' | 'STREAMS_TOTAL' | 'STREAMS_CLOSED'

/** Why a stream was refused; the route turns it into a status. */
export class StreamRefusedError extends Error {
  constructor(
    readonly code: StreamRefusedCode,
    message: string
  ) {
    super(message)
  }
}

/**
 * The open streams an instance holds, counted per owner (a key, a client address) and in all,
 * each count bounded: `take` refuses past a bound with a {@link StreamRefusedError}, `free` gives
 * the slot back. The event streams and the status pages' streams keep their bounds with it.
 */
export class StreamSlots {
  readonly #held = new Map<string, number>()
  readonly #maxPerOwner: number
  readonly #maxTotal: number
  readonly #perOwnerCode: StreamRefusedCode
  readonly #perOwnerMessage: (held: number) => string
  readonly #totalMessage: string
  #total = 0

  constructor(opts: {
    maxPerOwner: number
    maxTotal: number
    /** The refusal past one owner's bound (429 on the routes). */
    perOwnerCode: StreamRefusedCode
    perOwnerMessage: (held: number) => string
    /** The refusal past the instance's bound (503). */
    totalMessage: string
  }) {
    this.#maxPerOwner = opts.maxPerOwner
    this.#maxTotal = opts.maxTotal
    this.#perOwnerCode = opts.perOwnerCode
    this.#perOwnerMessage = opts.perOwnerMessage
    this.#totalMessage = opts.totalMessage
  }

  /** Takes a slot for `owner`, or throws the refusal of the bound it is at. */
  take(owner: string): void {
    const held = this.#held.get(owner) ?? 0
    if (held >= this.#maxPerOwner) throw new StreamRefusedError(this.#perOwnerCode, this.#perOwnerMessage(held))
    if (this.#total >= this.#maxTotal) throw new StreamRefusedError('STREAMS_TOTAL', this.#totalMessage)
    this.#held.set(owner, held + 1)
    this.#total++
  }

  /** Gives back a slot `owner` took. */
  free(owner: string): void {
    const held = (this.#held.get(owner) ?? 1) - 1
    if (held > 0) this.#held.set(owner, held)
    else this.#held.delete(owner)
    this.#total--
  }

  /** Slots held, in all or by one owner. */
  count(owner?: string): number {
    return owner === undefined ? this.#total : (this.#held.get(owner) ?? 0)
  }
}

/**
 * Writes `frame` to a stream that is still open; a client whose unsent bytes pass `maxBuffered` is
 * cut (it resumes by reconnecting). False when the stream was ended here, for the caller to free
 * its slot.
 */
export function writeOrCut(out: PassThrough, frame: string | Buffer, maxBuffered: number): boolean {
  if (out.writableEnded) return true
  out.write(frame)
  if (out.writableLength <= maxBuffered) return true
  out.end()
  return false
}
