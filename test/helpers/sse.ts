import http from 'node:http'

/** One Server-Sent Events block: an event (id, type, parsed data) or a comment. */
export type SseBlock = { kind: 'event'; id: number; type: string; data: any } | { kind: 'comment'; text: string }

/**
 * A real client of an event stream over HTTP (inject would wait for an end that never comes): it
 * parses blocks as they arrive, and lets a test wait for the one it expects.
 */
export class SseClient {
  readonly blocks: SseBlock[] = []
  readonly status: number
  readonly headers: http.IncomingHttpHeaders
  /** The body of an answer that is not a stream (an error's JSON). */
  body = ''
  /** Resolves when the server ended the response (cleanly) or the connection closed; true when it ended cleanly. */
  readonly ended: Promise<boolean>
  readonly #req: http.ClientRequest
  readonly #res: http.IncomingMessage
  readonly #waiters = new Set<() => void>()
  #rest = ''

  private constructor(req: http.ClientRequest, res: http.IncomingMessage) {
    this.#req = req
    this.#res = res
    this.status = res.statusCode ?? 0
    this.headers = res.headers
    res.setEncoding('utf8')
    this.ended = new Promise((resolve) => {
      res.once('end', () => {
        resolve(true)
      })
      res.once('close', () => {
        resolve(res.complete)
      })
    })
    res.on('data', (chunk: string) => {
      if (this.status !== 200) {
        this.body += chunk
        return
      }
      this.#rest += chunk
      let at: number
      while ((at = this.#rest.indexOf('\n\n')) !== -1) {
        this.#parse(this.#rest.slice(0, at))
        this.#rest = this.#rest.slice(at + 2)
      }
      for (const wake of [...this.#waiters]) wake()
    })
  }

  static connect(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
    return new Promise((resolve, reject) => {
      const req = http.get(url, { headers: { accept: 'text/event-stream', ...headers } }, (res) => {
        const client = new SseClient(req, res)
        if (client.status === 200) resolve(client)
        else
          void client.ended.then(() => {
            resolve(client)
          })
      })
      req.once('error', reject)
    })
  }

  #parse(block: string): void {
    if (block.startsWith(':')) {
      this.blocks.push({ kind: 'comment', text: block.slice(1).trim() })
      return
    }
    const fields = new Map<string, string>()
    for (const line of block.split('\n')) {
      const colon = line.indexOf(': ')
      fields.set(line.slice(0, colon), line.slice(colon + 2))
    }
    this.blocks.push({
      kind: 'event',
      id: Number(fields.get('id')),
      type: fields.get('event') ?? '',
      data: JSON.parse(fields.get('data') ?? 'null')
    })
  }

  /** The events received so far. */
  get events(): Array<Extract<SseBlock, { kind: 'event' }>> {
    return this.blocks.filter((b): b is Extract<SseBlock, { kind: 'event' }> => b.kind === 'event')
  }

  /** Resolves once `cond` holds over what was received; rejects after `ms`. */
  waitFor(cond: (client: SseClient) => boolean, ms = 10_000, what = 'the expected blocks'): Promise<void> {
    if (cond(this)) return Promise.resolve()
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (!cond(this)) return
        clearTimeout(timer)
        this.#waiters.delete(check)
        resolve()
      }
      const timer = setTimeout(() => {
        this.#waiters.delete(check)
        reject(new Error(`timed out waiting for ${what}; got ${JSON.stringify(this.blocks)}`))
      }, ms)
      this.#waiters.add(check)
    })
  }

  /** Goes away as a client does: the connection is closed. */
  close(): void {
    this.#req.destroy()
    this.#res.destroy()
  }
}
