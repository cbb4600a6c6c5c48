import type { Dispatcher } from 'undici'
import { mayBeChallenge } from './challenge-signatures.js'
import type { ProbeOptions } from './probe-types.js'
import { applyConnectTo, hostPort, socketPhases } from './location-dispatcher.js'
import { peerCertificate, type SeenCertificate } from './peer-certificate.js'
import { deadlineError } from './probe-errors.js'
import { ON_CONNECTION } from './single-use-dispatcher.js'

/*
 * One hop of a probe: a GET on a connection of its own, its phases added to the probe's sums, and
 * the redirect it points to, if any. The probe's deadline ends a hop wherever it is.
 */

const REDIRECTS = new Set([301, 302, 303, 307, 308])

/** What one request brought back. `next` is the redirect to follow (its body was not read). */
export interface HopAnswer {
  status: number
  headers: ResponseHeaders
  body: Buffer
  next: URL | null
}
export type ResponseHeaders = Record<string, string | string[] | undefined>

/** Something waiting on the probe's deadline: told once, when it passes. */
interface Expiring {
  expire(): void
}

/** One probe under way: what every hop reads (options, clock) and updates (sums, last status and URL). */
export interface Run {
  opts: ProbeOptions
  now: () => number
  viaProxy: boolean
  sums: { dns: number; connect: number; tls: number; first_byte: number }
  lastStatus: number
  lastUrl: string | null
  /**
   * The leaf certificate of the latest hop's handshake; null when that hop was plain http or got
   * no TLS connection. Each hop dials its own connection, so this is always a fresh handshake's.
   */
  certificate: SeenCertificate | null
  /** The deadline has passed. */
  expired: boolean
  /** What the probe waits on now: a hop in flight, or the policy's look-up. */
  waiting: Expiring | null
  /** The method and body the next hop sends: the check's, until a redirect turns them into GET. */
  method: string
  body: string | null
  /** How much of the final answer's body is kept: what assertions or `body_contains` read. */
  keepBytes: number
}

const EMPTY = Buffer.alloc(0)
const ABANDONED = 'the probe is over'

/**
 * One request on a connection of its own, as an undici dispatch handler: no Readable body, promise
 * plumbing or abort signal per request, which a probe made for every hop and mostly threw away.
 * `answer` settles at a followable redirect's headers (the connection is dropped there), or once
 * the body has ended, reached the cap, broken off, or the deadline passed: a body cut short still
 * came with a status, and what arrived is judged. It rejects only when no response came at all. The
 * body is kept only for the statuses a challenge signature applies to, or when the check expects a
 * text in it; otherwise it is read (its transfer counts towards the probe's time) but not stored.
 */
class Hop implements Dispatcher.DispatchHandler, Expiring {
  readonly answer: Promise<HopAnswer>
  /** The connection a location dispatcher made for this request, and when it was there. */
  socket: object | undefined
  connectedAt: number | undefined
  headersAt: number | undefined
  readonly #run: Run
  readonly #url: URL
  readonly #cap: number
  #resolve!: (answer: HopAnswer) => void
  #reject!: (err: unknown) => void
  #controller: Dispatcher.DispatchController | null = null
  #status = 0
  #headers: ResponseHeaders = {}
  #chunks: Buffer[] | null = null
  #size = 0
  #ended = false
  #settled = false

  constructor(run: Run, url: URL, cap: number) {
    this.#run = run
    this.#url = url
    this.#cap = cap
    this.answer = new Promise((resolve, reject) => {
      this.#resolve = resolve
      this.#reject = reject
    })
  }

  /** The ON_CONNECTION hook: false turns away a connection that arrives after the deadline. */
  connected(socket: object): boolean {
    this.socket = socket
    this.connectedAt = this.#run.now()
    if (this.#settled) return false
    this.#run.certificate = peerCertificate(socket)
    return true
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller
    if (this.#settled) controller.abort(new Error(ABANDONED))
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: ResponseHeaders): void {
    // An informational answer (103 Early Hints) is not the response: its final one is still to come.
    // Nor is one that came after the deadline, before the deadline's work has ended the hop.
    if (this.#settled || statusCode < 200 || this.#run.expired) return
    this.headersAt = this.#run.now()
    this.#status = statusCode
    this.#headers = headers
    const location = headers.location
    if (REDIRECTS.has(statusCode) && typeof location === 'string') {
      const next = resolveUrl(location, this.#url)
      if (next !== null && (next.protocol === 'https:' || next.protocol === 'http:')) {
        this.#finish(next)
        return
      }
    }
    this.#chunks = mayBeChallenge(statusCode) || this.#run.keepBytes > 0 ? [] : null
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#settled || this.#run.expired) return
    this.#chunks?.push(chunk)
    this.#size += chunk.length
    if (this.#size >= this.#cap) this.#finish(null)
  }

  onResponseEnd(): void {
    this.#ended = true
    // Past the deadline, what came before it is the answer, as when the deadline's work ends the hop.
    if (this.#run.expired) this.expire()
    else this.#finish(null)
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, err: Error): void {
    this.#ended = true
    if (this.headersAt !== undefined) this.#finish(null)
    else this.#fail(err)
  }

  expire(): void {
    if (this.headersAt !== undefined) this.#finish(null)
    else this.#fail(deadlineError(this.#run.opts.timeoutMs))
  }

  #fail(err: unknown): void {
    if (this.#settled) return
    this.#settled = true
    this.#drop()
    this.#reject(err)
  }

  #finish(next: URL | null): void {
    if (this.#settled) return
    this.#settled = true
    this.#drop()
    const chunks = this.#chunks
    const body = chunks === null || chunks.length === 0 ? EMPTY : Buffer.concat(chunks).subarray(0, this.#cap)
    this.#resolve({ status: this.#status, headers: this.#headers, body, next })
  }

  /** Whatever the request still has going is not wanted any more: its connection is closed. */
  #drop(): void {
    if (!this.#ended) this.#controller?.abort(new Error(ABANDONED))
  }
}

/** Waits for the policy's verdict on a hop, or rejects when the deadline passes first. */
export function beforeDeadline<T>(run: Run, pending: Promise<T>): Promise<T> {
  if (run.expired) return Promise.reject(deadlineError(run.opts.timeoutMs))
  return new Promise((resolve, reject) => {
    const waiter: Expiring = {
      expire: () => {
        reject(deadlineError(run.opts.timeoutMs))
      }
    }
    const done = (): void => {
      if (run.waiting === waiter) run.waiting = null
    }
    run.waiting = waiter
    pending.then(
      (v) => {
        done()
        resolve(v)
      },
      (e: unknown) => {
        done()
        reject(e instanceof Error ? e : new Error(String(e)))
      }
    )
  })
}

/** Sends the run's request for `url` and waits for its answer; rejects when no response came at all. */
export async function hop(run: Run, url: URL): Promise<HopAnswer> {
  const { opts, now } = run
  const target = applyConnectTo(opts.connectTo, url.hostname, portOf(url))
  const started = now()
  const request = new Hop(run, url, Math.max(opts.maxBodyBytes ?? 65536, run.keepBytes))
  run.certificate = null
  const slack = opts.timeoutMs + 1000 // undici's coarse timers must never beat the exact deadline
  run.waiting = request
  try {
    opts.dispatcher.dispatch(
      {
        origin: `${url.protocol}//${hostPort(target.host, target.port)}`,
        path: url.pathname + url.search,
        method: run.method,
        // The check's own headers first: Host (and thereby SNI) stays the logical name when
        // connect-to redirects the dial, and the User-Agent is the service's.
        headers: { accept: '*/*', ...opts.request?.headers, host: url.host, 'user-agent': opts.userAgent },
        ...(run.body === null ? {} : { body: run.body }),
        reset: true, // `connection: close`: a fresh, measured connection per request, closed after
        headersTimeout: slack,
        bodyTimeout: slack,
        // A location's own dispatcher reports the connection it made for this request: its phases
        // were timed while dialling, and the wait for the first byte starts once it is there.
        [ON_CONNECTION]: (socket: object) => request.connected(socket)
      } as Dispatcher.DispatchOptions,
      request
    )
  } catch (err) {
    request.onResponseError(undefined, err as Error)
  }
  let answer: HopAnswer
  try {
    answer = await request.answer
  } finally {
    if (run.waiting === request) run.waiting = null
  }
  const phases = request.socket === undefined ? undefined : socketPhases(request.socket)
  run.sums.dns += phases?.dns ?? 0
  run.sums.connect += phases?.connect ?? 0
  run.sums.tls += phases?.tls ?? 0
  run.sums.first_byte += (request.headersAt ?? now()) - (request.connectedAt ?? started)
  return answer
}

/** The port a URL's connection goes to. */
export function portOf(url: URL): number {
  return Number(url.port) || (url.protocol === 'https:' ? 443 : 80)
}

function resolveUrl(location: string, base: URL): URL | null {
  try {
    return new URL(location, base)
  } catch {
    return null // an unusable Location makes the 3xx the final answer
  }
}
