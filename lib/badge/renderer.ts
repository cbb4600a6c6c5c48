import { createHash } from 'node:crypto'
import { gzipSync } from 'node:zlib'
import { makeBadge } from 'badge-maker'
import { LRUCache } from 'lru-cache'
import type { BadgeContent, BadgeStyle } from './describe.js'
import { LOGOS, type LogoName } from './logos.js'

/** A rendered badge, ready to send as it is on every hit until the site's state changes. */
export interface RenderedBadge {
  body: string
  /** The body's UTF-8 bytes, encoded once: a hit writes them as they are. */
  bytes: Buffer
  /** The body gzipped once, for the many clients that accept gzip. */
  gzip: Buffer
  /** Strong validator (unquoted): a hash of the body. */
  etag: string
  /** The header values, quoted once: `etag` for the body, and with `-gzip` for the gzipped body. */
  etagHeader: string
  gzipEtagHeader: string
  /**
   * The hit's headers (ETag included), one object per coding, built on first use and then copied
   * into every answer at once: hapi's `header()` would lower-case, check and append each per hit.
   */
  headers?: { identity: Readonly<Record<string, string>>; gzip: Readonly<Record<string, string>> }
}

/**
 * Bytes of rendered badges kept: about 10,000 badges. Labels come from URLs, so the cache must be
 * bounded; when it is full it starts over, which costs one drawing per badge still in use.
 */
const MAX_CACHE_BYTES = 32 * 1024 * 1024

/**
 * Badges with a label from the URL (`?label=`) kept at most. Anyone can make up labels, so they get
 * a cache of their own: a flood of them evicts only each other, never the badges people embed.
 */
const MAX_CUSTOM_BADGES = 2000

/**
 * How long anyone may keep a badge: fresh for 20 s, then served for up to 30 s more while a cache
 * asks again (`stale-while-revalidate`). With the second figures are reused here and the second an
 * answer is sent again (lib/routes/badge-hits.ts), a badge behind an image proxy such as GitHub's
 * camo follows a change within 52 s.
 */
export const BADGE_CACHE_CONTROL = 'public, max-age=20, stale-while-revalidate=30'

/** A badge of nothing known (an untracked domain), and every error: never kept, so that it is gone at the next look. */
export const NO_STORE = 'no-store'

/** Endpoint badges are refreshed by shields.io no more often than this (its minimum is 300 s). */
const ENDPOINT_CACHE_SECONDS = 300

// XML 1.0 cannot carry most control characters, and a name stored by other means than the
// operator tool might hold one.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g

/** A body ready to send on every hit: gzipped once, its validators made once. */
export function renderedBody(body: string): RenderedBadge {
  const etag = createHash('sha256').update(body).digest('base64url').slice(0, 32)
  return { body, bytes: Buffer.from(body), gzip: gzipSync(body), etag, etagHeader: `"${etag}"`, gzipEtagHeader: `"${etag}-gzip"` }
}

/**
 * Draws badges with shields.io's own renderer and keeps each result keyed by everything that goes
 * into it, so a badge is drawn once per state change (and per style and label), not once per hit.
 */
export class BadgeRenderer {
  // A plain Map: a hit is one lookup, with none of an LRU's bookkeeping.
  readonly #cache = new Map<string, RenderedBadge>()
  readonly #custom = new LRUCache<string, RenderedBadge>({ max: MAX_CUSTOM_BADGES })
  readonly #maxBytes: number
  #bytes = 0
  #renders = 0

  constructor({ maxBytes = MAX_CACHE_BYTES }: { maxBytes?: number } = {}) {
    this.#maxBytes = maxBytes
  }

  #store(key: string, body: string, custom: boolean): RenderedBadge {
    this.#renders++
    const badge = renderedBody(body)
    if (custom) {
      this.#custom.set(key, badge)
      return badge
    }
    const size = key.length + body.length + badge.gzip.length + 200
    if (this.#bytes + size > this.#maxBytes) {
      this.#cache.clear()
      this.#bytes = 0
    }
    this.#cache.set(key, badge)
    this.#bytes += size
    return badge
  }

  #get(key: string, custom: boolean): RenderedBadge | undefined {
    return custom ? this.#custom.get(key) : this.#cache.get(key)
  }

  /** The SVG badge; `custom` when its label came from the request rather than the site. */
  svg(content: BadgeContent, style: BadgeStyle, custom = false, logo?: LogoName): RenderedBadge {
    const key = `svg\u0000${style}\u0000${logo ?? ''}\u0000${content.label}\u0000${content.message}\u0000${content.color}`
    return (
      this.#get(key, custom) ??
      this.#store(
        key,
        makeBadge({
          label: content.label.replace(CONTROL, ' '),
          message: content.message,
          color: content.color,
          style,
          ...(logo === undefined ? {} : { logoBase64: LOGOS[logo].dataUrl })
        }),
        custom
      )
    )
  }

  /** shields.io's endpoint-badge JSON (https://shields.io/badges/endpoint-badge), for routing badges through shields. */
  endpoint(content: BadgeContent, style?: BadgeStyle, custom = false, logo?: LogoName): RenderedBadge {
    const key = `json\u0000${style ?? ''}\u0000${logo ?? ''}\u0000${content.label}\u0000${content.message}\u0000${content.color}`
    return (
      this.#get(key, custom) ??
      this.#store(
        key,
        JSON.stringify({
          schemaVersion: 1,
          label: content.label,
          message: content.message,
          color: content.color,
          cacheSeconds: ENDPOINT_CACHE_SECONDS,
          ...(style === undefined ? {} : { style }),
          ...(logo === undefined ? {} : { logoSvg: LOGOS[logo].svg })
        }),
        custom
      )
    )
  }

  /** Badges drawn so far (cache misses): hits must not add to it. */
  get renders(): number {
    return this.#renders
  }

  /** Bytes the cache holds now. */
  get bytes(): number {
    return this.#bytes
  }
}
