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

/** Not undici's "recoverable" UND_ERR_SOCKET: that makes a Client ask to connect again, forever. */
function connectionGone(): Error {
  return Object.assign(new Error('the connection made for this request is gone'), { code: 'ECONNRESET' })
}

/**
 * The per-origin dispatcher behind a location's Agent or ProxyAgent. It dials first, with the
 * location's own connector, and only a connection that exists gets a Client: one Client per
 * request, closed as soon as that request is done, so every probe is measured on a connection of
 * its own and nothing waits in a queue behind another probe of the same origin.
 *
 * Why not undici's default Pool per origin: when every origin is seen once, the Pool (and the
 * request queue it allocates for reuse that never comes) costs most of a probe's CPU, and a refused
 * dial goes through the whole Client error path; dialled here it costs a fraction of that.
 *
 * Connection events are emitted as a Pool would, so the Agent holding this dispatcher forgets the
 * origin as soon as its last connection is gone.
 */
export class SingleUseClients extends Dispatcher {
  readonly #origin: string | URL
  readonly #url: URL
  readonly #options: Client.Options
  readonly #connect: Connector
  /** Each Client still in use, with its own close under way (it was asked to close once dispatched). */
  readonly #live = new Map<Client, Promise<void>>()
  #destroyed = false

  constructor(origin: string | URL, options: Client.Options) {
    super()
    if (typeof options.connect !== 'function') throw new TypeError('SingleUseClients needs a connector function')
    this.#origin = origin
    this.#url = new URL(origin)
    this.#options = options
    this.#connect = options.connect
  }

  get destroyed(): boolean {
    return this.#destroyed
  }

  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const { host, hostname, protocol, port } = this.#url
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
        this.emit('connectionError', this.#url, [this], error as never)
        // The handlers undici's own fetch and request pass still use the legacy callbacks.
        // eslint-disable-next-line @typescript-eslint/no-deprecated
        handler.onError?.(error)
        return
      }
      const wanted = (options as { [ON_CONNECTION]?: (s: Socket) => boolean | undefined })[ON_CONNECTION]?.(socket) !== false
      if (this.#destroyed || !wanted) {
        socket.destroy()
        // eslint-disable-next-line @typescript-eslint/no-deprecated -- as above
        handler.onError?.(new Error(this.#destroyed ? 'dispatcher destroyed' : 'the request was abandoned while connecting'))
        return
      }
      this.#run(socket, options, handler)
    })
    return true
  }

  #run(socket: Socket, options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): void {
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
    const client = new Client(this.#origin, { ...this.#options, connect })
    client
      .on('connect', (origin, targets) => this.emit('connect', origin, targets))
      .on('disconnect', (origin, targets, err) => this.emit('disconnect', origin, targets, err))
    client.dispatch(options, handler)
    // close() lets the one request finish, then releases the Client and its connection. A Client
    // is closed once: closing it again (or after a destroy) rejects with UND_ERR_CLOSED or
    // UND_ERR_DESTROYED, so this dispatcher's own close waits for these instead.
    const closing = client
      .close()
      .catch(() => {})
      .finally(() => this.#live.delete(client))
    this.#live.set(client, closing)
  }

  override close(): Promise<void>
  override close(callback: () => void): void
  override close(callback?: () => void): Promise<void> | void {
    const done = Promise.all(this.#live.values()).then(() => {})
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
