import crypto, { createHash, randomBytes, timingSafeEqual } from 'node:crypto'

/** Visible prefix so a leaked key is recognisable by secret scanners. */
export const KEY_PREFIX = 'ssk_'
const KEY_PATTERN = /^ssk_[A-Za-z0-9_-]{43}$/

/** A new key: 256 random bits, base64url. Shown once; only its hash is kept. */
export function generateKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url')
}

export function isWellFormedKey(text: string): boolean {
  return KEY_PATTERN.test(text)
}

// Node's one-shot hash (20.12+) skips building a Hash object: it is on every keyed request's path.
const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: 'hex') => string }).hash

/** SHA-256 of the key, hex: what the database stores and looks up. */
export function hashKey(key: string): string {
  return oneShot ? oneShot('sha256', key, 'hex') : createHash('sha256').update(key).digest('hex')
}

/** Compares two hex hashes in constant time. */
export function sameHash(a: string, b: string): boolean {
  return a.length === b.length && a.length > 0 && timingSafeEqual(Buffer.from(a, 'latin1'), Buffer.from(b, 'latin1'))
}
