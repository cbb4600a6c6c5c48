import { performance } from 'node:perf_hooks'
import { ProxyAgent, type Dispatcher } from 'undici'
import type { LocationVerdict } from '../lib/checks/consensus.js'
import { matchChallenge, mayBeChallenge } from './challenge-signatures.js'
import { POLICY_REFUSAL } from '../lib/checks/target-policy.js'
import { applyConnectTo, hostPort, POLICY_REFUSED_CODE, socketPhases, type ConnectToRule } from './location-dispatcher.js'
import { ON_CONNECTION } from './single-use-dispatcher.js'

export type { LocationVerdict } from '../lib/checks/consensus.js'
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
const EGRESS_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT'])
const DNS_NAMES: Readonly<Record<string, string>> = { ENOTFOUND: 'NXDOMAIN', ENODATA: 'NODATA', EAI_NODATA: 'NODATA' }

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
  if (DNS_NAMES[code] !== undefined || code.startsWith('EAI_') || code === 'ESERVFAIL' || code === 'ETIMEOUT') {
    return fail('down', `dns: ${DNS_NAMES[code] ?? code}`, 0, true)
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

/** Rejects with the signal's reason as soon as it aborts; undici itself only notices once connected. */
function raceDeadline<T>(p: Promise<T>, signal: AbortSignal, late: (v: T) => void = () => {}): Promise<T> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => { p.then(late, () => {}); reject(signal.reason) }
    if (signal.aborted) { onAbort(); return }
    signal.addEventListener('abort', onAbort, { once: true })
    p.then(
      (v) => { signal.removeEventListener('abort', onAbort); resolve(v) },
      (e: unknown) => { signal.removeEventListener('abort', onAbort); reject(e) }
    )
  })
}

/** Stops a body for good; undici reports an unfinished body as an 'error' nobody needs. */
function discard(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => {})
  body.destroy()
}

/**
 * Reads at most `cap` bytes of a body (its transfer counts towards the probe's time), then drops
 * the rest. A body cut short by the deadline or a reset still came with a status: what arrived is
 * judged.
 */
function readCapped(body: Dispatcher.ResponseData['body'], cap: number, signal: AbortSignal): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    let size = 0
    let done = false
    const finish = (): void => {
      if (done) return
      done = true
      signal.removeEventListener('abort', finish)
      body.off('data', onData)
      discard(body)
      resolve(Buffer.concat(chunks).subarray(0, cap))
    }
    const onData = (chunk: Buffer): void => {
      chunks.push(chunk)
      size += chunk.length
      if (size >= cap) finish()
    }
    signal.addEventListener('abort', finish, { once: true })
    body.on('data', onData).once('end', finish).once('error', finish).once('close', finish)
  })
}

interface Run {
  opts: ProbeOptions
  now: () => number
  signal: AbortSignal
  viaProxy: boolean
  sums: { dns: number; connect: number; tls: number; first_byte: number }
  lastStatus: number
  lastUrl: string | null
}

async function hop(run: Run, url: URL): Promise<Dispatcher.ResponseData> {
  const { opts, now } = run
  const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80)
  const target = applyConnectTo(opts.connectTo, url.hostname, port)
  const started = now()
  // A location's own dispatcher reports the connection it made for this request: its phases
  // were timed while dialling, and the wait for the first byte starts once it is there.
  let socket: object | undefined
  let connectedAt: number | undefined
  const slack = opts.timeoutMs + 1000 // undici's coarse timers must never beat the exact deadline
  const pending = opts.dispatcher.request({
    origin: `${url.protocol}//${hostPort(target.host, target.port)}`,
    path: url.pathname + url.search,
    method: 'GET',
    // Host (and thereby SNI) stays the logical name when connect-to redirects the dial.
    headers: { host: url.host, 'user-agent': opts.userAgent, accept: '*/*' },
    signal: run.signal,
    reset: true, // `connection: close`: a fresh, measured connection per request, closed after
    headersTimeout: slack,
    bodyTimeout: slack,
    [ON_CONNECTION]: (s: object) => { socket = s; connectedAt = now() }
  } as Dispatcher.RequestOptions)
  const res = await raceDeadline(pending, run.signal, (late) => discard(late.body))
  const phases = socket === undefined ? undefined : socketPhases(socket)
  run.sums.dns += phases?.dns ?? 0
  run.sums.connect += phases?.connect ?? 0
  run.sums.tls += phases?.tls ?? 0
  run.sums.first_byte += now() - (connectedAt ?? started)
  return res
}

/** Follows one scheme's redirect chain; a Failure with `fallback` means no HTTP response at all. */
async function chain(run: Run, start: string): Promise<Outcome> {
  const { opts } = run
  const maxRedirects = opts.maxRedirects ?? 5
  let url = new URL(start)
  for (let redirects = 0; ; redirects++) {
    const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80)
    let res: Dispatcher.ResponseData
    try {
      if (run.signal.aborted) throw run.signal.reason
      const refusal = opts.checkTarget === undefined ? null : await raceDeadline(opts.checkTarget(url.hostname, port), run.signal)
      if (refusal !== null) return fail('down', refusal, 3)
      run.lastUrl = url.href
      res = await hop(run, url)
    } catch (err) {
      const f = classify(err, opts.timeoutMs, run.viaProxy, run.signal.aborted)
      return redirects === 0 ? f : { ...f, fallback: false }
    }
    run.lastStatus = res.statusCode
    const location = res.headers.location
    const next = REDIRECTS.has(res.statusCode) && typeof location === 'string' ? resolveUrl(location, url) : null
    if (next !== null && (next.protocol === 'https:' || next.protocol === 'http:')) {
      discard(res.body)
      if (redirects >= maxRedirects) return fail('down', 'http: too many redirects', 3)
      url = next
      continue
    }
    const body = await readCapped(res.body, opts.maxBodyBytes ?? 65536, run.signal)
    return { kind: 'answer', status: res.statusCode, headers: res.headers, body }
  }
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
  // An exact deadline of our own (undici's timers tick coarsely), cleared as soon as the probe is
  // done: AbortSignal.timeout() would leave every finished probe's timer to fire later for nothing.
  const deadline = new AbortController()
  const timer = setTimeout(() => deadline.abort(new DOMException(`no response in ${opts.timeoutMs} ms`, 'TimeoutError')), opts.timeoutMs)
  const run: Run = {
    opts,
    now,
    signal: deadline.signal,
    viaProxy: opts.dispatcher instanceof ProxyAgent,
    sums: { dns: 0, connect: 0, tls: 0, first_byte: 0 },
    lastStatus: 0,
    lastUrl: null
  }
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
