import type { Socket } from 'node:net'
import { isIP } from 'node:net'
import { Client, Dispatcher, type buildConnector } from 'undici'

type Connector = buildConnector.connector

/**
 * A request option naming a function that is handed the connection made for that request, once it
 * is there (the probe reads the phases timed while dialling it). Returning false says the request
 * no longer wants it (its deadline passed while dialling): the connection is closed and the request
 * fails. Other dispatchers ignore the option.
 */
export const ON_CONNECTION = Symbol('site-status.onConnection')

/** The SNI name undici would derive from the request's Host header (none for an IP literal). */
function serverName(headers: Dispatcher.DispatchOptions['headers']): string | null {
  let host: unknown
  if (Array.isArray(headers)) {
    for (let i = 0; i + 1 < headers.length; i += 2) if (String(headers[i]).toLowerCase() === 'host') host = headers[i + 1]
  } else if (headers && typeof headers === 'object' && !(Symbol.iterator in headers)) {
    for (const [name, value] of Object.entries(headers)) if (name.toLowerCase() === 'host') host = value
  }
  if (typeof host !== 'string' || host === '') return null
  const name = host.startsWith('[') ? host.slice(1, host.indexOf(']')) : host.replace(/:\d*$/, '')
  return isIP(name) === 0 ? name : ''
}

/**
 * Tells a handler its request failed before any Client took it: in its own terms, as undici's
 * dispatchers do (a handler of the current interface, such as a probe's hop, gets
 * onResponseError; the ones undici's fetch and request pass still have the legacy onError).
 */
function fail(handler: Dispatcher.DispatchHandler, err: Error): void {
  if (handler.onResponseError !== undefined) handler.onResponseError(undefined as never, err)
  // eslint-disable-next-line @typescript-eslint/no-deprecated
  else handler.onError?.(err)
}

/** Not undici's "recoverable" UND_ERR_SOCKET: that makes a Client ask to connect again, forever. */
function connectionGone(): Error {
  return Object.assign(new Error('the connection made for this request is gone'), { code: 'ECONNRESET' })
}

/**
 * A dispatcher that dials first, with the location's own connector, and gives only a connection
 * that exists a Client: one Client per request, so every probe is measured on a connection of its
 * own and nothing waits in a queue behind another probe of the same origin. Each request names its
 * own origin: a direct location uses one of these for every site, and a ProxyAgent makes one per
 * origin through its factory.
 *
 * Why not undici's Agent with a Pool per origin: when every origin is seen once, the Pool (and the
 * request queue it allocates for reuse that never comes) costs most of a probe's CPU, and a refused
 * dial goes through the whole Client error path; dialled here it costs a fraction of that. An Agent
 * in front of this one cost a probe its map entry, its listeners and a dispatcher per origin.
 *
 * A request sent with `reset` (`connection: close`, as probes and webhooks are) closes its
 * connection once answered, and its Client is left to the garbage collector; any other request's
 * Client is asked to close once dispatched. Connection events are emitted as a Pool would, so an
 * Agent holding this dispatcher forgets the origin as soon as its last connection is gone.
 */
export class SingleUseClients extends Dispatcher {
  readonly #options: Client.Options
  readonly #connect: Connector
  /** Each Client whose connection is still open. */
  readonly #live = new Set<Client>()
  #closed = false
  #destroyed = false
  readonly #connected = (origin: URL, targets: readonly Dispatcher[]): void => {
    this.emit('connect', origin, targets as Dispatcher[])
  }
  readonly #disconnected = (origin: URL, targets: readonly Dispatcher[], err: Error): void => {
    this.#live.delete(targets[0] as Client)
    this.emit('disconnect', origin, targets as Dispatcher[], err as never)
  }

  constructor(options: Client.Options) {
    super()
    if (typeof options.connect !== 'function') throw new TypeError('SingleUseClients needs a connector function')
    this.#options = options
    this.#connect = options.connect
  }

  get destroyed(): boolean {
    return this.#destroyed
  }

  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    if (this.#closed || this.#destroyed) {
      fail(handler, new Error(this.#destroyed ? 'dispatcher destroyed' : 'dispatcher closed'))
      return false
    }
    const url = typeof options.origin === 'string' ? new URL(options.origin) : options.origin
    if (url === undefined) throw new TypeError('SingleUseClients needs an origin per request')
    const { host, hostname, protocol, port } = url
    const secure = protocol === 'https:'
    const params = {
      host,
      hostname: hostname.startsWith('[') ? hostname.slice(1, -1) : hostname,
      protocol,
      port,
      servername: secure ? (serverName(options.headers) ?? undefined) : undefined,
      localAddress: null
    }
    this.#connect(params, (err, socket) => {
      // undici's connector type pairs a null error with a socket; a connector written by hand (ours
      // in location-dispatcher.ts among them) can break that, so both are checked.
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition
      if (err !== null || socket === null) {
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- as above
        const error = err ?? new Error('no connection')
        this.emit('connectionError', url, [this], error as never)
        fail(handler, error)
        return
      }
      const wanted = (options as { [ON_CONNECTION]?: (s: Socket) => boolean | undefined })[ON_CONNECTION]?.(socket) !== false
      if (this.#destroyed || !wanted) {
        socket.destroy()
        fail(handler, new Error(this.#destroyed ? 'dispatcher destroyed' : 'the request was abandoned while connecting'))
        return
      }
      this.#run(url, socket, options, handler)
    })
    return true
  }

  #run(url: URL, socket: Socket, options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): void {
    // The connection is handed over once, on the next tick: a Client answered synchronously from
    // inside its own connect step never starts its request, and one that asks again (to retry
    // after the connection closed) must get an error, not the same closed socket in a loop.
    let unused: Socket | null = socket
    const connect: Connector = (_params, cb) => {
      const handed = unused
      unused = null
      queueMicrotask(() => {
        if (handed !== null) cb(null, handed)
        else cb(connectionGone(), null)
      })
    }
    const client = new Client(url, { ...this.#options, connect })
    client.on('connect', this.#connected).on('disconnect', this.#disconnected)
    this.#live.add(client)
    client.dispatch(options, handler)
    // close() lets the one request finish, then releases the Client and its connection. A Client
    // is closed once: closing it again (or after a destroy) rejects with UND_ERR_CLOSED or
    // UND_ERR_DESTROYED, which nobody needs to hear about.
    if (options.reset !== true) client.close().catch(() => {})
  }

  override close(): Promise<void>
  override close(callback: () => void): void
  override close(callback?: () => void): Promise<void> | void {
    this.#closed = true
    const done = Promise.all([...this.#live].map((c) => c.close().catch(() => {}))).then(() => {})
    if (callback === undefined) return done
    void done.then(callback)
  }

  override destroy(): Promise<void>
  // The overloads are Dispatcher's own.
  // eslint-disable-next-line @typescript-eslint/unified-signatures
  override destroy(err: Error | null): Promise<void>
  override destroy(callback: () => void): void
  override destroy(err: Error | null, callback: () => void): void
  override destroy(a?: Error | null | (() => void), b?: () => void): Promise<void> | void {
    const err = typeof a === 'function' ? null : (a ?? null)
    const callback = typeof a === 'function' ? a : b
    this.#destroyed = true
    const done = Promise.all([...this.#live.keys()].map((c) => c.destroy(err).catch(() => {}))).then(() => {})
    if (callback === undefined) return done
    void done.then(callback)
  }
}
