import type { Server } from '@hapi/hapi'
import { pino, type Logger } from 'pino'
import pinoPretty from 'pino-pretty'
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

/** How log lines are written: one JSON object a line (for machines), or pino-pretty's lines (for people). */
export type LogFormat = 'json' | 'pretty'

/**
 * The format to write: LOG_FORMAT when set, else pretty on a terminal (someone is reading) and JSON
 * anywhere else (a file, a pipe, a log collector).
 */
export function chooseLogFormat(setting: LogFormat | null, isTty: boolean): LogFormat {
  return setting ?? (isTty ? 'pretty' : 'json')
}

/**
 * pino-pretty's format, written synchronously into `stream`: its transport form pipes through a
 * stream, and the last lines before an exit (`stopped`) could be lost. Colours only on a terminal.
 */
function prettyDestination(stream: NodeJS.WritableStream & { isTTY?: boolean }): pino.DestinationStream {
  const prettify = pinoPretty.prettyFactory({ colorize: stream.isTTY === true, translateTime: 'SYS:yyyy-mm-dd HH:MM:ss.l o' })
  return {
    write: (line: string) => {
      stream.write(prettify(line))
    }
  }
}

export function createLogger({
  level,
  stream,
  format = 'json'
}: {
  level: string
  stream?: NodeJS.WritableStream & { isTTY?: boolean }
  format?: LogFormat
}): Logger {
  const options = {
    level,
    // No redaction pass: the serializers never emit headers in the first place, which the tests
    // check over every log line, and pino's redaction made each per-request child logger costly.
    serializers: { req: requestSerializer, res: responseSerializer, err: safeErrorSummary, error: safeErrorSummary }
  }
  if (format === 'pretty') return pino(options, prettyDestination(stream ?? process.stdout))
  return stream ? pino(options, stream as pino.DestinationStream) : pino(options)
}

/**
 * Requests not access-logged: load balancers poll /healthz, and badges are embedded on busy pages,
 * where a log line per hit would cost more than the answer. Their errors are still logged by
 * `logRequestErrors`.
 */
function unlogged(request: { path: string }): boolean {
  return request.path === '/healthz' || request.path.startsWith('/api/badge/')
}

const SERIALIZERS = Symbol.for('pino.serializers')
const INFO = 30
/** hapi-pino's mapping of event tags to levels: a tag that names a level sets it (the highest wins). */
const TAG_LEVELS: Readonly<Record<string, number>> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 }
const LEVEL_NAMES: Readonly<Record<number, 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal'>> = {
  10: 'trace',
  20: 'debug',
  30: 'info',
  40: 'warn',
  50: 'error',
  60: 'fatal'
}

interface LogEvent {
  tags: string[]
  data?: unknown
  error?: unknown
}

/** A `server.log()` or `request.log()` event as hapi-pino wrote it: `{tags, data}` at the level its tags name, else info. */
function logEvent(logger: Logger, event: LogEvent): void {
  let highest = 0
  for (const tag of event.tags) {
    const level = TAG_LEVELS[tag]
    if (level !== undefined && level > highest) highest = level
  }
  logger[LEVEL_NAMES[highest] ?? 'info']({ tags: event.tags, data: event.data })
}

/**
 * The access log, with the lines hapi-pino wrote for us (`server started`/`stopped`, one
 * `[response]` line per request at info, `server.log()` and `request.log()` events) and none of
 * its cost per request: hapi-pino ran an onRequest step that made a child logger for every
 * request, whether or not anything was logged. Here a request's child logger (bound to its id) is
 * made only when a line is written, and the response line is composed only when info is enabled.
 * Lines carry no headers: the serializers (`createLogger`) emit method, path and id only.
 */
export function registerAccessLog(server: Server, logger: Logger): void {
  // As hapi-pino did: a logger built elsewhere gets our serializers where it has none of its own.
  const own = logger as unknown as Record<symbol, Record<string, unknown>>
  const existing = own[SERIALIZERS] ?? {}
  const merged: Record<string, unknown> = { req: requestSerializer, res: responseSerializer, err: safeErrorSummary, ...existing }
  if (existing.err === pino.stdSerializers.err) merged.err = safeErrorSummary
  own[SERIALIZERS] = merged
  server.decorate('server', 'logger', logger)

  server.ext('onPostStart', () => {
    logger.info(server.info, 'server started')
  })
  server.ext('onPostStop', () => {
    logger.info(server.info, 'server stopped')
  })
  // hapi's types declare `error` on every log event; only error events carry one.
  server.events.on('log', (hapiEvent) => {
    const event: LogEvent = hapiEvent
    if (event.error !== undefined) logger.error({ err: event.error, tags: event.tags })
    else logEvent(logger, event)
  })
  server.events.on({ name: 'request', channels: 'app' }, (request, event) => {
    if (unlogged(request)) return
    logEvent(logger.child({ req_id: request.info.id }), event)
  })
  server.events.on('response', (request) => {
    if (logger.levelVal > INFO || unlogged(request)) return
    const info = request.info
    // hapi sets `completed` before it emits 'response'.
    const responseTime = info.completed - info.received
    const res = request.raw.res
    logger
      .child({ req_id: info.id })
      .info(
        { res, responseTime },
        `[response] ${request.method} ${loggablePath(request.path) ?? ''} ${res.headersSent ? res.statusCode : '-'} (${responseTime}ms)`
      )
  })
}

/** Logs each request's internal error once; the `err` serializer reduces it to a summary with no stack and no SQL. */
export function logRequestErrors(server: Server, logger: Logger): void {
  server.events.on({ name: 'request', channels: 'error' }, (request, event) => {
    logger.error({ req: request, err: event.error }, 'request failed')
  })
}
