import type net from 'node:net'
import { performance } from 'node:perf_hooks'
import { failedAssertion, type Assertion } from '../lib/rules/assertions.js'
import { daysRemaining } from '../lib/rules/certificates.js'
import type { TcpCheck, TlsCheck } from '../lib/rules/check-spec.js'
import { socketPhases, type LocationConnector } from './location-dispatcher.js'
import { peerCertificate, type SeenCertificate } from './peer-certificate.js'
import { classify, deadlineError, fail, type Failure, type Judgement } from './probe-errors.js'
import type { ProbeResult } from './probe-types.js'

/*
 * A `tcp` or `tls` check at one location, as blackbox_exporter's tcp prober: a connection to the
 * site's port through the location's own dialler (its resolver, target policy, connect-to and
 * proxy), a TLS handshake when asked (verified: chain and host name), then for `tcp` a line sent
 * and the reply's start compared. One exact deadline over it all.
 */

/** The most of a reply read to compare its start and run its assertions on. */
const MAX_REPLY_BYTES = 64 * 1024

export interface SocketProbeOptions {
  domain: string
  spec: TcpCheck | TlsCheck
  connector: LocationConnector
  timeoutMs: number
  cancelWith?: (cancel: () => void) => void
  now?: () => number
}

const round1 = (ms: number): number => Math.round(ms * 10) / 10

/** Dials within the deadline: resolves the socket, or rejects with the dial's error (or the deadline's). */
function dial(opts: SocketProbeOptions, secure: boolean, port: number, expired: { on: (end: () => void) => void }): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    let over = false
    expired.on(() => {
      if (over) return
      over = true
      reject(deadlineError(opts.timeoutMs))
    })
    opts.connector.connect(
      {
        hostname: opts.domain,
        host: `${opts.domain}:${port}`,
        port: String(port),
        protocol: secure ? 'https:' : 'http:',
        servername: opts.domain
      },
      (err, socket) => {
        if (over) {
          socket?.destroy()
          return
        }
        over = true
        // undici's connector type pairs a null error with a socket; checked both ways all the same.
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition
        if (err !== null || socket === null) {
          // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- as above
          reject(err ?? new Error('dial failed'))
          return
        }
        // The dial's own listeners are gone: a reset after it must not crash the thread.
        socket.on('error', () => {})
        resolve(socket)
      }
    )
  })
}

/** Sends `send` (if any) and reads the reply until it is long enough, ends, or the deadline passes. */
function converse(socket: net.Socket, spec: TcpCheck, expired: { on: (end: () => void) => void }): Promise<Buffer> {
  const wanted = spec.expect_prefix === null ? 0 : Buffer.byteLength(spec.expect_prefix)
  const readsText = spec.assertions.some((a) => a.source === 'text_body')
  if (wanted === 0 && !readsText) {
    if (spec.send !== null) socket.write(spec.send)
    return Promise.resolve(Buffer.alloc(0))
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    let size = 0
    let over = false
    const done = (): void => {
      if (over) return
      over = true
      resolve(Buffer.concat(chunks).subarray(0, MAX_REPLY_BYTES))
    }
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk)
      size += chunk.length
      // The reply's start is all a prefix needs; assertions on its text wait for the end (or the cap).
      if ((!readsText && size >= wanted) || size >= MAX_REPLY_BYTES) done()
    })
    socket.once('end', done)
    socket.once('close', done)
    socket.once('error', done)
    expired.on(done)
    if (spec.send !== null) socket.write(spec.send)
  })
}

/** One `tcp` or `tls` check of `opts.domain`. Never throws. */
export async function probeSocket(opts: SocketProbeOptions): Promise<ProbeResult> {
  const now = opts.now ?? (() => performance.now())
  const { spec } = opts
  const started = now()
  const waiters: Array<() => void> = []
  let expired = false
  const expiry = {
    on: (end: () => void): void => {
      if (expired) end()
      else waiters.push(end)
    }
  }
  const expire = (): void => {
    if (expired) return
    expired = true
    for (const end of waiters.splice(0)) end()
  }
  const timer = setTimeout(expire, opts.timeoutMs)
  opts.cancelWith?.(expire)
  const secure = spec.type === 'tls' || spec.tls
  let socket: net.Socket | null = null
  let certificate: SeenCertificate | null = null
  let phases = { dns: 0, connect: 0, tls: 0 }
  let verdict: Judgement | Failure
  let reply: Buffer = Buffer.alloc(0)
  try {
    socket = await dial(opts, secure, spec.port, expiry)
    phases = socketPhases(socket) ?? phases
    certificate = peerCertificate(socket)
    if (spec.type === 'tcp') reply = await converse(socket, spec, expiry)
    verdict = judgeReply(spec, reply, expired, opts.timeoutMs)
  } catch (err) {
    verdict = classify(err, opts.timeoutMs, opts.connector.viaProxy, expired)
  } finally {
    clearTimeout(timer)
    socket?.destroy()
  }
  const total = round1(now() - started)
  const failed = verdict.status === 'up' ? asserted(spec.assertions, reply, total, certificate) : null
  if (failed !== null) verdict = failed
  return {
    status: verdict.status,
    http_code: 0,
    response_ms: total,
    error: verdict.error,
    code: verdict.code,
    ...(failed === null ? {} : { assertion: failed.assertion }),
    final_url: null,
    tls_expires_at: certificate?.expires_at ?? null,
    tls_issuer: certificate?.issuer ?? null,
    timings: { dns: round1(phases.dns), connect: round1(phases.connect), tls: round1(phases.tls), first_byte: 0, total }
  }
}

/** A connected check's verdict: up, or down when the reply does not start as expected. */
function judgeReply(spec: TcpCheck | TlsCheck, reply: Buffer, expired: boolean, timeoutMs: number): Judgement | Failure {
  if (spec.type === 'tcp' && spec.expect_prefix !== null) {
    const prefix = Buffer.from(spec.expect_prefix)
    if (reply.subarray(0, prefix.length).equals(prefix)) return { status: 'up', code: null, error: null }
    if (expired && reply.length < prefix.length) return fail('down', 'timeout', `timeout: no reply in ${timeoutMs} ms`, 'deadline')
    const got = JSON.stringify(reply.subarray(0, Math.min(40, prefix.length + 8)).toString('latin1'))
    return fail(
      'down',
      'reply_mismatch',
      `expect: reply starts with ${JSON.stringify(spec.expect_prefix.slice(0, 40))} (got ${got})`,
      'response'
    )
  }
  return { status: 'up', code: null, error: null }
}

/** An up answer that fails one of its assertions: down, `assertion_failed`; null when it passes them. */
function asserted(
  assertions: readonly Assertion[],
  reply: Buffer,
  total: number,
  certificate: SeenCertificate | null
): (Judgement & { assertion: number }) | null {
  if (assertions.length === 0) return null
  const failure = failedAssertion(assertions, {
    status: 0,
    headers: {},
    body: reply,
    responseMs: total,
    certificateDays: certificate === null ? null : daysRemaining(new Date(certificate.expires_at), new Date())
  })
  return failure === null ? null : { status: 'down', code: 'assertion_failed', error: failure.error, assertion: failure.index }
}
