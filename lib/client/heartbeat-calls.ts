/**
 * The client's calls of heartbeats: the keyed resource and the ping URLs (no key). SiteStatusClient
 * adds the other keyed calls on top.
 */
import { init, json, none, text, type CallOptions } from './api.js'
import { OpenCalls } from './open-calls.js'
import type * as T from './types.js'

const TEXT = { headers: { accept: 'text/plain' }, parseAs: 'text' as const }
const POSTED = { headers: { accept: 'text/plain', 'content-type': 'text/plain; charset=utf-8' }, parseAs: 'text' as const }
const asText = (body: string | undefined): string => body ?? ''

/** A text answer whose type the generated paths describe by media type: the text itself. */
async function said(pending: Promise<{ data?: unknown; response: Response }>): Promise<string> {
  const { data } = await pending
  return typeof data === 'string' ? data : ''
}

/** A ping's signal: `start`, `fail`, or an exit status 0-255. */
export type PingSignal = 'start' | 'fail' | number

/** A ping's `rid` and, by POST, its message. */
export interface PingOptions extends CallOptions {
  rid?: string
}

export class HeartbeatCalls extends OpenCalls {
  /** `GET /api/v1/heartbeats`: a page of heartbeats (scope `read`). */
  listHeartbeats(query: T.Query<'listHeartbeats'> = {}, options?: CallOptions): Promise<T.HeartbeatList> {
    return json(this.api.GET('/api/v1/heartbeats', { params: { query }, ...init(options) }))
  }

  /** `POST /api/v1/heartbeats`: adds a heartbeat; the answer's `ping_url` is shown this once (scope `manage`). */
  addHeartbeat(heartbeat: T.HeartbeatRequest, options?: CallOptions): Promise<T.HeartbeatWithPingUrl> {
    return json(this.api.POST('/api/v1/heartbeats', { body: heartbeat, ...init(options) }))
  }

  /** `GET /api/v1/heartbeats/{slug}`: a heartbeat's status record (scope `read`). */
  getHeartbeat(slug: string, options?: CallOptions): Promise<T.Heartbeat> {
    return json(this.api.GET('/api/v1/heartbeats/{slug}', { params: { path: { slug } }, ...init(options) }))
  }

  /** `PATCH /api/v1/heartbeats/{slug}`: changes, pauses or resumes a heartbeat (scope `manage`). */
  changeHeartbeat(slug: string, patch: T.HeartbeatPatch, options?: CallOptions): Promise<T.Heartbeat> {
    return json(this.api.PATCH('/api/v1/heartbeats/{slug}', { params: { path: { slug } }, body: patch, ...init(options) }))
  }

  /** `DELETE /api/v1/heartbeats/{slug}`: removes a heartbeat (scope `manage`). */
  removeHeartbeat(slug: string, options?: CallOptions): Promise<void> {
    return none(this.api.DELETE('/api/v1/heartbeats/{slug}', { params: { path: { slug } }, ...init(options) }))
  }

  /** `POST /api/v1/heartbeats/{slug}/token`: a new ping URL, the old one refused from now (scope `manage`). */
  rotateHeartbeatToken(slug: string, options?: CallOptions): Promise<T.HeartbeatWithPingUrl> {
    return json(this.api.POST('/api/v1/heartbeats/{slug}/token', { params: { path: { slug } }, ...init(options) }))
  }

  /** `GET /api/badge/heartbeat/{slug}`: a heartbeat's badge, SVG text. */
  getHeartbeatBadge(slug: string, query: T.Query<'getHeartbeatBadge'> = {}, options?: CallOptions): Promise<string> {
    const params = { path: { slug }, query }
    return text(
      this.api.GET('/api/badge/heartbeat/{slug}', { params, ...init(options), headers: { accept: 'image/svg+xml' }, parseAs: 'text' })
    )
  }

  /** `GET /api/badge/heartbeat/{slug}/endpoint`: a heartbeat's badge as shields.io endpoint JSON. */
  getHeartbeatEndpointBadge(
    slug: string,
    query: T.Query<'getHeartbeatEndpointBadge'> = {},
    options?: CallOptions
  ): Promise<T.EndpointBadge> {
    return json(this.api.GET('/api/badge/heartbeat/{slug}/endpoint', { params: { path: { slug }, query }, ...init(options) }))
  }

  /** `GET /api/badge/heartbeat/{slug}/uptime`: a heartbeat's uptime badge, SVG text. */
  getHeartbeatUptimeBadge(slug: string, query: T.Query<'getHeartbeatUptimeBadge'> = {}, options?: CallOptions): Promise<string> {
    const params = { path: { slug }, query }
    return text(
      this.api.GET('/api/badge/heartbeat/{slug}/uptime', {
        params,
        ...init(options),
        headers: { accept: 'image/svg+xml' },
        parseAs: 'text'
      })
    )
  }

  /** `GET /api/badge/heartbeat/{slug}/uptime/endpoint`: a heartbeat's uptime badge as shields.io endpoint JSON. */
  getHeartbeatUptimeEndpointBadge(
    slug: string,
    query: T.Query<'getHeartbeatUptimeEndpointBadge'> = {},
    options?: CallOptions
  ): Promise<T.EndpointBadge> {
    return json(this.api.GET('/api/badge/heartbeat/{slug}/uptime/endpoint', { params: { path: { slug }, query }, ...init(options) }))
  }

  /** `GET /ping/{token}`: a success; resolves `OK` once recorded. */
  ping(token: string, options?: PingOptions): Promise<string> {
    const params = { path: { token }, query: ridOf(options) }
    return text(this.api.GET('/ping/{token}', { params, ...init(options), ...TEXT }))
  }

  /** `POST /ping/{token}`: a success with a message (at most 10 KiB). */
  postPing(token: string, message: string, options?: PingOptions): Promise<string> {
    const params = { path: { token }, query: ridOf(options) }
    return said(this.api.POST('/ping/{token}', { params, body: message, bodySerializer: asText, ...init(options), ...POSTED }))
  }

  /** `GET /ping/{token}/{signal}`: a start, a failure or an exit status. */
  pingSignal(token: string, signal: PingSignal, options?: PingOptions): Promise<string> {
    const params = { path: { token, signal: String(signal) }, query: ridOf(options) }
    return text(this.api.GET('/ping/{token}/{signal}', { params, ...init(options), ...TEXT }))
  }

  /** `POST /ping/{token}/{signal}`: a start, a failure or an exit status, with a message. */
  postPingSignal(token: string, signal: PingSignal, message: string, options?: PingOptions): Promise<string> {
    const params = { path: { token, signal: String(signal) }, query: ridOf(options) }
    return said(this.api.POST('/ping/{token}/{signal}', { params, body: message, bodySerializer: asText, ...init(options), ...POSTED }))
  }
}

const ridOf = (options: PingOptions | undefined): { rid?: string } => (options?.rid === undefined ? {} : { rid: options.rid })
