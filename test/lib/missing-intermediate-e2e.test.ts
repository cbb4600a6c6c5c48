/**
 * A site that serves its leaf certificate without the intermediate that signed it, the most common
 * real TLS misconfiguration: a CA, an intermediate and a leaf made here with openssl, the CA trusted
 * by every location (two local, one agent over NATS). Every location sees it `down` with the TLS
 * code, as curl and a browser without AIA fetching do, and an outage opens; the same leaf served
 * with its intermediate is up at every location, so nothing else is at fault.
 */
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import https from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { loadConfig } from '../../config/index.js'
import { generateKey, hashKey } from '../../lib/keys.js'
import { createLogger } from '../../lib/logger.js'
import { startService } from '../../lib/main.js'
import { addSite } from '../../lib/monitoring/add-sites.js'
import { openDb } from '../../lib/store/db.js'
import { createKey } from '../../lib/store/keys.js'
import { apiClient } from '../helpers/api-client.js'
import { natsUsers, startAgentProcess } from '../helpers/agents.js'
import { TEST_ACTORS } from '../helpers/compiled.js'
import { createMigratedDatabase } from '../helpers/db.js'
import { natsUrlWithAuth, startNats } from '../helpers/nats.js'
import { until } from '../helpers/poll.js'
import { LogCapture } from '../helpers/server.js'
import { closedPort, serveOnLoopback } from '../helpers/targets.js'

/** A root CA, an intermediate it signed, and a leaf for *.site.test the intermediate signed. */
function chain(): { ca: string; intermediate: string; leaf: string; leafKey: string } {
  const dir = mkdtempSync(join(tmpdir(), 'site-status-chain-'))
  const at = (name: string) => join(dir, name)
  const ssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' })
  try {
    writeFileSync(at('ca.ext'), 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n')
    writeFileSync(at('leaf.ext'), 'basicConstraints=CA:FALSE\nsubjectAltName=DNS:*.site.test\n')
    ssl(
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-subj',
      '/CN=Site Status Test Root',
      '-days',
      '2',
      '-keyout',
      at('ca.key'),
      '-out',
      at('ca.pem'),
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign'
    )
    ssl(
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-subj',
      '/CN=Site Status Test Intermediate',
      '-keyout',
      at('int.key'),
      '-out',
      at('int.csr')
    )
    ssl(
      'x509',
      '-req',
      '-in',
      at('int.csr'),
      '-CA',
      at('ca.pem'),
      '-CAkey',
      at('ca.key'),
      '-CAcreateserial',
      '-days',
      '2',
      '-out',
      at('int.pem'),
      '-extfile',
      at('ca.ext')
    )
    ssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=chain.site.test', '-keyout', at('leaf.key'), '-out', at('leaf.csr'))
    ssl(
      'x509',
      '-req',
      '-in',
      at('leaf.csr'),
      '-CA',
      at('int.pem'),
      '-CAkey',
      at('int.key'),
      '-CAcreateserial',
      '-days',
      '2',
      '-out',
      at('leaf.pem'),
      '-extfile',
      at('leaf.ext')
    )
    const read = (name: string) => readFileSync(at(name), 'utf8')
    return { ca: read('ca.pem'), intermediate: read('int.pem'), leaf: read('leaf.pem'), leafKey: read('leaf.key') }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

t.test('a leaf served without its intermediate is down with the TLS code at every location, and an outage opens', async (t) => {
  const certs = chain()
  const hello = (_req: unknown, res: import('node:http').ServerResponse) => res.writeHead(200).end('hello')
  const brokenPort = await serveOnLoopback(t, https.createServer({ key: certs.leafKey, cert: certs.leaf }, hello))
  const wholePort = await serveOnLoopback(t, https.createServer({ key: certs.leafKey, cert: certs.leaf + certs.intermediate }, hello))
  const closed = await closedPort()
  const connectTo = [
    `broken.site.test:443:127.0.0.1:${brokenPort}`,
    `whole.site.test:443:127.0.0.1:${wholePort}`,
    `:80:127.0.0.1:${closed}`
  ].join(',')

  const password = `p${randomBytes(12).toString('hex')}`
  const nats = await startNats(t, { users: natsUsers(password, ['fra1']) })
  const dir = t.testdir({ 'ca.pem': certs.ca })
  await startAgentProcess(t, 'fra1', {
    NATS_URL: natsUrlWithAuth(nats.url, 'agent-fra1', password),
    ALLOW_PRIVATE_TARGETS: '1',
    CONNECT_TO: connectTo,
    // The test's root, as an operator's private CA would be given to the agent.
    NODE_EXTRA_CA_CERTS: join(dir, 'ca.pem')
  })

  const database = await createMigratedDatabase('sqlite')
  t.teardown(() => database.cleanup())
  const setup = openDb(database.url)
  await addSite({ db: setup, entry: { domain: 'broken.site.test', name: 'Broken chain' }, now: new Date() })
  const key = generateKey()
  await createKey({ db: setup, name: 'e2e', keyHash: hashKey(key), rateLimit: 100_000, now: new Date() })
  await setup.destroy()
  const service = await startService({
    config: loadConfig({
      PORT: '0',
      DATABASE_URL: database.url,
      CHECK_INTERVAL_S: '1',
      PROBE_TIMEOUT_MS: '2000',
      ALLOW_PRIVATE_TARGETS: '1',
      CONNECT_TO: connectTo,
      CACHE_TTL_S: '0',
      LOCATIONS: JSON.stringify([
        { label: 'Local 1, Local' },
        { label: 'Local 2, Local' },
        { label: 'Frankfurt 1, Germany', agent: 'fra1' }
      ]),
      NATS_URL: natsUrlWithAuth(nats.url, 'central', password)
    }),
    actors: TEST_ACTORS,
    logger: createLogger({ level: 'info', stream: new LogCapture() }),
    extraCa: certs.ca
  })
  t.teardown(() => service.stop())
  const client = apiClient(service.server.info.uri, key)

  const whole = await until(
    () => client.checkDomain('whole.site.test'),
    (c) => c.locations_answered === 3,
    15_000
  )
  t.match(whole, { status: 'up', locations_answered: 3 }, 'with its intermediate, the same leaf is up at every location')
  const broken = await client.checkDomain('broken.site.test')
  t.match(broken, { status: 'down', locations_answered: 3 })
  t.same(
    broken.locations.map((l) => [l.location, l.status, l.error]),
    [
      ['Local 1, Local', 'down', 'tls: UNABLE_TO_VERIFY_LEAF_SIGNATURE'],
      ['Local 2, Local', 'down', 'tls: UNABLE_TO_VERIFY_LEAF_SIGNATURE'],
      ['Frankfurt 1, Germany', 'down', 'tls: UNABLE_TO_VERIFY_LEAF_SIGNATURE']
    ],
    'every location, the agent included, sees the missing intermediate'
  )
  const outages = await until(
    () => client.listOutages({ domain: 'broken.site.test', ongoing: '1' }),
    (o) => o.outages.length === 1,
    15_000
  )
  t.equal(outages.outages.length, 1, 'an outage opens')
  t.equal((await client.getStatus('broken.site.test')).status, 'down')
})
