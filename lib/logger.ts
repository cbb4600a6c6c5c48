import type { Server } from '@hapi/hapi'
import { pino, type Logger } from 'pino'
import { safeErrorSummary } from './errors.js'

interface RequestLike {
  info?: { id?: string; remoteAddress?: string }
  method?: string
  path?: string
  raw?: { req?: { method?: string; url?: string } }
}

/** Anything shaped like one of our keys (lib/keys.ts), wherever a client pasted it. */
const KEY_TEXT = /ssk_[A-Za-z0-9_-]*/g

/** A path fit for a log line: a key pasted into a URL is not written out. */
export function loggablePath(path: string | undefined): string | undefined {
  return path?.replace(KEY_TEXT, 'ssk_[redacted]')
}

/**
 * Requests are logged by method, path and id only: no headers at all, so neither the
 * Authorization header nor a key pasted into another header can reach a log line, and a key
 * pasted into the path is redacted.
 */
function requestSerializer(request: RequestLike): Record<string, unknown> {
  return {
    id: request.info?.id,
    method: (request.method ?? request.raw?.req?.method ?? '').toUpperCase(),
    path: loggablePath(request.path ?? request.raw?.req?.url?.split('?')[0]),
    remoteAddress: request.info?.remoteAddress
  }
}

function responseSerializer(response: { statusCode?: number }): Record<string, unknown> {
  return { statusCode: response.statusCode }
}

export function createLogger({ level, stream }: { level: string; stream?: NodeJS.WritableStream }): Logger {
  const options = {
    level,
    // No redaction pass: the serializers never emit headers in the first place, which the tests
    // check over every log line, and pino's redaction made each per-request child logger costly.
    serializers: { req: requestSerializer, res: responseSerializer, err: safeErrorSummary, error: safeErrorSummary }
  }
  return stream ? pino(options, stream as pino.DestinationStream) : pino(options)
}

/**
 * Requests not access-logged: load balancers poll /healthz, and badges are embedded on busy pages,
 * where a log line per hit would cost more than the answer. Their errors are still logged by
 * `logRequestErrors`. Decided on the path because hapi-pino asks before the route is known.
 */
function unlogged(_options: unknown, request: { path: string }): boolean {
  return request.path === '/healthz' || request.path.startsWith('/api/badge/')
}

/** hapi-pino options that keep its own serializers from reintroducing headers or stacks. */
export function hapiPinoOptions(logger: Logger) {
  return {
    instance: logger,
    wrapSerializers: false,
    serializers: { req: requestSerializer, res: responseSerializer, err: safeErrorSummary },
    logPayload: false,
    logQueryParams: false,
    logRequestStart: false,
    // The per-request child logger binds only the request id: serializing the whole request for
    // every child cost more than a tenth of a status request, and the response line's message
    // already names the method, path and status.
    getChildBindings: (request: { info: { id: string } }) => ({ req_id: request.info.id }),
    // Request errors are logged by `logRequestErrors`: pino would copy the raw error message,
    // which Knex prefixes with the SQL, into the line's msg.
    logEvents: ['onPostStart', 'onPostStop', 'response'],
    customRequestCompleteMessage: (request: { method: string; path: string; raw: { res: { headersSent: boolean; statusCode: number } } }, ms: number) =>
      `[response] ${request.method} ${loggablePath(request.path) ?? ''} ${request.raw.res.headersSent ? request.raw.res.statusCode : '-'} (${ms}ms)`,
    ignoreFunc: unlogged
  }
}

/** Logs each request's internal error once; the `err` serializer reduces it to a summary with no stack and no SQL. */
export function logRequestErrors(server: Server, logger: Logger): void {
  server.events.on({ name: 'request', channels: 'error' }, (request, event) => {
    logger.error({ req: request, err: event.error }, 'request failed')
  })
}
