import type tls from 'node:tls'
import { Pool, ProxyAgent, type Dispatcher } from 'undici'
import type { ConnectToRule } from '../lib/rules/connect-to.js'
import { createResolver, dnsTimeoutFor } from '../lib/net/resolver.js'
import { directConnector, tunnelConnector, type Connector, type DialSettings } from './location-dial.js'
import { SingleUseClients } from './single-use-dispatcher.js'

export { applyConnectTo, type ConnectToRule } from '../lib/rules/connect-to.js'
export { hostPort, openConnections, POLICY_REFUSED_CODE, SITE_DNS_CODE, socketPhases, type PhaseTimings } from './location-dial.js'

export interface LocationDispatcherOptions {
  /** http(s):// URL of the regional forward proxy; the site is reached through a CONNECT tunnel. */
  proxy?: string
  /**
   * Behind `proxy`: ask it to CONNECT to the site's name and let it resolve (regional answers; safe
   * only when the proxy denies non-public destinations itself). Default false: the name is
   * resolved here, its addresses judged by `allowAddress`, and the tunnel goes to the vetted address.
   */
  resolveAtProxy?: boolean
  /** Applied when dialling: a direct location dials host2:port2, a proxied one asks CONNECT host2:port2. */
  connectTo?: readonly ConnectToRule[]
  /** Resolves names for direct dials (and the proxy's name); default: the system's resolvers through c-ares. */
  lookup?: (host: string) => Promise<string[]>
  /** Extra TLS options for the site's handshake (e.g. `ca` for a private CA in tests). */
  tls?: tls.ConnectionOptions
  /** Deadline for one dial (DNS + TCP + tunnel + TLS); the probe's own deadline is usually shorter. */
  connectTimeoutMs?: number
  /**
   * The target policy, asked about every address a direct location is about to dial (after
   * connect-to): a name with any refused address is not dialled at all. Judging the very addresses
   * that are dialled, rather than a lookup made before, leaves DNS rebinding no gap. Behind a proxy it
   * judges the address the tunnel is asked for; it is never applied to the proxy itself, nor when the
   * proxy resolves the site's name (`resolveAtProxy`).
   */
  allowAddress?: (ip: string) => boolean
}

/** How a location dials a site: its connector, and whether it goes through a proxy. */
export interface LocationConnector {
  connect: Connector
  viaProxy: boolean
}

/**
 * The dialler a location's probes of other kinds use (a TCP port, a TLS handshake): the same
 * look-up, target policy, connect-to and, behind a proxy, tunnel as its HTTP requests. Asked with
 * `protocol: 'https:'` it completes a TLS handshake (SNI the site's name), otherwise plain TCP; the
 * socket carries its phases ({@link socketPhases}).
 */
export function createLocationConnector(opts: LocationDispatcherOptions = {}): LocationConnector {
  const settings = dialSettings(opts)
  if (opts.proxy === undefined) return { connect: directConnector(settings, opts.connectTo), viaProxy: false }
  const proxy = new URL(opts.proxy)
  const proxyDial = directConnector({ ...settings, tls: undefined, allowAddress: undefined }, undefined)
  // A plain CONNECT to the proxy, then the site's handshake here as for HTTP (tunnelConnector).
  const tunnel: Connector = (o, cb) => {
    const proxyPort = Number(proxy.port) || (proxy.protocol === 'https:' ? 443 : 80)
    proxyDial({ ...o, protocol: proxy.protocol, hostname: proxy.hostname, host: proxy.host, port: String(proxyPort) }, (err, raw) => {
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undici's connector type pairs null with a socket
      if (err !== null || raw === null) {
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- as above
        cb(err ?? new Error('proxy dial failed'), null)
        return
      }
      const target = o.host ?? `${o.hostname}:${o.port}`
      raw.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`)
      let head = ''
      const onData = (chunk: Buffer): void => {
        head += chunk.toString('latin1')
        const end = head.indexOf('\r\n\r\n')
        if (end === -1) return
        raw.off('data', onData)
        const status = /^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? '0'
        if (status !== '200') {
          raw.destroy()
          cb(Object.assign(new Error(`Proxy response (${status}) !== 200 when HTTP Tunneling`), { code: 'UND_ERR_ABORTED' }), null)
          return
        }
        cb(null, raw)
      }
      raw.on('data', onData)
    })
  }
  return { connect: tunnelConnector(tunnel, settings, opts.connectTo, opts.resolveAtProxy ?? false), viaProxy: true }
}

function dialSettings(opts: LocationDispatcherOptions): DialSettings {
  const timeoutMs = opts.connectTimeoutMs ?? 10_000
  return {
    lookup: opts.lookup ?? createResolver({ timeoutMs: dnsTimeoutFor(timeoutMs) }),
    timeoutMs,
    tls: opts.tls,
    allowAddress: opts.allowAddress
  }
}

/**
 * The long-lived dispatcher of one location: a {@link SingleUseClients} for every site, or a
 * ProxyAgent tunnelling through `proxy` with one per origin. Its connectors record per-socket
 * dns/connect/tls timings that `probe()` reads back.
 */
export function createLocationDispatcher(opts: LocationDispatcherOptions = {}): Dispatcher {
  const settings = dialSettings(opts)
  if (opts.proxy === undefined) {
    return new SingleUseClients({ connect: directConnector(settings, opts.connectTo) })
  }
  // The proxy itself is dialled with system CAs only, and may well sit on a private address;
  // `tls` and the policy are for the sites behind it.
  const proxyDial = directConnector({ ...settings, tls: undefined, allowAddress: undefined }, undefined)
  return new ProxyAgent({
    uri: opts.proxy,
    proxyTunnel: true,
    clientFactory: (url, o) => new Pool(url, { ...o, connect: proxyDial, headersTimeout: settings.timeoutMs }),
    factory: (_origin, o) => {
      const options = o as Pool.Options
      return new SingleUseClients({
        ...options,
        connect: tunnelConnector(options.connect as Connector, settings, opts.connectTo, opts.resolveAtProxy ?? false)
      })
    }
  })
}
