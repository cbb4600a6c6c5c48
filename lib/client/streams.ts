/**
 * The two answers that stream: a batch's NDJSON lines and the event stream. Each owns its request:
 * leaving the loop (break, return, a throw) or aborting the caller's signal aborts it, so that the
 * server stops the work only this client was waiting for.
 */
import { SiteStatusError } from './errors.js'
import { readEvents, readLines } from './lines.js'
import type { Call, Transport } from './transport.js'
import type { BatchCheckItem, BatchCheckSummary, ServiceEvent, StatusPageEvent } from './types.js'

/**
 * The lines of a batch as they complete: each domain's check result or error. The summary line is
 * not yielded: it is the generator's return value and, once the stream ended, `summary`.
 */
export type BatchCheck = AsyncGenerator<BatchCheckItem, BatchCheckSummary, undefined> & {
  /** The batch's summary, once its last line has arrived; undefined before, or when the loop left early. */
  readonly summary: BatchCheckSummary | undefined
}

export function batchCheck(transport: Transport, call: Omit<Call, 'signal'>, signal: AbortSignal | undefined): BatchCheck {
  const holder: { summary: BatchCheckSummary | undefined } = { summary: undefined }
  async function* lines(): AsyncGenerator<BatchCheckItem, BatchCheckSummary, undefined> {
    for await (const line of streamed(transport, call, signal, readLines)) {
      if (line === '') continue
      const value = JSON.parse(line) as BatchCheckItem | { summary: BatchCheckSummary }
      if ('summary' in value) {
        holder.summary = value.summary
        return value.summary
      }
      yield value
    }
    throw new SiteStatusError({ status: 0, message: 'the batch answer ended before its summary line' })
  }
  const generator = lines()
  return Object.defineProperty(generator, 'summary', { get: () => holder.summary, enumerable: true }) as BatchCheck
}

export async function* serviceEvents(
  transport: Transport,
  call: Omit<Call, 'signal'>,
  signal: AbortSignal | undefined
): AsyncGenerator<ServiceEvent, void, undefined> {
  for await (const message of streamed(transport, call, signal, readEvents)) {
    const data: unknown = JSON.parse(message.data)
    yield { id: Number(message.id), type: message.event, data } as ServiceEvent
  }
}

export async function* statusPageEvents(
  transport: Transport,
  call: Omit<Call, 'signal'>,
  signal: AbortSignal | undefined
): AsyncGenerator<StatusPageEvent, void, undefined> {
  for await (const message of streamed(transport, call, signal, readEvents)) {
    const data: unknown = JSON.parse(message.data)
    yield { type: message.event, data } as StatusPageEvent
  }
}

/**
 * The parsed pieces of a streamed answer. The request is sent on the first `next()`; when the
 * consumer stops early, the finally block aborts it (a no-op once the answer is complete).
 */
async function* streamed<T>(
  transport: Transport,
  call: Omit<Call, 'signal'>,
  signal: AbortSignal | undefined,
  read: (body: ReadableStream<Uint8Array>) => AsyncGenerator<T, void, undefined>
): AsyncGenerator<T, void, undefined> {
  const controller = new AbortController()
  const abort = (): void => {
    controller.abort(signal?.reason)
  }
  signal?.addEventListener('abort', abort, { once: true })
  try {
    signal?.throwIfAborted()
    const res = await transport.send({ ...call, signal: controller.signal })
    if (res.body === null) return
    try {
      yield* read(res.body)
    } catch (err) {
      if (controller.signal.aborted) throw controller.signal.reason
      throw new SiteStatusError({ status: 0, message: `the answer broke off (${(err as Error).message})`, cause: err })
    }
  } finally {
    signal?.removeEventListener('abort', abort)
    controller.abort()
  }
}
