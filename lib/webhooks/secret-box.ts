import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import { chmodSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { SECRET_PREFIX } from '../rules/webhooks.js'

/** Bytes of an AES-256 key, of a webhook secret's random part, of a GCM nonce and tag. */
const KEY_BYTES = 32
const IV_BYTES = 12
const TAG_BYTES = 16
/** Stored ciphertexts start with this, so a later scheme can be told apart. */
const FORMAT = 'v1:'

/** Codes of {@link SecretBoxError}: callers branch on them, never on the text. */
export type SecretBoxErrorCode = 'WEBHOOK_KEY_MISMATCH' | 'WEBHOOK_KEY_MISSING' | 'WEBHOOK_KEY_INVALID'

/** A secret that cannot be sealed or opened here; the text never holds a key or a secret. */
export class SecretBoxError extends Error {
  override name = 'SecretBoxError'
  constructor(
    readonly code: SecretBoxErrorCode,
    message: string
  ) {
    super(message)
  }
}

/** A new webhook secret: `whsec_` and base64 of 32 random bytes. */
export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(KEY_BYTES).toString('base64')
}

/**
 * Seals webhook secrets for the database with AES-256-GCM and opens them for signing. The key is
 * WEBHOOK_KEY when set (every instance the same), otherwise a key file made on first use, mode
 * 0600, beside the SQLite data: a database dump alone never signs.
 */
export class SecretBox {
  readonly #key: Buffer | null
  readonly #keyFile: string
  #fileKey: Buffer | null = null

  constructor({ key, keyFile }: { key: Buffer | null; keyFile: string }) {
    if (key !== null && key.length !== KEY_BYTES) throw new SecretBoxError('WEBHOOK_KEY_INVALID', 'WEBHOOK_KEY must be 32 bytes')
    this.#key = key
    this.#keyFile = keyFile
  }

  seal(secret: string): string {
    const iv = randomBytes(IV_BYTES)
    const cipher = createCipheriv('aes-256-gcm', this.#currentKey(true), iv)
    const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()])
    return FORMAT + Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64')
  }

  /** The secret in `stored`; throws SecretBoxError when this key did not seal it. */
  open(stored: string): string {
    const key = this.#currentKey(false)
    const raw = stored.startsWith(FORMAT) ? Buffer.from(stored.slice(FORMAT.length), 'base64') : Buffer.alloc(0)
    if (raw.length <= IV_BYTES + TAG_BYTES)
      throw new SecretBoxError('WEBHOOK_KEY_MISMATCH', 'stored webhook secret is not in a known format')
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES))
      decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES))
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8')
    } catch {
      throw new SecretBoxError('WEBHOOK_KEY_MISMATCH', 'webhook secret cannot be decrypted with this instance\u2019s webhook key')
    }
  }

  #currentKey(create: boolean): Buffer {
    if (this.#key !== null) return this.#key
    this.#fileKey ??= readKeyFile(this.#keyFile, create)
    return this.#fileKey
  }
}

/**
 * The key file's key: read it, or (`create`) make it. Made under a temporary name and linked into
 * place, so two processes starting at once agree on one key and nobody reads a half-written file.
 */
function readKeyFile(path: string, create: boolean): Buffer {
  try {
    return parseKeyFile(readFileSync(path, 'utf8'))
  } catch (err) {
    if (err instanceof SecretBoxError || (err as NodeJS.ErrnoException).code !== 'ENOENT') {
      if (err instanceof SecretBoxError) throw err
      throw new SecretBoxError('WEBHOOK_KEY_MISSING', `webhook key file cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`)
    }
    if (!create) throw new SecretBoxError('WEBHOOK_KEY_MISSING', 'no webhook key: WEBHOOK_KEY is unset and the key file does not exist')
  }
  mkdirSync(dirname(path), { recursive: true })
  const temp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`
  writeFileSync(temp, `${randomBytes(KEY_BYTES).toString('base64')}\n`, { mode: 0o600, flag: 'wx' })
  chmodSync(temp, 0o600)
  try {
    linkSync(temp, path)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
  } finally {
    rmSync(temp, { force: true })
  }
  return parseKeyFile(readFileSync(path, 'utf8'))
}

function parseKeyFile(text: string): Buffer {
  const key = Buffer.from(text.trim(), 'base64')
  if (key.length !== KEY_BYTES) throw new SecretBoxError('WEBHOOK_KEY_INVALID', 'webhook key file does not hold base64 of 32 bytes')
  return key
}
