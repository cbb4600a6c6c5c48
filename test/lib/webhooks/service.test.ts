import t from 'tap'
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Webhook } from 'standardwebhooks'
import { loadConfig } from '../../../config/index.js'
import { generateKey, hashKey } from '../../../lib/keys.js'
import { createLogger } from '../../../lib/logger.js'
import { startService } from '../../../lib/main.js'
import { createKey } from '../../../lib/store/keys.js'
import { LogCapture } from '../../helpers/server.js'
import { added, appendEvent, receiver } from '../../helpers/webhooks.js'
import { TEST_ACTORS } from '../../helpers/compiled.js'

t.test('the running service delivers an event to a webhook created through the API, woken at once', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'site-status-webhook-service-'))
  t.teardown(() => {
    rmSync(dir, { recursive: true, force: true })
  })
  const config = loadConfig({ PORT: '0', DATABASE_URL: `sqlite:${join(dir, 'db.sqlite')}`, ALLOW_PRIVATE_TARGETS: '1' })
  const logs = new LogCapture()
  const service = await startService({ config, actors: TEST_ACTORS, logger: createLogger({ level: 'info', stream: logs }) })
  t.teardown(() => service.stop())
  const key = generateKey()
  await createKey({ db: service.db, name: 'webhooks', keyHash: hashKey(key), rateLimit: null, scopes: 'manage', now: new Date() })
  const r = await receiver(t)
  const res = await service.server.inject({
    method: 'POST',
    url: '/api/v1/webhooks',
    headers: { authorization: `Bearer ${key}` },
    payload: { url: r.url }
  })
  t.equal(res.statusCode, 201)
  const { secret } = JSON.parse(res.payload) as { secret: string }
  t.equal(statSync(join(dir, 'webhook.key')).mode & 0o777, 0o600, 'the key file was made beside the database, mode 0600')

  const arrived = r.arrived()
  const [event] = await appendEvent(service.db, added('live.example.com', new Date()))
  service.webhooks.wake()
  const got = await arrived
  t.equal(got.headers['webhook-id'], String(event?.id))
  t.ok(new Webhook(secret).verify(got.body, got.headers as Record<string, string>), 'signed with the secret the API showed')
  await service.stop()
  t.notOk(
    logs.lines.some((l) => l.includes(secret.slice(6, 30))),
    'the secret is in no log line'
  )
})
