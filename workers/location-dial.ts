import net from 'node:net'
import { performance } from 'node:perf_hooks'
import tls from 'node:tls'
import type { buildConnector } from 'undici'
import { applyConnectTo, bare, type ConnectToRule } from '../lib/rules/connect-to.js'

/*
 * How a location dials a site, its steps timed: a look-up of the name (or the proxy's), the target
 * policy on every address, TCP, the tunnel through a proxy, and TLS for https. Used by the
 * location's HTTP dispatcher and by its TCP and TLS checks alike.
 */

/** Connection phases of one socket, in ms. */
export interface PhaseTimings {
  dns: number
  connect: number
  tls: number
}

/** Code of the dial error when the target policy refused every way to the site. */
export const POLICY_REFUSED_CODE = 'ERR_TARGET_POLICY'
/**
 * Code of the dial error when a proxied location could not resolve the site's name itself; `dns`
 * holds the resolver's code. Told apart from the proxy's own name failing (the location's egress).
 */
export const SITE_DNS_CODE = 'ERR_SITE_DNS'

export type Connector = buildConnector.connector
type ConnectorOptions = buildConnector.Options

// A socket's phases travel on the socket itself: a WeakMap entry per connection would be one more
// thing for every scavenge to trace.
const PHASES = Symbol('site-status.phases')
type Timed = { [PHASES]?: PhaseTimings }
const open = new Set<net.Socket>()

/** TCP connections this thread's dispatchers dialled (to sites or proxies) that are not closed yet. */
export function openConnections(): number {
  return open.size
}

function untrack(this: net.Socket): void {
  open.delete(this)
}

function tracked(socket: net.Socket): net.Socket {
  open.add(socket)
  socket.on('close', untrack)
  return socket
}

function setPhases(socket: object, timings: PhaseTimings): void {
  ;(socket as Timed)[PHASES] = timings
}

/** The phases recorded for a socket made by a {@link createLocationDispatcher} dispatcher. */
export function socketPhases(socket: object): PhaseTimings | undefined {
  return (socket as Timed)[PHASES]
}

export function hostPort(host: string, port: number): string {
  return `${net.isIPv6(host) ? `[${host}]` : host}:${port}`
}

function servernameFor(opts: ConnectorOptions, host: string): string | undefined {
  const name = opts.servername || host
  return name && net.isIP(name) === 0 ? name : undefined
}

export interface DialSettings {
  lookup: (host: string) => Promise<string[]>
  timeoutMs: number
  tls: tls.ConnectionOptions | undefined
  allowAddress: ((ip: string) => boolean) | undefined
}

function refused(): Error {
  return Object.assign(new Error('the target policy refused this address'), { code: POLICY_REFUSED_CODE })
}

const connectTimeout = (ms: number): Error =>
  Object.assign(new Error(`connect timeout after ${ms} ms`), { code: 'UND_ERR_CONNECT_TIMEOUT' })

/**
 * Calls `done` once: when `socket` emits `event` (null), an error, or `timeoutMs` passes first
 * (the dial's own timeout error). Its listeners and timer are gone by then.
 */
function within(s: DialSettings, socket: net.Socket, event: string, timeoutMs: number, done: (err: Error | null) => void): void {
  let over = false
  const end = (err: Error | null): void => {
    if (over) return
    over = true
    clearTimeout(timer)
    socket.off(event, reached).off('error', end)
    done(err)
  }
  const reached = (): void => {
    end(null)
  }
  socket.on(event, reached).on('error', end)
  const timer = setTimeout(() => {
    end(connectTimeout(s.timeoutMs))
  }, timeoutMs)
  timer.unref()
}

/** Dials address:port within `timeoutMs`; a dial that fails or runs out of time is destroyed. */
function connectTcp(
  s: DialSettings,
  address: string,
  port: number,
  timeoutMs: number,
  cb: (err: Error | null, raw: net.Socket | null) => void
): void {
  const raw = tracked(net.connect({ host: address, port }))
  raw.setNoDelay(true)
  within(s, raw, 'connect', timeoutMs, (err) => {
    if (err === null) {
      cb(null, raw)
      return
    }
    raw.destroy()
    cb(err, null)
  })
}

/**
 * The TLS handshake with the site over `raw` (a TCP connection, or a tunnel through the proxy)
 * within `timeoutMs`; when it fails or runs out of time, both sockets are destroyed. No session
 * cache: every probe pays (and measures) a full handshake, like blackbox_exporter.
 */
function handshake(
  s: DialSettings,
  raw: net.Socket,
  servername: string | undefined,
  timeoutMs: number,
  cb: (err: Error | null, sock: tls.TLSSocket | null) => void
): void {
  const sock = tls.connect({ ...s.tls, socket: raw, servername, ALPNProtocols: ['http/1.1'] })
  within(s, sock, 'secureConnect', timeoutMs, (err) => {
    if (err === null) {
      cb(null, sock)
      return
    }
    sock.destroy()
    raw.destroy()
    cb(err, null)
  })
}

/**
 * A direct location's connector: look-up (for a name), target policy, TCP, TLS for https, each
 * phase timed, all within one dial deadline. Callbacks rather than a promise per step: every
 * probe dials at least once, and that plumbing was a visible share of a probe's cost.
 */
export function directConnector(s: DialSettings, rules: readonly ConnectToRule[] | undefined): Connector {
  return (opts, cb) => {
    const port = Number(opts.port) || (opts.protocol === 'https:' ? 443 : 80)
    const target = applyConnectTo(rules, opts.hostname, port)
    // null: plain TCP; undefined: TLS without SNI (an IP literal).
    const servername = opts.protocol === 'https:' ? servernameFor(opts, bare(opts.hostname)) : null
    const t0 = performance.now()
    const left = (now: number): number => Math.max(1, s.timeoutMs - (now - t0))
    const dialAddress = (address: string, t1: number): void => {
      connectTcp(s, address, target.port, left(t1), (err, raw) => {
        if (raw === null) {
          cb(err ?? new Error('dial failed'), null)
          return
        }
        const t2 = performance.now()
        if (servername === null) {
          setPhases(raw, { dns: t1 - t0, connect: t2 - t1, tls: 0 })
          cb(null, raw)
          return
        }
        handshake(s, raw, servername, left(t2), (err, sock) => {
          if (sock === null) {
            cb(err ?? new Error('TLS failed'), null)
            return
          }
          setPhases(sock, { dns: t1 - t0, connect: t2 - t1, tls: performance.now() - t2 })
          cb(null, sock)
        })
      })
    }
    if (net.isIP(target.host) !== 0) {
      if (s.allowAddress !== undefined && !s.allowAddress(target.host)) process.nextTick(cb, refused(), null)
      else dialAddress(target.host, t0)
      return
    }
    // A name is looked up first, under the same deadline as the whole dial.
    let late = false
    const timer = setTimeout(() => {
      late = true
      cb(connectTimeout(s.timeoutMs), null)
    }, s.timeoutMs)
    timer.unref()
    s.lookup(target.host).then(
      (found) => {
        if (late) return
        clearTimeout(timer)
        const address = found[0]
        if (address === undefined) cb(Object.assign(new Error(`no address for ${target.host}`), { code: 'ENODATA' }), null)
        else if (s.allowAddress !== undefined && !found.every(s.allowAddress)) cb(refused(), null)
        else dialAddress(address, performance.now())
      },
      (err: unknown) => {
        if (late) return
        clearTimeout(timer)
        cb(err instanceof Error ? err : new Error(String(err)), null)
      }
    )
  }
}

/** The address a tunnel is asked for: the name itself (the proxy resolves), or a vetted address of it. */
function tunnelTarget(
  s: DialSettings,
  host: string,
  resolveAtProxy: boolean,
  cb: (err: Error | null, address: string | null) => void
): void {
  if (net.isIP(host) !== 0) {
    if (s.allowAddress !== undefined && !s.allowAddress(host)) process.nextTick(cb, refused(), null)
    else process.nextTick(cb, null, host)
    return
  }
  if (resolveAtProxy) {
    process.nextTick(cb, null, host)
    return
  }
  s.lookup(host).then(
    (found) => {
      const address = found[0]
      if (address === undefined) cb(Object.assign(new Error(`no address for ${host}`), { code: SITE_DNS_CODE, dns: 'ENODATA' }), null)
      else if (s.allowAddress !== undefined && !found.every(s.allowAddress)) cb(refused(), null)
      else cb(null, address)
    },
    (err: unknown) => {
      const code = (err as { code?: unknown } | null)?.code
      cb(
        Object.assign(new Error(`cannot resolve ${host}`), { code: SITE_DNS_CODE, dns: typeof code === 'string' ? code : 'ESERVFAIL' }),
        null
      )
    }
  )
}

/**
 * Wraps ProxyAgent's own tunnel connector: it is always asked for a plain tunnel to host2:port2,
 * where host2 is the connect-to target's vetted address (or its name, for a proxy that resolves),
 * and the TLS handshake with the site is done here, where it can be timed; SNI and Host stay the
 * site's name. `dns` covers the site's look-up here and the proxy name's; `connect` covers TCP to
 * the proxy plus the CONNECT round trip.
 */
export function tunnelConnector(
  inner: Connector,
  s: DialSettings,
  rules: readonly ConnectToRule[] | undefined,
  resolveAtProxy: boolean
): Connector {
  return (opts, cb) => {
    const secure = opts.protocol === 'https:'
    const port = Number(opts.port) || (secure ? 443 : 80)
    const target = applyConnectTo(rules, opts.hostname, port)
    const servername = servernameFor(opts, bare(opts.hostname))
    const t0 = performance.now()
    let late = false
    const timer = setTimeout(() => {
      late = true
      cb(connectTimeout(s.timeoutMs), null)
    }, s.timeoutMs)
    timer.unref()
    tunnelTarget(s, bare(target.host), resolveAtProxy, (err, address) => {
      if (late) return
      clearTimeout(timer)
      if (address === null) {
        cb(err ?? refused(), null)
        return
      }
      const looked = performance.now() - t0
      const tunnelOpts = { ...opts, protocol: 'http:', hostname: address, host: hostPort(address, target.port), port: String(target.port) }
      inner(tunnelOpts, (err, raw) => {
        // undici's connector type pairs a null error with a socket; checked both ways all the same.
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition
        if (err !== null || raw === null) {
          // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- as above
          cb(err ?? new Error('proxy tunnel failed'), null)
          return
        }
        const t1 = performance.now()
        const dns = looked + (socketPhases(raw)?.dns ?? 0)
        const base = { dns, connect: t1 - t0 - dns }
        if (!secure) {
          setPhases(raw, { ...base, tls: 0 })
          cb(null, raw)
          return
        }
        handshake(s, raw, servername, s.timeoutMs, (err, sock) => {
          if (sock === null) {
            cb(err ?? new Error('TLS failed'), null)
            return
          }
          setPhases(sock, { ...base, tls: performance.now() - t1 })
          cb(null, sock)
        })
      })
    })
  }
}
