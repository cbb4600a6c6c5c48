/**
 * The lines of a streamed answer as they arrive, whatever the chunks: an NDJSON batch and an event
 * stream are both read line by line.
 */

/**
 * Each line of `body`, without its `\n` (or `\r\n`); a last line without one is yielded too. Read
 * through a reader, not `for await`: not every browser iterates a ReadableStream. Leaving early
 * cancels the body.
 */
export async function* readLines(body: ReadableStream<Uint8Array>): AsyncGenerator<string, void, undefined> {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  let rest = ''
  let done = false
  try {
    for (;;) {
      const chunk = await reader.read()
      if (chunk.done) break
      rest += decoder.decode(chunk.value, { stream: true })
      let at: number
      while ((at = rest.indexOf('\n')) !== -1) {
        yield rest.slice(0, at).replace(/\r$/, '')
        rest = rest.slice(at + 1)
      }
    }
    done = true
  } finally {
    if (done) reader.releaseLock()
    else reader.cancel().catch(() => {})
  }
  rest += decoder.decode()
  if (rest !== '') yield rest
}

/** One Server-Sent Events block: its id, event type and data lines joined. */
export interface SseMessage {
  id: string | undefined
  event: string
  data: string
}

/** The events of a `text/event-stream`, comments skipped. */
export async function* readEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage, void, undefined> {
  let id: string | undefined
  let event = ''
  let data: string[] = []
  for await (const line of readLines(body)) {
    if (line === '') {
      if (data.length > 0) yield { id, event: event === '' ? 'message' : event, data: data.join('\n') }
      event = ''
      data = []
      continue
    }
    if (line.startsWith(':')) continue
    const colon = line.indexOf(':')
    const field = colon === -1 ? line : line.slice(0, colon)
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '')
    if (field === 'id') id = value
    else if (field === 'event') event = value
    else if (field === 'data') data.push(value)
  }
}
