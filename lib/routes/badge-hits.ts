import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http'
import type { Request, Server } from '@hapi/hapi'

/**
 * How long a badge's answer is sent again as it is to the same URL: the second figures are already
 * reused for (FIGURE_REUSE_MS, lib/badge/sources.ts). Behind an image proxy a badge then follows a
 * change within 52 s (lib/badge/renderer.ts, BADGE_CACHE_CONTROL).
 */
export const BADGE_HIT_MS = 1000

/** Answers kept at most; past it the table starts over (URLs carry labels anyone can make up). */
const MAX_ANSWERS = 20_000

const PREFIX = '/api/badge/'

interface Answer {
  /** Names and values in turn, as `writeHead` takes them without looking at each name again. */
  readonly headers: string[]
  readonly body: Buffer
  /** Until when (performance.now()) it may be sent again. */
  readonly until: number
  /** What it was drawn from, as a count of changes, and that count when it was drawn. */
  readonly version: () => number
  readonly at: number
}

/** What a badge route says of its answer, for {@link BadgeHits.keep}: the bytes it sends and, if it knows, what they follow. */
interface Sent {
  body: Buffer
  version?: () => number
  at?: number
}

const SENT = Symbol('badge answer sent')
type Marked = Request & { [SENT]?: Sent }
/** The states' change count when a badge request reached hapi. */
const ARRIVED = Symbol('changes on arrival')
type Stamped = IncomingMessage & { [ARRIVED]?: number }

/**
 * Badge answers sent again without hapi. An embedded badge is asked for by the same URL over and
 * over (browsers, wikis, image proxies), and hapi's lifecycle (router, request object, extension
 * points, response preparation) costs a hit more than drawing it did (docs/benchmarks.md,
 * bench/badge). A GET of a badge URL with the same `Accept-Encoding` as a 200 answered through hapi
 * less than {@link BADGE_HIT_MS} ago, with no `If-None-Match`, gets that answer's headers and bytes
 * as they were; anything else (a first ask, a conditional one, HEAD, a coding hapi compresses per
 * request, an error, a badge of nothing known) goes through hapi as before. A change to what the
 * answer was drawn from ends it at once: the site's own count of changes for a site's status badge,
 * every site's (`SiteStates.changes`) for the others, so a status badge follows its site at once. Badge
 * answers are not access-logged and take no key, so nothing else is skipped.
 */
export class BadgeHits {
  readonly #answers = new Map<string, Answer>()
  readonly #changes: () => number
  readonly #now: () => number
  readonly #ttlMs: number
  readonly #max: number
  #sent = 0

  constructor({
    changes = () => 0,
    now = () => performance.now(),
    ttlMs = BADGE_HIT_MS,
    max = MAX_ANSWERS
  }: { changes?: () => number; now?: () => number; ttlMs?: number; max?: number } = {}) {
    this.#changes = changes
    this.#now = now
    this.#ttlMs = ttlMs
    this.#max = max
  }

  /** Sends the kept answer for `req` if there is a current one; false leaves the request to hapi. */
  serve(req: IncomingMessage, res: ServerResponse): boolean {
    const url = req.url
    if (req.method !== 'GET' || url === undefined || !url.startsWith(PREFIX)) return false
    ;(req as Stamped)[ARRIVED] = this.#changes()
    if (req.headers['if-none-match'] !== undefined) return false
    const key = keyOf(url, req.headers['accept-encoding'])
    const answer = this.#answers.get(key)
    if (answer === undefined) return false
    if (this.#now() >= answer.until || answer.version() !== answer.at) {
      this.#answers.delete(key)
      return false
    }
    this.#sent++
    res.writeHead(200, answer.headers)
    res.end(answer.body)
    return true
  }

  /** Keeps a badge route's 200 answer, once hapi has sent it, if `sendBadge` marked it as sent whole. */
  keep(request: Request): void {
    const sent = (request as Marked)[SENT]
    if (sent === undefined || request.method !== 'get') return
    const { req, res } = request.raw
    const version = sent.version ?? this.#changes
    const at = sent.version === undefined ? (req as Stamped)[ARRIVED] : sent.at
    if (at === undefined || res.statusCode !== 200 || req.headers['if-none-match'] !== undefined || req.url === undefined) return
    if (this.#answers.size >= this.#max) this.#answers.clear()
    this.#answers.set(keyOf(req.url, req.headers['accept-encoding']), {
      headers: flat(res.getHeaders()),
      body: sent.body,
      until: this.#now() + this.#ttlMs,
      version,
      at
    })
  }

  /** Answers sent from here so far. */
  get sent(): number {
    return this.#sent
  }

  /** Answers kept now. */
  get size(): number {
    return this.#answers.size
  }
}

function flat(headers: Record<string, number | string | string[] | undefined>): string[] {
  const list: string[] = []
  for (const [name, value] of Object.entries(headers)) {
    if (Array.isArray(value)) for (const one of value) list.push(name, one)
    else if (value !== undefined) list.push(name, String(value))
  }
  return list
}

const keyOf = (url: string, encoding: string | undefined): string => (encoding === undefined ? url : `${url}\n${encoding}`)

/**
 * Marks a badge answer whose body hapi sends as it is (no coding of its own), so that it may be
 * kept; `version`, read now, is what it follows (by default every site's count of changes, as it
 * stood when the request arrived).
 */
export function markSentWhole(request: Request, body: Buffer, version?: () => number): void {
  ;(request as Marked)[SENT] = version === undefined ? { body } : { body, version, at: version() }
}

/**
 * Puts `hits` in front of hapi on `listener`: a request it answers never reaches hapi; the others
 * go to hapi's own request listener as before. Each badge answer hapi sends is offered to `hits`.
 */
export function answerBadgeHitsFirst(server: Server, listener: HttpServer, hits: BadgeHits): void {
  const hapi = listener.listeners('request') as Array<(req: IncomingMessage, res: ServerResponse) => void>
  listener.removeAllListeners('request')
  listener.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (hits.serve(req, res)) return
    for (const dispatch of hapi) dispatch.call(listener, req, res)
  })
  server.events.on('response', (request) => {
    hits.keep(request)
  })
}
