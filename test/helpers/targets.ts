/**
 * Loopback servers for probe tests, all bound to 127.0.0.1 on an ephemeral port.
 * The target routes on the first label of the Host header (use <label>.site.test, which the
 * test certificate covers), since a probe always asks for `/`:
 * ok, fail (503), hang (headers never come), reset, chain (3 redirects), loop (endless
 * redirects), big (10 MB body), challenge (Cloudflare-style 403), forbidden (plain 403),
 * jump (302 to http://internal.site.test/), internal (200), elsewhere (302 to an ftp:// URL),
 * garbled (302 with a Location that is no URL), drip (200 whose body trickles for 2 s), hints
 * (103 Early Hints, then a 503 after 100 ms), hintsonly (103 Early Hints and nothing after). Anything
 * else is a 404.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import http from 'node:http'
import https from 'node:https'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export interface Hit {
  host: string
  path: string
  userAgent: string
  remotePort: number
  connection: string
}

export interface Target {
  port: number
  /** Requests seen, in order. */
  hits: Hit[]
  /** TCP connections accepted so far. */
  accepted: () => number
  /** TCP connections still open. */
  open: () => number
  /** Per `big` response: whether the whole body was written before the client hung up. */
  bigFinished: boolean[]
  close: () => Promise<void>
}

export interface Cert {
  key: string
  cert: string
}

/**
 * A fresh self-signed certificate for localhost, 127.0.0.1 and *.site.test, made with openssl,
 * valid from now for `days` days (its `notAfter` is now + days), named `subject` (its issuer too).
 */
export function makeCert({ days = 1, subject = '/CN=localhost' }: { days?: number; subject?: string } = {}): Cert {
  const dir = mkdtempSync(join(tmpdir(), 'probe-cert-'))
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-subj',
        subject,
        '-days',
        String(days),
        '-addext',
        'subjectAltName=DNS:localhost,DNS:*.site.test,IP:127.0.0.1',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem')
      ],
      { stdio: 'ignore' }
    )
    return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

function route(req: http.IncomingMessage, res: http.ServerResponse, target: Target): void {
  const host = (req.headers.host ?? '').split(':')[0] ?? ''
  const label = host.split('.')[0]
  const path = req.url ?? '/'
  const n = Number(/(\d+)$/.exec(path)?.[1] ?? 0)
  switch (label) {
    case 'ok':
    case 'internal':
      res.writeHead(200, { 'content-type': 'text/plain' }).end(`hello from ${host}`)
      return
    case 'fail':
      res.writeHead(503, { 'content-type': 'text/plain' }).end('maintenance')
      return
    case 'hang':
      return
    case 'tardy':
      // A full answer, 400 ms late: after the deadline of a probe that allows less.
      setTimeout(() => res.writeHead(200, { 'content-type': 'text/plain' }).end('late but fine'), 400)
      return
    case 'reset': {
      // Under TLS the RST has to go out on the TCP socket beneath.
      const sock = req.socket as net.Socket & { _parent?: net.Socket }
      ;(sock._parent ?? sock).resetAndDestroy()
      return
    }
    case 'chain':
      if (n >= 3) {
        res.writeHead(200).end('arrived')
        return
      }
      res.writeHead([302, 301, 307][n] ?? 302, { location: `/hop/${n + 1}` }).end()
      return
    case 'loop':
      res.writeHead(302, { location: `/loop/${n + 1}` }).end()
      return
    case 'jump':
      res.writeHead(302, { location: 'http://internal.site.test/' }).end()
      return
    case 'elsewhere':
      res.writeHead(302, { location: 'ftp://files.site.test/' }).end('moved')
      return
    case 'garbled':
      res.writeHead(302, { location: 'http://[oops/' }).end('moved')
      return
    case 'hints':
      res.writeEarlyHints({ link: '</style.css>; rel=preload; as=style' })
      setTimeout(() => res.writeHead(503, { 'content-type': 'text/plain' }).end('maintenance'), 100)
      return
    case 'hintsonly':
      res.writeEarlyHints({ link: '</style.css>; rel=preload; as=style' })
      return
    case 'drip': {
      res.writeHead(200, { 'content-type': 'text/plain' })
      let left = 40
      const timer = setInterval(() => {
        if (res.destroyed || left-- === 0) {
          clearInterval(timer)
          res.end()
          return
        }
        res.write('.')
      }, 50)
      return
    }
    case 'challenge':
      res
        .writeHead(403, { 'content-type': 'text/html', 'cf-mitigated': 'challenge', server: 'cloudflare' })
        .end('<!DOCTYPE html><html><head><title>Just a moment...</title></head><body>window._cf_chl_opt={}</body></html>')
      return
    case 'forbidden':
      res.writeHead(403, { 'content-type': 'text/plain' }).end('Forbidden')
      return
    case 'big': {
      // 10 MB in 64 KiB chunks, 1 ms apart, so a client that stops early is visibly early.
      const chunk = Buffer.alloc(65536, 97)
      const index = target.bigFinished.push(false) - 1
      let left = 160
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(chunk.length * left) })
      const next = (): void => {
        if (res.destroyed) return
        if (left-- === 0) {
          res.end(() => {
            target.bigFinished[index] = true
          })
          return
        }
        res.write(chunk, () => setTimeout(next, 1))
      }
      next()
      return
    }
    default:
      res.writeHead(404).end('no such route')
  }
}

async function listen(server: net.Server, target: Omit<Target, 'port' | 'close'>): Promise<Target> {
  const sockets = new Set<net.Socket>()
  let accepted = 0
  server.on('connection', (s: net.Socket) => {
    accepted++
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as net.AddressInfo).port
  return Object.assign(target, {
    port,
    accepted: () => accepted,
    open: () => sockets.size,
    close: async () => {
      for (const s of sockets) s.destroy()
      await new Promise<void>((resolve) =>
        server.close(() => {
          resolve()
        })
      )
    }
  })
}

function handler(target: Omit<Target, 'port' | 'close'>) {
  return (req: http.IncomingMessage, res: http.ServerResponse): void => {
    target.hits.push({
      host: req.headers.host ?? '',
      path: req.url ?? '',
      userAgent: req.headers['user-agent'] ?? '',
      remotePort: req.socket.remotePort ?? 0,
      connection: req.headers.connection ?? ''
    })
    route(req, res, target as Target)
  }
}

function blank(): Omit<Target, 'port' | 'close'> {
  return { hits: [], bigFinished: [], accepted: () => 0, open: () => 0 }
}

export async function startHttpTarget(): Promise<Target> {
  const target = blank()
  return listen(http.createServer(handler(target)), target)
}

export async function startHttpsTarget(cert: Cert): Promise<Target> {
  const target = blank()
  return listen(https.createServer({ key: cert.key, cert: cert.cert }, handler(target)), target)
}

/**
 * A free loopback port (bound, then released), for servers whose URL must be known before they
 * start. Another process could take it meanwhile, which is unlikely.
 */
export async function freePort(): Promise<number> {
  const server = net.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as net.AddressInfo).port
  await new Promise<void>((resolve) =>
    server.close(() => {
      resolve()
    })
  )
  return port
}

/**
 * A port nothing listens on, for a dial to be refused. Drawn below the kernel's ephemeral range
 * (/proc/sys/net/ipv4/ip_local_port_range, 32768 and up here), where no test's server listens (all
 * listen on port 0): a free port from that range could be taken by another file's server meanwhile,
 * and a dial meant to be refused would reach it.
 */
export async function closedPort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000)
    const refused = await new Promise<boolean>((resolve) => {
      const socket = net.connect({ host: '127.0.0.1', port })
      socket.once('connect', () => {
        socket.destroy()
        resolve(false)
      })
      socket.once('error', (err: NodeJS.ErrnoException) => {
        resolve(err.code === 'ECONNREFUSED')
      })
    })
    if (refused) return port
  }
}

export interface Proxy {
  port: number
  /** CONNECT targets asked for, in order. */
  connects: string[]
  /** TCP connections open at the proxy now: clients' and the tunnels' upstream ones. */
  open: () => number
  close: () => Promise<void>
}

/**
 * A minimal CONNECT proxy. `refuse` answers every CONNECT with that status; otherwise it tunnels,
 * but only to loopback (127.0.0.0/8 or localhost; anything else gets 403), and answers 502 when the
 * dial fails. `names` is the proxy's own resolver: names only it knows (as a proxy inside another
 * network knows `redis` or `metadata.google.internal`), each mapped to a loopback address.
 * `localAddress`: the loopback address the tunnels dial from.
 */
export async function startProxy(
  opts: {
    refuse?: number
    names?: Record<string, string>
    /** The loopback address its tunnels dial from (a target tells this proxy's location by it). */
    localAddress?: string
  } = {}
): Promise<Proxy> {
  const connects: string[] = []
  const sockets = new Set<net.Socket>()
  const server = http.createServer((_req, res) => {
    res.writeHead(405).end()
  })
  server.on('connection', (s: net.Socket) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
  })
  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    const wanted = req.url ?? ''
    connects.push(wanted)
    client.on('error', () => client.destroy())
    const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(wanted)
    const asked = m?.[1] ?? m?.[2] ?? ''
    const host = opts.names?.[asked] ?? asked
    if (opts.refuse !== undefined) {
      client.end(`HTTP/1.1 ${opts.refuse} Refused\r\n\r\n`)
      return
    }
    if (!/^127\.\d+\.\d+\.\d+$/.test(host) && host !== 'localhost') {
      client.end('HTTP/1.1 403 Forbidden\r\n\r\n')
      return
    }
    const upstream = net.connect({
      host: host === 'localhost' ? '127.0.0.1' : host,
      port: Number(m?.[3]),
      ...(opts.localAddress === undefined ? {} : { localAddress: opts.localAddress })
    })
    let tunnelled = false
    sockets.add(upstream)
    upstream.on('close', () => {
      sockets.delete(upstream)
      if (tunnelled) client.destroy()
    })
    upstream.on('error', () => {
      if (!tunnelled) client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n')
    })
    upstream.on('connect', () => {
      tunnelled = true
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
      if (head.length > 0) upstream.write(head)
      upstream.pipe(client)
      client.pipe(upstream)
    })
    client.on('close', () => upstream.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as net.AddressInfo).port,
    connects,
    open: () => sockets.size,
    close: async () => {
      for (const s of sockets) s.destroy()
      await new Promise<void>((resolve) =>
        server.close(() => {
          resolve()
        })
      )
    }
  }
}

export interface SilentServer {
  port: number
  /** TCP connections still open. */
  open: () => number
  close: () => Promise<void>
}

/**
 * Accepts connections and reads whatever is sent, but never answers: a TLS handshake or a CONNECT
 * sent here waits forever. (It reads, so that it notices when the other side closes.)
 */
export async function startSilentServer(): Promise<SilentServer> {
  const sockets = new Set<net.Socket>()
  const server = net.createServer((s) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
    s.on('error', () => {})
    s.resume()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as net.AddressInfo).port,
    open: () => sockets.size,
    close: async () => {
      for (const s of sockets) s.destroy()
      await new Promise<void>((resolve) =>
        server.close(() => {
          resolve()
        })
      )
    }
  }
}

/** Listens on an ephemeral port of `host` (a loopback address) and resolves with the port. */
export async function listenOn(server: http.Server, host: string): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, host, resolve))
  return (server.address() as net.AddressInfo).port
}

/** Listens on an ephemeral port of 127.0.0.1 until `t` ends (then closes it and its open connections); resolves with the port. */
export async function serveOnLoopback(t: { teardown(fn: () => unknown): void }, server: http.Server): Promise<number> {
  const port = await listenOn(server, '127.0.0.1')
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => {
          resolve()
        })
      })
  )
  return port
}

export interface InternalService {
  port: number
  /** Host headers of the requests it answered: empty while no attack got through. */
  hits: string[]
  close: () => Promise<void>
}

/** What an SSRF attack is after: a service on 127.0.0.1 that answers anyone who reaches it. */
export async function startInternalService(): Promise<InternalService> {
  const hits: string[] = []
  const server = http.createServer((req, res) => {
    hits.push(req.headers.host ?? '')
    res.end('internal secret')
  })
  const port = await listenOn(server, '127.0.0.1')
  return {
    port,
    hits,
    close: () =>
      new Promise<void>((resolve) =>
        server.close(() => {
          resolve()
        })
      )
  }
}
