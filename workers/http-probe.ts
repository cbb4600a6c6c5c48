import { performance } from 'node:perf_hooks'
import { ProxyAgent, type Dispatcher } from 'undici'
import type { LocationVerdict } from '../lib/rules/consensus.js'
import { matchChallenge, mayBeChallenge } from './challenge-signatures.js'
import { POLICY_REFUSAL, PORT_REFUSAL } from '../lib/rules/target-policy.js'
import { applyConnectTo, hostPort, POLICY_REFUSED_CODE, SITE_DNS_CODE, socketPhases, type ConnectToRule } from './location-dispatcher.js'
import { ON_CONNECTION } from './single-use-dispatcher.js'

export type { LocationVerdict } from '../lib/rules/consensus.js'
export { createLocationDispatcher, type ConnectToRule, type LocationDispatcherOptions } from './location-dispatcher.js'

/**
 * Phases in ms, summed over every hop that got a connection (redirects and the http fallback
 * included), as blackbox_exporter sums its per-redirect traces. `first_byte` is the wait from the
 * connection being ready to the response headers (blackbox "processing": writing the request and the server's wait); `total` is the whole
 * probe's wall time, like `response_ms`. dns/connect/tls are only known for sockets made by a
 * {@link createLocationDispatcher} dispatcher and stay 0 otherwise (first_byte then also holds
 * the connection setup); dns is 0 for an IP literal and, behind a proxy, covers only the proxy's name.
 */
export interface ProbeTimings { dns: number; connect: number; tls: number; first_byte: number; total: number }
export interface ProbeResult { status: LocationVerdict; http_code: number; response_ms: number; error: string | null; final_url: string | null; timings: ProbeTimings }
export interface ProbeOptions {
  domain: string
  dispatcher: Dispatcher
  timeoutMs: number
  userAgent: string
  maxRedirects?: number
  maxBodyBytes?: number
  connectTo?: readonly ConnectToRule[]
  checkTarget?: (host: string, port: number) => Promise<string | null>
  now?: () => number
}

const REDIRECTS = new Set([301, 302, 303, 307, 308])
/** The ports a redirect may lead to: those of the URLs a probe starts with. */
const WEB_PORTS: ReadonlySet<number> = new Set([80, 443])
const EGRESS_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'ENODATA', 'ETIMEOUT', 'ESERVFAIL', 'EREFUSED', 'EAI_AGAIN', 'EHOSTUNREACH',
  'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT'])
const DNS_NAMES: Readonly<Record<string, string>> = {
  ENOTFOUND: 'NXDOMAIN', ENODATA: 'NODATA', EAI_NODATA: 'NODATA', ETIMEOUT: 'TIMEOUT', ESERVFAIL: 'SERVFAIL', EREFUSED: 'REFUSED'
}
/** The resolver itself failed: http:// would ask it the same question again, so there is no fallback. */
const RESOLVER_FAILURES = new Set(['ETIMEOUT', 'ESERVFAIL', 'EREFUSED'])

interface Failure {
  kind: 'fail'
  status: LocationVerdict
  error: string
  /** How far the attempt got: a later stage tells more about the site. */
  rank: number
  /** Failed before any HTTP response in a way worth retrying over http://. */
  fallback: boolean
}
interface Answer { kind: 'answer'; status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }
type Outcome = Failure | Answer

/** The rank of a failure after the site sent an HTTP response (a reset, an empty reply, a refused redirect). */
const ANSWERED_RANK = 3

const fail = (status: LocationVerdict, error: string, rank: number, fallback = false): Failure =>
  ({ kind: 'fail', status, error, rank, fallback })

function codeOf(err: unknown): string | undefined {
  const e = err as { code?: unknown; cause?: { code?: unknown } } | null
  const code = e?.code ?? e?.cause?.code
  return typeof code === 'string' ? code : undefined
}

function classify(err: unknown, timeoutMs: number, viaProxy: boolean, expired: boolean): Failure {
  const code = codeOf(err)
  const message = err instanceof Error ? err.message : String(err)
  if (expired || (err as Error | null)?.name === 'TimeoutError' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return fail('down', `timeout: no response in ${timeoutMs} ms`, 4)
  }
  if (code === SITE_DNS_CODE) {
    // A proxied location resolves the site here, not in its region: a failure says nothing about
    // the site from there, so the location does not vote (decisions.md, Target policy, second wave).
    const dns = String((err as { dns?: unknown }).dns)
    return fail('error', `dns: ${DNS_NAMES[dns] ?? dns}`, 0, !RESOLVER_FAILURES.has(dns))
  }
  const proxied = /Proxy response \((\d+)\)/.exec(message)
  if (proxied !== null) {
    // 407 means the location's own credentials are wrong, not that the site is unreachable.
    return proxied[1] === '407' ? fail('error', 'proxy: 407', 1) : fail('down', `proxy: ${proxied[1]}`, 1, true)
  }
  // Through a tunnel the proxy dials the site and reports failures as a CONNECT status, so a
  // plain dial error can only be about reaching the proxy itself.
  if (viaProxy && code !== undefined && EGRESS_CODES.has(code)) return fail('error', 'location: egress unreachable', 0)
  if (code === undefined) return fail('error', `internal: ${message}`, 0)
  if (code === POLICY_REFUSED_CODE) return fail('down', POLICY_REFUSAL, 3)
  if (DNS_NAMES[code] !== undefined || code.startsWith('EAI_')) {
    return fail('down', `dns: ${DNS_NAMES[code] ?? code}`, 0, !RESOLVER_FAILURES.has(code))
  }
  if (/CERT|^ERR_SSL_|^ERR_TLS_|^SSL_|^EPROTO$/.test(code)) return fail('down', `tls: ${code}`, 2, true)
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return fail('down', 'connect: timeout', 1, true)
  if (code === 'ECONNRESET' || code === 'EPIPE') return fail('down', `connect: ${code}`, 3, true)
  if (code === 'UND_ERR_SOCKET') return fail('down', 'http: empty reply', 3, true)
  if (code.startsWith('E')) return fail('down', `connect: ${code}`, 1, true)
  if (code.startsWith('HPE_') || code.startsWith('UND_ERR_')) return fail('down', `http: ${code}`, 3, true)
  return fail('error', `internal: ${code}`, 0)
}

function judge(a: Answer): { status: LocationVerdict; error: string | null } {
  const sig = mayBeChallenge(a.status) ? matchChallenge(a.status, a.headers, a.body.toString('latin1')) : null
  if (sig !== null) return { status: 'blocked', error: `blocked: ${sig.kind} (${sig.vendor})` }
  if (a.status === 403 || a.status === 429) return { status: 'blocked', error: `blocked: http ${a.status}` }
  if (a.status >= 500) return { status: 'down', error: `http: ${a.status}` }
  return { status: 'up', error: null }
}

/** What one request brought back. `next` is the redirect to follow (its body was not read). */
interface HopAnswer { status: number; headers: Headers; body: Buffer; next: URL | null }
type Headers = Record<string, string | string[] | undefined>

/** Something waiting on the probe's deadline: told once, when it passes. */
interface Expiring { expire(): void }

interface Run {
  opts: ProbeOptions
  now: () => number
  viaProxy: boolean
  sums: { dns: number; connect: number; tls: number; first_byte: number }
  lastStatus: number
  lastUrl: string | null
  /** The deadline has passed. */
  expired: boolean
  /** What the probe waits on now: a hop in flight, or the policy's look-up. */
  waiting: Expiring | null
}

const timeoutError = (ms: number): Error => new DOMException(`no response in ${ms} ms`, 'TimeoutError')
const EMPTY = Buffer.alloc(0)
const ABANDONED = 'the probe is over'

/**
 * One request on a connection of its own, as an undici dispatch handler: no Readable body, promise
 * plumbing or abort signal per request, which a probe made for every hop and mostly threw away.
 * `answer` settles at a followable redirect's headers (the connection is dropped there), or once
 * the body has ended, reached the cap, broken off, or the deadline passed: a body cut short still
 * came with a status, and what arrived is judged. It rejects only when no response came at all. The
 * body is kept only for the statuses a challenge signature applies to; otherwise it is read (its
 * transfer counts towards the probe's time) but not stored.
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
  #headers: Headers = {}
  #chunks: Buffer[] | null = null
  #size = 0
  #ended = false
  #settled = false

  constructor(run: Run, url: URL, cap: number) {
    this.#run = run
    this.#url = url
    this.#cap = cap
    this.answer = new Promise((resolve, reject) => { this.#resolve = resolve; this.#reject = reject })
  }

  /** The ON_CONNECTION hook: false turns away a connection that arrives after the deadline. */
  connected(socket: object): boolean {
    this.socket = socket
    this.connectedAt = this.#run.now()
    return !this.#settled
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller
    if (this.#settled) controller.abort(new Error(ABANDONED))
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: Headers): void {
    // An informational answer (103 Early Hints) is not the response: its final one is still to come.
    if (this.#settled || statusCode < 200) return
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
    this.#chunks = mayBeChallenge(statusCode) ? [] : null
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#settled) return
    this.#chunks?.push(chunk)
    this.#size += chunk.length
    if (this.#size >= this.#cap) this.#finish(null)
  }

  onResponseEnd(): void {
    this.#ended = true
    this.#finish(null)
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, err: Error): void {
    this.#ended = true
    if (this.headersAt !== undefined) this.#finish(null)
    else this.#fail(err)
  }

  expire(): void {
    if (this.headersAt !== undefined) this.#finish(null)
    else this.#fail(timeoutError(this.#run.opts.timeoutMs))
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
function beforeDeadline<T>(run: Run, pending: Promise<T>): Promise<T> {
  if (run.expired) return Promise.reject(timeoutError(run.opts.timeoutMs))
  return new Promise((resolve, reject) => {
    const waiter: Expiring = { expire: () => reject(timeoutError(run.opts.timeoutMs)) }
    const done = (): void => { if (run.waiting === waiter) run.waiting = null }
    run.waiting = waiter
    pending.then((v) => { done(); resolve(v) }, (e: unknown) => { done(); reject(e) })
  })
}

async function hop(run: Run, url: URL): Promise<HopAnswer> {
  const { opts, now } = run
  const target = applyConnectTo(opts.connectTo, url.hostname, portOf(url))
  const started = now()
  const request = new Hop(run, url, opts.maxBodyBytes ?? 65536)
  const slack = opts.timeoutMs + 1000 // undici's coarse timers must never beat the exact deadline
  run.waiting = request
  try {
    opts.dispatcher.dispatch({
      origin: `${url.protocol}//${hostPort(target.host, target.port)}`,
      path: url.pathname + url.search,
      method: 'GET',
      // Host (and thereby SNI) stays the logical name when connect-to redirects the dial.
      headers: { host: url.host, 'user-agent': opts.userAgent, accept: '*/*' },
      reset: true, // `connection: close`: a fresh, measured connection per request, closed after
      headersTimeout: slack,
      bodyTimeout: slack,
      // A location's own dispatcher reports the connection it made for this request: its phases
      // were timed while dialling, and the wait for the first byte starts once it is there.
      [ON_CONNECTION]: (socket: object) => request.connected(socket)
    } as Dispatcher.DispatchOptions, request)
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

/** Follows one scheme's redirect chain; a Failure with `fallback` means no HTTP response at all. */
async function chain(run: Run, start: string): Promise<Outcome> {
  const { opts } = run
  const maxRedirects = opts.maxRedirects ?? 5
  let url = new URL(start)
  for (let redirects = 0; ; redirects++) {
    let answer: HopAnswer
    try {
      if (run.expired) throw timeoutError(opts.timeoutMs)
      if (opts.checkTarget !== undefined) {
        const refusal = await beforeDeadline(run, opts.checkTarget(url.hostname, portOf(url)))
        if (refusal !== null) return fail('down', refusal, 3)
      }
      run.lastUrl = url.href
      answer = await hop(run, url)
    } catch (err) {
      const f = classify(err, opts.timeoutMs, run.viaProxy, run.expired)
      // Past a redirect the site has answered: whatever failed next says more than a failed dial.
      return redirects === 0 ? f : { ...f, fallback: false, rank: Math.max(f.rank, ANSWERED_RANK) }
    }
    run.lastStatus = answer.status
    if (answer.next === null) return { kind: 'answer', status: answer.status, headers: answer.headers, body: answer.body }
    if (redirects >= maxRedirects) return fail('down', 'http: too many redirects', 3)
    // A redirect may lead to another host, but not to another service on it: ports 80 and 443 only
    // (which are also the ports a probe starts on), whatever ALLOW_PRIVATE_TARGETS says.
    if (!WEB_PORTS.has(portOf(answer.next))) return fail('down', PORT_REFUSAL, 3)
    url = answer.next
  }
}

/** The port a URL's connection goes to. */
function portOf(url: URL): number {
  return Number(url.port) || (url.protocol === 'https:' ? 443 : 80)
}

function resolveUrl(location: string, base: URL): URL | null {
  try {
    return new URL(location, base)
  } catch {
    return null // an unusable Location makes the 3xx the final answer
  }
}

const round1 = (ms: number): number => Math.round(ms * 10) / 10

/**
 * One check of `domain` from one location: GET https://domain/, or http://domain/ when https
 * got no HTTP response at all. Never throws. When both schemes fail, the error of the attempt that
 * got further is kept (a TLS failure on https says more than a refused http port); on a tie, https's.
 */
export async function probe(opts: ProbeOptions): Promise<ProbeResult> {
  const now = opts.now ?? (() => performance.now())
  const started = now()
  const run: Run = {
    opts,
    now,
    viaProxy: opts.dispatcher instanceof ProxyAgent,
    sums: { dns: 0, connect: 0, tls: 0, first_byte: 0 },
    lastStatus: 0,
    lastUrl: null,
    expired: false,
    waiting: null
  }
  // An exact deadline of our own (undici's timers tick coarsely), cleared as soon as the probe is
  // done: AbortSignal.timeout() would leave every finished probe's timer to fire later for nothing.
  const timer = setTimeout(() => {
    run.expired = true
    run.waiting?.expire()
  }, opts.timeoutMs)
  let outcome: Outcome
  try {
    outcome = await chain(run, `https://${opts.domain}/`)
    if (outcome.kind === 'fail' && outcome.fallback) {
      const plain = await chain(run, `http://${opts.domain}/`)
      outcome = plain.kind === 'answer' || plain.rank > outcome.rank ? plain : outcome
    }
  } catch (err) {
    outcome = fail('error', `internal: ${err instanceof Error ? err.message : String(err)}`, 0)
  } finally {
    clearTimeout(timer)
  }
  const total = round1(now() - started)
  const verdict = outcome.kind === 'answer' ? judge(outcome) : { status: outcome.status, error: outcome.error }
  return {
    status: verdict.status,
    http_code: run.lastStatus,
    response_ms: total,
    error: verdict.error,
    final_url: run.lastUrl,
    timings: {
      dns: round1(run.sums.dns),
      connect: round1(run.sums.connect),
      tls: round1(run.sums.tls),
      first_byte: round1(run.sums.first_byte),
      total
    }
  }
}
