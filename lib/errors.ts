import Boom from '@hapi/boom'
import type { Lifecycle, Request, ResponseObject, ResponseToolkit, Server } from '@hapi/hapi'
import type { Duplex } from 'node:stream'
import { isDatabaseUnavailable } from './store/db.js'

export { isDatabaseUnavailable } from './store/db.js'

export function databaseUnavailable(): Boom.Boom {
  return Boom.serverUnavailable('database unavailable')
}

/**
 * A loggable summary of an error: its type, code and message without the SQL that Knex prefixes to
 * driver errors, and without a stack. Logs are read by people who must never see keys or queries.
 */
export function safeErrorSummary(err: unknown): Record<string, unknown> {
  if (!(err instanceof Error)) return { type: typeof err }
  const e = err as Error & { code?: unknown; sqlMessage?: unknown; sql?: unknown }
  let message = typeof e.sqlMessage === 'string' ? e.sqlMessage : e.message
  if (typeof e.sql === 'string' || (typeof e.code === 'string' && /^(ER_|SQLITE_)/.test(e.code)) || / - /.test(message)) {
    message = message.slice(message.lastIndexOf(' - ') + 1).replace(/^- /, '')
  }
  return { type: e.name, code: typeof e.code === 'string' ? e.code : undefined, message: message.slice(0, 300) }
}

declare module '@hapi/hapi' {
  interface PluginSpecificConfiguration {
    /** The route answers HTML, errors included: the error formatter renders its failures as a page. */
    page?: true
  }
}

/**
 * hapi refuses a key outside a route's `auth.access.scope` with 403 "Insufficient scope" and the
 * scopes it needed in the error's `data.need`; the client is told which scope, and which it holds.
 * Undefined for any other error.
 */
function scopeMessage(request: Request, boom: Boom.Boom): string | undefined {
  const data: unknown = boom.data
  if (boom.output.statusCode !== 403 || typeof data !== 'object' || data === null || !('need' in data) || !Array.isArray(data.need)) {
    return undefined
  }
  const needed: string[] = []
  for (const need of data.need as unknown[]) {
    for (const kind of ['selection', 'required'] as const) {
      const names: unknown = (need as Record<string, unknown> | null)?.[kind]
      if (Array.isArray(names)) needed.push(...names.map(String))
    }
  }
  if (needed.length === 0) return undefined
  return scopeRefusal(needed, (request.auth.credentials as { scope?: unknown } | null)?.scope)
}

/** What a key refused for its scope is told: the scope the route needs, and the ones the key holds. */
export function scopeRefusal(needed: readonly string[], held: unknown): string {
  const scopes = Array.isArray(held) && held.length > 0 ? held.map(String).join(', ') : 'none'
  return `this API key lacks the "${needed.join('" or "')}" scope this route needs (the key's scopes: ${scopes})`
}

/** Draws an error as an HTML page, for routes that answer HTML (`options.plugins.page`). */
export type HtmlErrorRenderer = (h: ResponseToolkit, status: number, message: string, headers: Record<string, string>) => ResponseObject

/**
 * The one place where failures become responses: every error is `{"error": "..."}` with its status
 * and headers (WWW-Authenticate, Retry-After, Allow) kept; on a route that answers HTML the same
 * status, message and headers come as a page instead. Server faults say nothing about their
 * cause; the cause goes to the log through hapi's request-error event.
 */
export function formatErrorResponse(request: Request, h: ResponseToolkit, renderHtml?: HtmlErrorRenderer): Lifecycle.ReturnValue {
  const response = request.response
  if (!Boom.isBoom(response)) return h.continue
  let boom: Boom.Boom = response
  if (boom.isServer && boom.output.statusCode !== 503 && isDatabaseUnavailable(boom)) {
    const replacement = databaseUnavailable()
    replacement.output.headers = { ...boom.output.headers }
    boom = replacement
  }
  const status = boom.output.statusCode
  const message =
    status === 500 ? 'internal server error' : (scopeMessage(request, boom) ?? (boom.output.payload.message || boom.output.payload.error))
  boom.output.payload = { error: message } as unknown as Boom.Payload
  if (status === 503 && boom.output.headers['Retry-After'] === undefined) boom.output.headers['Retry-After'] = '5'
  if (renderHtml && request.route.settings.plugins?.page) {
    return renderHtml(h, status, message, boom.output.headers as Record<string, string>)
  }
  return boom === response ? h.continue : boom
}

/** Protocol errors answered before hapi ever sees a request, by Node's HTTP parser code. */
const CLIENT_ERRORS: Readonly<Record<string, readonly [number, string, string]>> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', 'request headers too large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'request timed out'],
  ERR_HTTP_HEADERS_TIMEOUT: [408, 'Request Timeout', 'request headers timed out']
}

/**
 * Requests that Node's HTTP parser rejects (broken request lines, oversized headers, bad framing,
 * a chunked body that breaks off) never reach hapi's handlers, and hapi's own answer is a bare
 * `400 Bad Request` without a body. Clients get the same JSON `{"error": ...}` as everywhere else,
 * with 431 for oversized headers, and the connection is closed since its framing can no longer be
 * trusted. As Node itself does, nothing is written once an answer to this request has begun.
 */
export function answerClientErrors(listener: Server['listener']): void {
  listener.removeAllListeners('clientError')
  listener.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    const pending = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage
    if (!socket.writable || pending?.headersSent) {
      socket.destroy()
      return
    }
    const [status, reason, message] = CLIENT_ERRORS[err.code ?? ''] ?? [400, 'Bad Request', 'malformed HTTP request']
    const body = JSON.stringify({ error: message })
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json; charset=utf-8\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`
    )
  })
}
