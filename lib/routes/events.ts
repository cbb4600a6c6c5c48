import Boom from '@hapi/boom'
import type { Readable } from 'node:stream'
import type { Request, ResponseObject, ResponseToolkit, ServerRoute } from '@hapi/hapi'
import Joi from 'joi'
import { requireScope } from '../auth.js'
import { StreamRefusedError, type EventStreams } from '../events/streams.js'
import { refundRequest, type RateLimitCredentials, type Limiter } from '../rate-limit.js'

const EVENT_ID = /^\d{1,15}$/
const RETRY_AFTER_S = 5
const idMessage = (name: string): Record<string, string> => ({
  'string.pattern.base': `"${name}" must be an event id (a whole number from 0)`,
  'string.base': `"${name}" must be an event id (a whole number from 0)`
})

/** An open stream as the answer: unbuffered by proxies, and closed (its slot freed) when the client goes. */
export function eventStreamResponse(request: Request, h: ResponseToolkit, stream: Readable): ResponseObject {
  // hapi stops writing when the client goes, but leaves the source open: close it, which frees the slot.
  request.raw.res.once('close', () => stream.destroy())
  return h.response(stream).type('text/event-stream; charset=utf-8').header('cache-control', 'no-cache').header('x-accel-buffering', 'no')
}

/**
 * `GET /api/v1/events`: Server-Sent Events. `Last-Event-ID` (what EventSource sends when it
 * reconnects) or `?since=` replays what followed that id; the header wins, since a reconnecting
 * EventSource keeps its first URL. Opening costs one unit; a refused stream costs nothing.
 */
export function eventRoutes({ streams, limiter }: { streams: EventStreams; limiter: Limiter }): ServerRoute[] {
  return [
    {
      method: 'GET',
      path: '/api/v1/events',
      options: {
        auth: requireScope('read'),
        validate: {
          query: Joi.object({ since: Joi.string().pattern(EVENT_ID).messages(idMessage('since')) }).unknown(false),
          headers: Joi.object({ 'last-event-id': Joi.string().allow('').pattern(EVENT_ID).messages(idMessage('Last-Event-ID')) }).unknown(
            true
          )
        }
      },
      handler: async (request, h) => {
        const header = request.headers['last-event-id']
        const query = (request.query as { since?: string }).since
        const raw = header !== undefined && header !== '' ? header : query
        const { keyId } = request.auth.credentials as unknown as RateLimitCredentials
        let stream
        try {
          stream = await streams.open({ key: String(keyId), since: raw === undefined ? null : Number(raw) })
        } catch (err) {
          if (!(err instanceof StreamRefusedError)) throw err
          await refundRequest(request, limiter)
          const boom = err.code === 'STREAMS_PER_KEY' ? Boom.tooManyRequests(err.message) : Boom.serverUnavailable(err.message)
          // A slot frees when a stream closes, which nobody can foresee: a short wait, as every 429 and 503 carries one.
          boom.output.headers['Retry-After'] = String(RETRY_AFTER_S)
          throw boom
        }
        return eventStreamResponse(request, h, stream)
      }
    }
  ]
}
