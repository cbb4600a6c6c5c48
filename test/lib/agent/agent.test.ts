/**
 * One `site-status agent` process from the build on a private nats-server: it holds its own target
 * policy whatever the central allows, reads each request strictly (refused ones are logged and
 * never probed), signs in with an nkey seed file, and reaches NATS over TLS when the URL says so.
 */
import t, { type Test } from 'tap'
import http from 'node:http'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { connect, nkeys } from 'nats'
import { CENTRAL_INBOX_PREFIX } from '../../../lib/net/agent-protocol.js'
import { natsUsers, startAgentProcess } from '../../helpers/agents.js'
import { startNats, natsUrlWithAuth, type NatsUser } from '../../helpers/nats.js'
import { holds } from '../../helpers/poll.js'
import { closedPort, makeCert, serveOnLoopback } from '../../helpers/targets.js'
import { startTrackedService, type TargetPorts } from '../../helpers/tracked-service.js'

/**
 * The real service with two locations, a local one and `label` served by agent location `agent`
 * over NATS at `natsUrl`, and the ports of its loopback target (for the agent's CONNECT_TO).
 */
async function centralWithAgent(t: Test, natsUrl: string, label: string, agent: string) {
  let ports: TargetPorts | undefined
  const tracked = await startTrackedService(t, {
    engine: 'sqlite',
    site: { domain: 'shop.test', name: 'Shop' },
    env: (p) => {
      ports = p
      return {
        LOCATIONS: JSON.stringify([{ label: 'Local 1, Local' }, { label, agent }]),
        NATS_URL: natsUrl,
        CACHE_TTL_S: '0'
      }
    }
  })
  const { http: web, closed } = ports as TargetPorts
  return { tracked, web, closed }
}

t.test('an agent holds its own target policy and reads requests strictly', async (t) => {
  const password = `p${randomBytes(12).toString('hex')}`
  // This agent signs in with an nkey seed file (NATS_CREDENTIALS) instead of a password.
  const pair = nkeys.createUser()
  const seedFile = join(t.testdir({ 'lon1.nk': new TextDecoder().decode(pair.getSeed()) }), 'lon1.nk')
  const [central, lon1] = natsUsers(password, ['lon1']) as [NatsUser, NatsUser]
  const { user: _user, password: _password, ...byKey } = lon1
  const nats = await startNats(t, { users: [central, { ...byKey, nkey: pair.getPublicKey() } as unknown as NatsUser] })
  const { tracked, web, closed } = await centralWithAgent(
    t,
    natsUrlWithAuth(nats.url, 'central', password),
    'London 1, United Kingdom',
    'lon1'
  )
  // No ALLOW_PRIVATE_TARGETS: the agent refuses loopback, whatever the central allows.
  const agent = await startAgentProcess(t, 'lon1', {
    NATS_URL: nats.url,
    NATS_CREDENTIALS: seedFile,
    CONNECT_TO: `:443:127.0.0.1:${closed},:80:127.0.0.1:${web}`
  })
  const res = await fetch(`${tracked.service.server.info.uri}/api/v1/check`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tracked.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ domain: 'private.site.test' })
  })
  const body = await res.json()
  t.equal(res.status, 200, 'the check answers')
  t.match(body.locations, [
    { location: 'Local 1, Local', status: 'up' },
    { location: 'London 1, United Kingdom', status: 'error', error: "agent: the agent's target policy refused the target" }
  ])
  t.equal(body.locations_answered, 1, 'the refusing location counts neither up nor down')
  t.equal(tracked.hosts.filter((h) => h === 'private.site.test').length, 1, 'only the local location reached the target')

  // Requests the central would never send, straight onto the location's subject.
  const nc = await connect({ servers: nats.url.replace('nats://', ''), user: 'central', pass: password, inboxPrefix: CENTRAL_INBOX_PREFIX })
  t.teardown(() => nc.close())
  const bad = [
    { v: 1, domain: '127.0.0.1', class: 'demand', user_agent: 'x' },
    { v: 1, domain: 'Private.Site.Test', class: 'demand', user_agent: 'x' },
    { v: 1, domain: 'private.site.test', class: 'demand', user_agent: 'x', address: '127.0.0.1' },
    { v: 2, domain: 'private.site.test', class: 'demand', user_agent: 'x' },
    'not json'
  ]
  const before = tracked.hosts.length
  for (const payload of bad) {
    const reply = await nc.request('site-status.probe.lon1', typeof payload === 'string' ? payload : JSON.stringify(payload), {
      timeout: 5000
    })
    t.equal(reply.headers?.get('Nats-Service-Error-Code'), '400', `refused: ${JSON.stringify(payload)}`)
  }
  t.equal(tracked.hosts.length, before, 'none was probed')
  const logged = () => agent.output().split('refused an invalid probe request').length - 1
  t.ok(await holds(() => logged() === bad.length, 5000), 'each is logged')
})

t.test('an agent reaches NATS over TLS when NATS_URL says tls://', async (t) => {
  const password = `p${randomBytes(12).toString('hex')}`
  const cert = makeCert()
  const dir = t.testdir({ 'cert.pem': cert.cert, 'key.pem': cert.key })
  const nats = await startNats(t, {
    users: natsUsers(password, ['tls1']),
    tls: { certFile: join(dir, 'cert.pem'), keyFile: join(dir, 'key.pem') }
  })
  const web = http.createServer((_req, res) => res.writeHead(200).end('ok'))
  const port = await serveOnLoopback(t, web)
  const closed = await closedPort()
  const agent = await startAgentProcess(t, 'tls1', {
    NATS_URL: natsUrlWithAuth(nats.url, 'agent-tls1', password).replace('nats://', 'tls://'),
    // The test's own CA, as an operator's private one would be given.
    NODE_EXTRA_CA_CERTS: join(dir, 'cert.pem'),
    ALLOW_PRIVATE_TARGETS: '1',
    CONNECT_TO: `:443:127.0.0.1:${closed},:80:127.0.0.1:${port}`
  })
  t.match(agent.output(), /"agent serving"/, 'it connects')
  const nc = await connect({
    servers: `127.0.0.1:${nats.port}`,
    user: 'central',
    pass: password,
    tls: { ca: cert.cert },
    inboxPrefix: CENTRAL_INBOX_PREFIX
  })
  t.teardown(() => nc.close())
  const reply = await nc.request(
    'site-status.probe.tls1',
    JSON.stringify({ v: 1, domain: 'tls.site.test', class: 'demand', user_agent: 'tls-test' }),
    { timeout: 10_000 }
  )
  t.match(
    JSON.parse(new TextDecoder().decode(reply.data)),
    { v: 1, location: 'tls1', domain: 'tls.site.test', result: { status: 'up', http_code: 200 } },
    'and serves probes, saying whose request it answers'
  )
})

t.test("an agent judges the check's expectations, and refuses them malformed", async (t) => {
  const password = `p${randomBytes(12).toString('hex')}`
  const nats = await startNats(t, { users: natsUsers(password, ['ams1']) })
  const { tracked, web, closed } = await centralWithAgent(
    t,
    natsUrlWithAuth(nats.url, 'central', password),
    'Amsterdam 1, Netherlands',
    'ams1'
  )
  await startAgentProcess(t, 'ams1', {
    NATS_URL: natsUrlWithAuth(nats.url, 'agent-ams1', password),
    ALLOW_PRIVATE_TARGETS: '1',
    CONNECT_TO: `:443:127.0.0.1:${closed},:80:127.0.0.1:${web}`
  })
  const check = async (expect: unknown) => {
    const res = await fetch(`${tracked.service.server.info.uri}/api/v1/check`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tracked.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ domain: 'expect.site.test', expect })
    })
    t.equal(res.status, 200)
    return (await res.json()) as { status: string; locations: unknown[] }
  }
  // The target answers 200 `ok`.
  const missing = await check({ body_contains: 'Sign in' })
  t.match(missing, { status: 'down' })
  t.match(missing.locations, [
    { location: 'Local 1, Local', status: 'down', error: 'expect: body_contains not found' },
    { location: 'Amsterdam 1, Netherlands', status: 'down', http_code: 200, error: 'expect: body_contains not found' }
  ])
  const unlisted = await check({ status: [204] })
  t.match(unlisted.locations, [
    { status: 'down', error: 'expect: status 200' },
    { location: 'Amsterdam 1, Netherlands', status: 'down', error: 'expect: status 200' }
  ])
  const met = await check({ status: ['200-299'], body_contains: 'ok' })
  t.match(met, { status: 'up' })
  t.match(met.locations, [{ status: 'up' }, { location: 'Amsterdam 1, Netherlands', status: 'up', error: null }])

  // Checks of other kinds travel to the agent in the request, and come back as its own.
  const kind = async (body: unknown) => {
    const res = await fetch(`${tracked.service.server.info.uri}/api/v1/check`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tracked.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ domain: 'kinds.site.test', check: body })
    })
    t.equal(res.status, 200)
    return (await res.json()) as { status: string; locations: unknown[] }
  }
  t.match((await kind({ type: 'tcp', port: 80 })).locations, [
    { status: 'up', code: null },
    { location: 'Amsterdam 1, Netherlands', status: 'up', code: null, http_code: 0 }
  ])
  t.match((await kind({ type: 'tcp', port: 443 })).locations, [
    { status: 'down', code: 'connect_refused' },
    { location: 'Amsterdam 1, Netherlands', status: 'down', code: 'connect_refused' }
  ])
  const posted = await kind({
    type: 'http',
    method: 'POST',
    body: 'x',
    assertions: [{ source: 'text_body', comparison: 'equals', target: 'ok' }]
  })
  t.match(posted.locations, [{ status: 'up' }, { location: 'Amsterdam 1, Netherlands', status: 'up' }])

  const nc = await connect({ servers: nats.url.replace('nats://', ''), user: 'central', pass: password, inboxPrefix: CENTRAL_INBOX_PREFIX })
  t.teardown(() => nc.close())
  const request = { v: 1, domain: 'expect.site.test', class: 'demand', user_agent: 'x' }
  const bad: Array<[string, unknown]> = [
    ['a null key (absent means unset)', { body_contains: null }],
    ['max_response_ms (judged by the central)', { max_response_ms: 100 }],
    ['a status that is none', { status: [99] }],
    ['a text over 256 bytes', { body_contains: 'x'.repeat(257) }]
  ]
  for (const [what, check] of [
    ['a check of an unknown kind', { type: 'icmp' }],
    ['a tcp check without its port', { type: 'tcp' }],
    [
      'a check with a Host header',
      { type: 'http', method: 'GET', path: '/', headers: { host: 'x' }, secret_headers: [], body: null, assertions: [] }
    ]
  ] as const) {
    const reply = await nc.request('site-status.probe.ams1', JSON.stringify({ ...request, check }), { timeout: 5000 })
    t.equal(reply.headers?.get('Nats-Service-Error-Code'), '400', `refused: ${what}`)
  }
  for (const [what, expect] of bad) {
    const reply = await nc.request('site-status.probe.ams1', JSON.stringify({ ...request, expect }), { timeout: 5000 })
    t.equal(reply.headers?.get('Nats-Service-Error-Code'), '400', `refused: ${what}`)
  }
})

t.test("an agent started with another location's credentials exits 1 with one line, never serving", async (t) => {
  const password = `p${randomBytes(12).toString('hex')}`
  const nats = await startNats(t, { users: natsUsers(password, ['fra1', 'ams1']) })
  // fra1's user, told to serve ams1: NATS refuses every subscription of ams1's.
  const agent = await startAgentProcess(t, 'ams1', { NATS_URL: natsUrlWithAuth(nats.url, 'agent-fra1', password) })
  t.equal(await agent.exited, 1, 'it exits 1')
  const lines = agent
    .output()
    .split('\n')
    .filter((l) => l.startsWith('site-status: '))
  t.equal(lines.length, 1, 'with one line')
  t.match(lines[0], /^site-status: NATS refused the agent's subscription to \S+: NATS_URL's user may not serve location ams1$/)
  t.notMatch(agent.output(), /"agent serving"/, 'it never said it serves')
  t.notMatch(agent.output(), new RegExp(password), 'without the password')
})
