import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'

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

/** SHA-256 of the key, hex: what the database stores and looks up. */
export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex')
}

/** Compares two hex hashes in constant time. */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex')
  const y = Buffer.from(b, 'hex')
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y)
}
