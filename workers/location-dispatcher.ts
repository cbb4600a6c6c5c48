import { lookup as dnsLookup } from 'node:dns/promises'
import type { EventEmitter } from 'node:events'
import net from 'node:net'
import { performance } from 'node:perf_hooks'
import tls from 'node:tls'
import { Agent, Pool, ProxyAgent, type Dispatcher, type buildConnector } from 'undici'

import { applyConnectTo, bare, type ConnectToRule } from '../lib/checks/connect-to.js'
import { SingleUseClients } from './single-use-dispatcher.js'

export { applyConnectTo, type ConnectToRule } from '../lib/checks/connect-to.js'

/** Connection phases of one socket, in ms. */
export interface PhaseTimings { dns: number; connect: number; tls: number }

export interface LocationDispatcherOptions {
  /** http(s):// URL of the regional forward proxy; the site is reached through a CONNECT tunnel. */
  proxy?: string
  /** Applied when dialling: a direct location dials host2:port2, a proxied one asks CONNECT host2:port2. */
  connectTo?: readonly ConnectToRule[]
  /** Same shape as lib/checks/target-policy `lookup`; replaces DNS for direct dials (and the proxy name). */
  lookup?: (host: string) => Promise<string[]>
  /** Extra TLS options for the site's handshake (e.g. `ca` for a private CA in tests). */
  tls?: tls.ConnectionOptions
  /** Deadline for one dial (DNS + TCP + tunnel + TLS); the probe's own deadline is usually shorter. */
  connectTimeoutMs?: number
  /**
   * The target policy, asked about every address a direct location is about to dial (after
   * connect-to): a name with any refused address is not dialled at all. Judging the very addresses
   * that are dialled, rather than a lookup made before, leaves DNS rebinding no gap. Not applied to
   * the proxy itself, nor behind it: there the proxy resolves the site's name.
   */
  allowAddress?: (ip: string) => boolean
}

/** Code of the dial error when the target policy refused every way to the site. */
export const POLICY_REFUSED_CODE = 'ERR_TARGET_POLICY'

type Connector = buildConnector.connector
type ConnectorOptions = buildConnector.Options
type Callback = buildConnector.Callback

const phases = new WeakMap<object, PhaseTimings>()
const open = new Set<net.Socket>()

/** TCP connections this thread's dispatchers dialled (to sites or proxies) that are not closed yet. */
export function openConnections(): number {
  return open.size
}

function tracked(socket: net.Socket): net.Socket {
  open.add(socket)
  socket.once('close', () => open.delete(socket))
  return socket
}

/** The phases recorded for a socket made by a {@link createLocationDispatcher} dispatcher. */
export function socketPhases(socket: object): PhaseTimings | undefined {
  return phases.get(socket)
}

export function hostPort(host: string, port: number): string {
  return `${net.isIPv6(host) ? `[${host}]` : host}:${port}`
}

function settle(emitter: EventEmitter, event: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const ok = (): void => { emitter.off('error', fail); resolve() }
    const fail = (err: Error): void => { emitter.off(event, ok); reject(err) }
    emitter.once(event, ok)
    emitter.once('error', fail)
  })
}

/**
 * Runs one dial with its own timeout; every socket registered with `own` is destroyed when the
 * dial fails or times out, so an abandoned dial never leaks a connection.
 */
function dial(timeoutMs: number, cb: Callback, run: (own: <S extends net.Socket>(s: S) => S) => Promise<net.Socket>): void {
  const owned: net.Socket[] = []
  let done = false
  const fail = (err: Error): void => {
    if (done) return
    done = true
    clearTimeout(timer)
    for (const s of owned) s.destroy()
    cb(err, null)
  }
  const timer = setTimeout(() => {
    fail(Object.assign(new Error(`connect timeout after ${timeoutMs} ms`), { code: 'UND_ERR_CONNECT_TIMEOUT' }))
  }, timeoutMs)
  timer.unref()
  run((s) => { owned.push(s); if (done) s.destroy(); return s }).then((socket) => {
    if (done) { socket.destroy(); return }
    done = true
    clearTimeout(timer)
    cb(null, socket)
  }, fail)
}

function servernameFor(opts: ConnectorOptions, host: string): string | undefined {
  const name = opts.servername || host
  return name && net.isIP(name) === 0 ? name : undefined
}

async function handshake(raw: net.Socket, servername: string | undefined, extra: tls.ConnectionOptions | undefined,
  own: <S extends net.Socket>(s: S) => S): Promise<tls.TLSSocket> {
  // No session cache: every probe pays (and measures) a full handshake, like blackbox_exporter.
  const sock = own(tls.connect({ ...extra, socket: raw, servername, ALPNProtocols: ['http/1.1'] }))
  await settle(sock, 'secureConnect')
  return sock
}

interface DialSettings {
  lookup: (host: string) => Promise<string[]>
  timeoutMs: number
  tls: tls.ConnectionOptions | undefined
  allowAddress: ((ip: string) => boolean) | undefined
}

function refused(): Error {
  return Object.assign(new Error('the target policy refused this address'), { code: POLICY_REFUSED_CODE })
}

function directConnector(s: DialSettings, rules: readonly ConnectToRule[] | undefined): Connector {
  return (opts, cb) => {
    const secure = opts.protocol === 'https:'
    const port = Number(opts.port) || (secure ? 443 : 80)
    const target = applyConnectTo(rules, opts.hostname, port)
    const servername = servernameFor(opts, bare(opts.hostname))
    dial(s.timeoutMs, cb, async (own) => {
      const t0 = performance.now()
      let address = target.host
      if (net.isIP(address) === 0) {
        const found = await s.lookup(address)
        if (found[0] === undefined) throw Object.assign(new Error(`no address for ${address}`), { code: 'ENODATA' })
        if (s.allowAddress !== undefined && !found.every(s.allowAddress)) throw refused()
        address = found[0]
      } else if (s.allowAddress !== undefined && !s.allowAddress(address)) {
        throw refused()
      }
      const t1 = performance.now()
      const raw = own(tracked(net.connect({ host: address, port: target.port })))
      raw.setNoDelay(true)
      await settle(raw, 'connect')
      const t2 = performance.now()
      const sock = secure ? await handshake(raw, servername, s.tls, own) : raw
      phases.set(sock, { dns: t1 - t0, connect: t2 - t1, tls: secure ? performance.now() - t2 : 0 })
      return sock
    })
  }
}

/**
 * Wraps ProxyAgent's own tunnel connector: it is always asked for a plain tunnel to host2:port2
 * (so the CONNECT line carries the connect-to target and the proxy resolves the name) and the TLS
 * handshake with the site is done here, where it can be timed. `connect` then covers TCP to the
 * proxy plus the CONNECT round trip; `dns` is only the proxy name's lookup (the site's is the proxy's).
 */
function tunnelConnector(inner: Connector, s: DialSettings, rules: readonly ConnectToRule[] | undefined): Connector {
  return (opts, cb) => {
    const secure = opts.protocol === 'https:'
    const port = Number(opts.port) || (secure ? 443 : 80)
    const target = applyConnectTo(rules, opts.hostname, port)
    const servername = servernameFor(opts, bare(opts.hostname))
    const t0 = performance.now()
    const tunnelOpts = { ...opts, protocol: 'http:', hostname: target.host, host: hostPort(target.host, target.port), port: String(target.port) }
    inner(tunnelOpts, (err, raw) => {
      if (err !== null || raw === null) { cb(err ?? new Error('proxy tunnel failed'), null); return }
      const t1 = performance.now()
      const dns = phases.get(raw)?.dns ?? 0
      const base = { dns, connect: t1 - t0 - dns }
      if (!secure) { phases.set(raw, { ...base, tls: 0 }); cb(null, raw); return }
      dial(s.timeoutMs, cb, async (own) => {
        own(raw)
        const sock = await handshake(raw, servername, s.tls, own)
        phases.set(sock, { ...base, tls: performance.now() - t1 })
        return sock
      })
    })
  }
}

async function defaultLookup(host: string): Promise<string[]> {
  return (await dnsLookup(host, { all: true })).map((a) => a.address)
}

/**
 * The long-lived dispatcher of one location: an Agent, or a ProxyAgent tunnelling through `proxy`.
 * Its connectors record per-socket dns/connect/tls timings that `probe()` reads back.
 */
export function createLocationDispatcher(opts: LocationDispatcherOptions = {}): Dispatcher {
  const settings: DialSettings = {
    lookup: opts.lookup ?? defaultLookup,
    timeoutMs: opts.connectTimeoutMs ?? 10_000,
    tls: opts.tls,
    allowAddress: opts.allowAddress
  }
  if (opts.proxy === undefined) {
    return new Agent({ connect: directConnector(settings, opts.connectTo), factory: (origin, o) => new SingleUseClients(origin, o) })
  }
  // The proxy itself is dialled with system CAs only, and may well sit on a private address;
  // `tls` and the policy are for the sites behind it.
  const proxyDial = directConnector({ ...settings, tls: undefined, allowAddress: undefined }, undefined)
  return new ProxyAgent({
    uri: opts.proxy,
    proxyTunnel: true,
    clientFactory: (url, o) => new Pool(url, { ...o, connect: proxyDial, headersTimeout: settings.timeoutMs }),
    factory: (origin, o) => {
      const options = o as Pool.Options
      return new SingleUseClients(origin, { ...options, connect: tunnelConnector(options.connect as Connector, settings, opts.connectTo) })
    }
  })
}
