import http from 'node:http'
import { serveOnLoopback } from './targets.js'

/** One request the stand-in got, its body read. */
export interface StandInRequest {
  method: string
  url: string
  headers: http.IncomingHttpHeaders
  body: string
  res: http.ServerResponse
  /** Resolves when the connection closed; true when the answer was complete by then. */
  closed: Promise<boolean>
}

/**
 * A stand-in for the service on 127.0.0.1: every request is handed to the test, which answers it
 * (or not) as the case needs; `next()` resolves with the next request to arrive.
 */
export async function standInApi(t: { teardown(fn: () => unknown): void }): Promise<{
  url: string
  requests: StandInRequest[]
  next: () => Promise<StandInRequest>
}> {
  const requests: StandInRequest[] = []
  const waiting: Array<(r: StandInRequest) => void> = []
  const queued: StandInRequest[] = []
  const server = http.createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8').on('data', (c: string) => (body += c))
    req.on('end', () => {
      const closed = new Promise<boolean>((resolve) => {
        res.once('close', () => {
          resolve(res.writableFinished)
        })
      })
      const entry = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, res, closed }
      requests.push(entry)
      const waiter = waiting.shift()
      if (waiter) waiter(entry)
      else queued.push(entry)
    })
  })
  const port = await serveOnLoopback(t, server)
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    next: () => {
      const entry = queued.shift()
      return entry ? Promise.resolve(entry) : new Promise((resolve) => waiting.push(resolve))
    }
  }
}

/** The budget headers of a keyed answer. */
export function budget(limit: number, remaining: number, resetS: number): Record<string, string> {
  return { 'ratelimit-limit': String(limit), 'ratelimit-remaining': String(remaining), 'ratelimit-reset': String(resetS) }
}

/** Answers `req` with JSON. */
export function answer(req: StandInRequest, status: number, body: unknown, headers: Record<string, string> = {}): void {
  req.res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body))
}

/**
 * A sleep that waits for the test instead of a timer: each call is recorded with its duration, and
 * resolves when the test calls `wake()` (or rejects once its signal aborts).
 */
export function manualSleep(): {
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>
  /** Every sleep asked for, in ms, in order. */
  calls: number[]
  /** The duration of the next sleep not yet looked at, once it has started. */
  started: () => Promise<number>
  /** Ends the oldest sleep under way. */
  wake: () => void
} {
  const calls: number[] = []
  const sleeping: Array<() => void> = []
  const unseen: number[] = []
  const watchers: Array<(ms: number) => void> = []
  return {
    calls,
    sleep: (ms, signal) =>
      new Promise((resolve, reject) => {
        calls.push(ms)
        const watcher = watchers.shift()
        if (watcher) watcher(ms)
        else unseen.push(ms)
        const done = (): void => {
          signal?.removeEventListener('abort', onAbort)
          resolve()
        }
        const onAbort = (): void => {
          const at = sleeping.indexOf(done)
          if (at !== -1) sleeping.splice(at, 1)
          reject(signal?.reason as Error)
        }
        if (signal?.aborted) {
          onAbort()
          return
        }
        signal?.addEventListener('abort', onAbort, { once: true })
        sleeping.push(done)
      }),
    started: () => {
      const ms = unseen.shift()
      return ms === undefined ? new Promise((resolve) => watchers.push(resolve)) : Promise.resolve(ms)
    },
    wake: () => {
      sleeping.shift()?.()
    }
  }
}
