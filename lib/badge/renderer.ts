import { createHash } from 'node:crypto'
import { gzipSync } from 'node:zlib'
import { makeBadge } from 'badge-maker'
import { LRUCache } from 'lru-cache'
import type { BadgeContent, BadgeStyle } from './describe.js'

/** A rendered badge, ready to send as it is on every hit until the site's state changes. */
export interface RenderedBadge {
  body: string
  /** The body gzipped once, for the many clients that accept gzip. */
  gzip: Buffer
  /** Strong validator (unquoted): a hash of the body. */
  etag: string
  /** The header values, quoted once: `etag` for the body, and with `-gzip` for the gzipped body. */
  etagHeader: string
  gzipEtagHeader: string
}

/** Bytes of rendered badges kept; labels come from URLs, so the cache must be bounded. */
const MAX_CACHE_BYTES = 32 * 1024 * 1024

/** Endpoint badges are refreshed by shields.io no more often than this (its minimum is 300 s). */
const ENDPOINT_CACHE_SECONDS = 300

// XML 1.0 cannot carry most control characters, and a name stored by other means than the
// operator tool might hold one.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g

function finish(body: string): RenderedBadge {
  const etag = createHash('sha256').update(body).digest('base64url').slice(0, 32)
  return { body, gzip: gzipSync(body), etag, etagHeader: `"${etag}"`, gzipEtagHeader: `"${etag}-gzip"` }
}

/**
 * Draws badges with shields.io's own renderer and keeps each result keyed by everything that goes
 * into it, so a badge is drawn once per state change (and per style and label), not once per hit.
 */
export class BadgeRenderer {
  #renders = 0
  readonly #cache = new LRUCache<string, RenderedBadge>({
    maxSize: MAX_CACHE_BYTES,
    sizeCalculation: (badge, key) => badge.body.length + badge.gzip.length + key.length + 200
  })

  /** The SVG badge. */
  svg(content: BadgeContent, style: BadgeStyle): RenderedBadge {
    const key = `svg\u0000${style}\u0000${content.label}\u0000${content.message}\u0000${content.color}`
    let badge = this.#cache.get(key)
    if (badge === undefined) {
      this.#renders++
      badge = finish(makeBadge({
        label: content.label.replace(CONTROL, ' '),
        message: content.message,
        color: content.color,
        style
      }))
      this.#cache.set(key, badge)
    }
    return badge
  }

  /** shields.io's endpoint-badge JSON (https://shields.io/badges/endpoint-badge), for routing badges through shields. */
  endpoint(content: BadgeContent, style?: BadgeStyle): RenderedBadge {
    const key = `json\u0000${style ?? ''}\u0000${content.label}\u0000${content.message}\u0000${content.color}`
    let badge = this.#cache.get(key)
    if (badge === undefined) {
      this.#renders++
      badge = finish(JSON.stringify({
        schemaVersion: 1,
        label: content.label,
        message: content.message,
        color: content.color,
        cacheSeconds: ENDPOINT_CACHE_SECONDS,
        ...(style === undefined ? {} : { style })
      }))
      this.#cache.set(key, badge)
    }
    return badge
  }

  /** Badges drawn so far (cache misses): hits must not add to it. */
  get renders(): number {
    return this.#renders
  }
}
