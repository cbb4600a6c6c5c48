import Boom from '@hapi/boom'
import type { Lifecycle, Request, ResponseToolkit } from '@hapi/hapi'
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

/**
 * The one place where failures become responses: every error is `{"error": "..."}` with its status
 * and headers (WWW-Authenticate, Retry-After, Allow) kept. Server faults say nothing about their
 * cause; the cause goes to the log through hapi's request-error event.
 */
export function formatErrorResponse(request: Request, h: ResponseToolkit): Lifecycle.ReturnValue {
  const response = request.response
  if (!Boom.isBoom(response)) return h.continue
  let boom: Boom.Boom = response
  if (boom.isServer && boom.output.statusCode !== 503 && isDatabaseUnavailable(boom)) {
    const replacement = databaseUnavailable()
    replacement.output.headers = { ...boom.output.headers }
    boom = replacement
  }
  const status = boom.output.statusCode
  const message = status === 500 ? 'internal server error' : String(boom.output.payload.message || boom.output.payload.error)
  boom.output.payload = { error: message } as unknown as Boom.Payload
  if (status === 503 && boom.output.headers['Retry-After'] === undefined) boom.output.headers['Retry-After'] = '5'
  return boom === response ? h.continue : boom
}
