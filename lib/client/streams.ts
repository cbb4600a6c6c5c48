/**
 * The answers that stream: a batch's NDJSON lines and the two event streams. Each owns its request:
 * leaving the loop (break, return, a throw) or aborting the caller's signal aborts it, so that the
 * server stops the work only this client was waiting for. A line that is not what the document
 * says (not JSON, not an object of its shape) ends the stream with a `malformed_answer` error.
 */
import { SiteStatusError } from './errors.js'
import { readEvents, readLines, type SseMessage } from './lines.js'
import type { BatchCheckItem, BatchCheckSummary, ServiceEvent, StatusPageEvent } from './types.js'

/** Sends a streamed call with `signal` (openapi-fetch with `parseAs: 'stream'`): its body, once a 2xx came. */
export type OpenStream = (signal: AbortSignal) => Promise<{ data?: ReadableStream<Uint8Array> | null; response: Response }>

/**
 * The lines of a batch as they complete: each domain's check result or error. The summary line is
 * not yielded: it is the generator's return value and, once the stream ended, `summary`.
 */
export type BatchCheck = AsyncGenerator<BatchCheckItem, BatchCheckSummary, undefined> & {
  /** The batch's summary, once its last line has arrived; undefined before, or when the loop left early. */
  readonly summary: BatchCheckSummary | undefined
}

export function batchCheck(open: OpenStream, signal: AbortSignal | undefined): BatchCheck {
  const holder: { summary: BatchCheckSummary | undefined } = { summary: undefined }
  async function* lines(): AsyncGenerator<BatchCheckItem, BatchCheckSummary, undefined> {
    for await (const line of streamed(open, signal, batchLines)) {
      if ('summary' in line) {
        holder.summary = line.summary
        return line.summary
      }
      yield line
    }
    throw new SiteStatusError({ status: 0, message: 'the batch answer ended before its summary line' })
  }
  const generator = lines()
  return Object.defineProperty(generator, 'summary', { get: () => holder.summary, enumerable: true }) as BatchCheck
}

export function serviceEvents(open: OpenStream, signal: AbortSignal | undefined): AsyncGenerator<ServiceEvent, void, undefined> {
  return streamed(open, signal, async function* (body, status) {
    for await (const message of readEvents(body)) {
      const id = /^\d+$/.test(message.id ?? '') ? Number(message.id) : NaN
      const data = eventData(message, status)
      if (!Number.isSafeInteger(id)) throw malformed(status, `event ${message.event} has no numeric id`)
      yield { id, type: message.event, data } as ServiceEvent
    }
  })
}

export function statusPageEvents(open: OpenStream, signal: AbortSignal | undefined): AsyncGenerator<StatusPageEvent, void, undefined> {
  return streamed(open, signal, async function* (body, status) {
    for await (const message of readEvents(body)) {
      const data = eventData(message, status)
      if (typeof data.name !== 'string' || (typeof data.domain !== 'string' && data.domain !== null) || typeof data.at !== 'string')
        throw malformed(status, `event ${message.event} lacks its site's name, domain or time`)
      yield { type: message.event, data } as StatusPageEvent
    }
  })
}

/** The lines of a batch answer, each parsed and of the shape of a result, an error or the summary. */
async function* batchLines(
  body: ReadableStream<Uint8Array>,
  status: number
): AsyncGenerator<BatchCheckItem | { summary: BatchCheckSummary }> {
  for await (const line of readLines(body)) {
    if (line === '') continue
    const value = parsed(line, status, 'a batch line')
    const summary = value.summary
    if (typeof summary === 'object' && summary !== null && 'checked' in summary) yield value as { summary: BatchCheckSummary }
    else if (typeof value.domain === 'string' && (typeof value.status === 'string' || typeof value.code === 'string'))
      yield value as BatchCheckItem
    else throw malformed(status, 'a batch line is neither a result, an error nor the summary')
  }
}

/** An event's JSON data object. */
function eventData(message: SseMessage, status: number): Record<string, unknown> {
  return parsed(message.data, status, `the data of event ${message.event}`)
}

function parsed(text: string, status: number, what: string): Record<string, unknown> {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (err) {
    throw malformed(status, `${what} is not JSON (${(err as Error).message})`, err)
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw malformed(status, `${what} is not a JSON object`)
  return value as Record<string, unknown>
}

const malformed = (status: number, message: string, cause?: unknown): SiteStatusError =>
  new SiteStatusError({ status, code: 'malformed_answer', message, cause })

/**
 * The parsed pieces of a streamed answer. The request is sent on the first `next()`; when the
 * consumer stops early, the finally block aborts it (a no-op once the answer is complete).
 */
async function* streamed<T>(
  open: OpenStream,
  signal: AbortSignal | undefined,
  read: (body: ReadableStream<Uint8Array>, status: number) => AsyncGenerator<T, void, undefined>
): AsyncGenerator<T, void, undefined> {
  const controller = new AbortController()
  const abort = (): void => {
    controller.abort(signal?.reason)
  }
  signal?.addEventListener('abort', abort, { once: true })
  try {
    signal?.throwIfAborted()
    const { data, response } = await open(controller.signal)
    if (!data) return
    try {
      yield* read(data, response.status)
    } catch (err) {
      if (controller.signal.aborted) throw controller.signal.reason
      if (err instanceof SiteStatusError) throw err
      throw new SiteStatusError({ status: 0, message: `the answer broke off (${(err as Error).message})`, cause: err })
    }
  } finally {
    signal?.removeEventListener('abort', abort)
    controller.abort()
  }
}
