import t from 'tap'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { generateSecret, SecretBox } from '../../../lib/webhooks/secret-box.js'

function tempDir(t: { teardown(fn: () => unknown): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'site-status-secret-box-'))
  t.teardown(() => {
    rmSync(dir, { recursive: true, force: true })
  })
  return dir
}

t.test('a sealed secret holds neither the secret nor its bytes, and opens again with the same key', async (t) => {
  const box = new SecretBox({ key: randomBytes(32), keyFile: '/nonexistent/webhook.key' })
  const secret = generateSecret()
  const sealed = box.seal(secret)
  t.match(sealed, /^v1:[A-Za-z0-9+/=]+$/)
  t.notOk(sealed.includes(secret.slice(6)), 'not the base64 of the secret')
  t.notOk(Buffer.from(sealed.slice(3), 'base64').includes(Buffer.from(secret.slice(6), 'base64')), 'nor its raw bytes')
  t.not(box.seal(secret), sealed, 'a fresh nonce each time')
  t.equal(box.open(sealed), secret)
})

t.test('another key cannot open it: a clear error with a code, never the secret', async (t) => {
  const secret = generateSecret()
  const key = randomBytes(32)
  const sealed = new SecretBox({ key, keyFile: '/nonexistent/webhook.key' }).seal(secret)
  const other = new SecretBox({ key: randomBytes(32), keyFile: '/nonexistent/webhook.key' })
  t.throws(() => other.open(sealed), { name: 'SecretBoxError', code: 'WEBHOOK_KEY_MISMATCH' })
  try {
    other.open(sealed)
  } catch (err) {
    t.notOk((err as Error).message.includes(secret.slice(6)), 'the message holds no secret')
  }
  t.throws(() => other.open('tampered'), { code: 'WEBHOOK_KEY_MISMATCH' }, 'a value not sealed here')
  // With the right key, a single flipped bit anywhere fails GCM's authentication.
  const right = new SecretBox({ key, keyFile: '' })
  t.equal(right.open(sealed), secret, 'the right key opens it')
  const bytes = Buffer.from(sealed.slice(3), 'base64')
  for (const at of [0, Math.floor(bytes.length / 2), bytes.length - 1]) {
    const tampered = Buffer.from(bytes)
    tampered.writeUInt8(tampered.readUInt8(at) ^ 1, at)
    t.throws(
      () => right.open(`v1:${tampered.toString('base64')}`),
      { code: 'WEBHOOK_KEY_MISMATCH' },
      `a bit changed at byte ${at} fails authentication`
    )
  }
})

t.test('without WEBHOOK_KEY a key file is made on first seal, mode 0600, and shared by every box using it', async (t) => {
  const dir = tempDir(t)
  const keyFile = join(dir, 'data', 'webhook.key')
  const box = new SecretBox({ key: null, keyFile })
  t.throws(() => box.open('v1:AAAA'), { code: 'WEBHOOK_KEY_MISSING' }, 'opening makes no key')
  t.notOk(existsSync(keyFile), 'nothing made before the first use')
  const sealed = box.seal('whsec_abc')
  t.ok(existsSync(keyFile), 'made on first use')
  t.equal(statSync(keyFile).mode & 0o777, 0o600, 'mode 0600')
  t.equal(new SecretBox({ key: null, keyFile }).open(sealed), 'whsec_abc', 'a restart reads the same key')
  t.throws(
    () => new SecretBox({ key: randomBytes(32), keyFile }).open(sealed),
    { code: 'WEBHOOK_KEY_MISMATCH' },
    'WEBHOOK_KEY is not the file'
  )
})

t.test('a key file that does not hold 32 bytes is refused', async (t) => {
  const keyFile = join(tempDir(t), 'webhook.key')
  writeFileSync(keyFile, 'too short\n', { mode: 0o600 })
  t.throws(() => new SecretBox({ key: null, keyFile }).seal('whsec_x'), { code: 'WEBHOOK_KEY_INVALID' })
  t.throws(() => new SecretBox({ key: randomBytes(16), keyFile }), { code: 'WEBHOOK_KEY_INVALID' })
})
