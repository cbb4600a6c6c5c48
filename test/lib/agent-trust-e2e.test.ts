/**
 * An agent is a reporter of measurements, never more (issues 45 and 53), end to end: a real
 * nats-server running the shipped deploy/nats.conf with users for fra1 and ams1, the central with
 * a local location and both agent locations, a real `site-status agent` for ams1, and a rogue
 * logged in as fra1's agent that answers every request wrongly in turn: malformed JSON, `null`, an
 * oversized reply, every central-only code, `up` with an error code, absurd timings, a past and an
 * out-of-range certificate expiry, extra fields, another request's domain, location and version, a
 * well-formed lie about the certificate, and a PING answer it cannot parse; it also claims ams1 in
 * a service of its own. Throughout, the tracked sites are recorded, no outage or certificate event
 * is invented, the other locations' verdicts stand, /healthz counts only real agents, and the
 * central counts and logs the bad answers. On SQLite, someone holding the central's password then
 * tries to steer answers onto its pending requests.
 */
import t, { type Test } from 'tap'
import { connect, type Msg, type NatsConnection } from 'nats'
import type { CheckResult, Health } from '../../lib/client/index.js'
import { agentService, agentSubject, CENTRAL_INBOX_PREFIX, probeQueue, probeSubject } from '../../lib/net/agent-protocol.js'
import { apiClient, type ApiClient } from '../helpers/api-client.js'
import { startAgentProcess } from '../helpers/agents.js'
import { engines } from '../helpers/db.js'
import { natsUrlWithAuth, startNats, type PrivateNats } from '../helpers/nats.js'
import { holds, until } from '../helpers/poll.js'
import { startTrackedService, type TargetPorts, type TrackedService } from '../helpers/tracked-service.js'

t.setTimeout(180_000)

const LOCAL = 'Local 1, Local'
const FRA1 = 'Frankfurt 1, Germany'
const AMS1 = 'Amsterdam 1, Netherlands'
const IN_TWO_DAYS = (): string => new Date(Date.now() + 2 * 86_400_000).toISOString()

type Reply = Record<string, unknown> & { result: Record<string, unknown> }

/** A reply the protocol's schema takes: the request's domain seen up over http. */
function honest(domain: string): Reply {
  return {
    v: 1,
    location: 'fra1',
    domain,
    result: {
      status: 'up',
      http_code: 200,
      response_ms: 5,
      error: null,
      code: null,
      final_url: `http://${domain}/`,
      tls_expires_at: null,
      tls_issuer: null,
      timings: { dns: 0, connect: 1, tls: 0, first_byte: 2, total: 5 }
    }
  }
}

const failing = (domain: string, status: string, code: string): Reply => {
  const r = honest(domain)
  Object.assign(r.result, { status, code, error: `made up: ${code}`, http_code: 0 })
  return r
}

/** Every wrong answer the rogue gives, in turn: its name, and its bytes for a request's domain. */
const WRONG: Array<[string, (domain: string) => string]> = [
  ['malformed JSON', () => '{"v": 1, "result": '],
  ['JSON null', () => 'null'],
  ['an oversized reply', (d) => JSON.stringify({ ...honest(d), padding: 'x'.repeat(20_000) })],
  ...['location_cancelled', 'location_stopping', 'location_failed', 'location_no_answer', 'agent_none', 'agent_bad_answer'].map(
    (code): [string, (domain: string) => string] => [`the central-only code ${code}`, (d) => JSON.stringify(failing(d, 'error', code))]
  ),
  [
    'up with an error code',
    (d) => {
      const r = honest(d)
      Object.assign(r.result, { code: 'tls', error: 'tls: CERT_HAS_EXPIRED' })
      return JSON.stringify(r)
    }
  ],
  ['a verdict its code never has', (d) => JSON.stringify(failing(d, 'down', 'internal'))],
  [
    'a response time longer than the request was out',
    (d) => {
      const r = honest(d)
      Object.assign(r.result, { response_ms: 3_600_000, timings: { dns: 0, connect: 0, tls: 0, first_byte: 0, total: 3_600_000 } })
      return JSON.stringify(r)
    }
  ],
  [
    'negative timings',
    (d) => {
      const r = honest(d)
      Object.assign(r.result, { timings: { dns: -5, connect: 1, tls: 0, first_byte: 2, total: 5 } })
      return JSON.stringify(r)
    }
  ],
  [
    'a certificate that expired long ago',
    (d) => {
      const r = honest(d)
      Object.assign(r.result, { final_url: `https://${d}/`, tls_expires_at: '2001-01-01T00:00:00.000Z', tls_issuer: 'CN=Old' })
      return JSON.stringify(r)
    }
  ],
  [
    'a certificate expiring past year 9999',
    (d) => {
      const r = honest(d)
      Object.assign(r.result, { final_url: `https://${d}/`, tls_expires_at: '+275760-09-13T00:00:00.000Z', tls_issuer: 'CN=Far' })
      return JSON.stringify(r)
    }
  ],
  ['an extra field in the result', (d) => JSON.stringify({ ...honest(d), result: { ...honest(d).result, admin: true } })],
  ['an extra field beside it', (d) => JSON.stringify({ ...honest(d), note: 'trust me' })],
  ['another domain', (d) => JSON.stringify({ ...honest(d), domain: `not-${d}` })],
  ['another location', (d) => JSON.stringify({ ...honest(d), location: 'ams1' })],
  ['another protocol version', (d) => JSON.stringify({ ...honest(d), v: 2 })],
  [
    'a final URL on another port',
    (d) => {
      const r = honest(d)
      r.result.final_url = `http://${d}:6379/`
      return JSON.stringify(r)
    }
  ]
]

/** The rogue: fra1's agent user, its own service answering every probe wrongly in turn. */
async function startRogue(t: Test, nats: PrivateNats): Promise<{ nc: NatsConnection; modes: string[]; lying: { enabled: boolean } }> {
  const nc = await connect({ servers: nats.url, user: 'agent-fra1', pass: nats.passwordOf('agent-fra1') })
  t.teardown(() => nc.close())
  const modes: string[] = []
  const lying = { enabled: false }
  let next = 0
  const answer = (msg: Msg): void => {
    const domain = (JSON.parse(msg.string()) as { domain: string }).domain
    if (lying.enabled) {
      // Well formed, and a lie only the other locations can expose: a certificate about to expire.
      const r = honest(domain)
      Object.assign(r.result, { final_url: `https://${domain}/`, tls_expires_at: IN_TWO_DAYS(), tls_issuer: 'CN=Rogue' })
      modes.push('a well-formed lie about the certificate')
      msg.respond(JSON.stringify(r))
      return
    }
    const [name, body] = WRONG[next++ % WRONG.length] as [string, (d: string) => string]
    modes.push(name)
    msg.respond(body(domain))
  }
  const service = await nc.services.add({ name: agentService('fra1'), version: '6.6.6', queue: probeQueue('fra1') })
  const id = service.info().id
  service.addEndpoint('probe', {
    subject: probeSubject('fra1'),
    handler: (_err, msg) => {
      answer(msg)
    }
  })
  service.addEndpoint('direct', {
    subject: agentSubject('fra1', id),
    handler: (_err, msg) => {
      answer(msg)
    }
  })
  // It claims ams1 too: a service of that name, and metadata saying so.
  await nc.services.add({ name: agentService('ams1'), version: '6.6.6', metadata: { location: 'ams1' }, queue: probeQueue('fra1') })
  // And answers the central's PING for fra1 with bytes it cannot read, beside its service's own answer.
  nc.subscribe(`$SRV.PING.${agentService('fra1')}`, { callback: (_err, msg) => msg.respond('{"name": ') })
  await nc.flush()
  return { nc, modes, lying }
}

interface Setup {
  tracked: TrackedService
  client: ApiClient
  nats: PrivateNats
  rogue: Awaited<ReturnType<typeof startRogue>>
}

async function setUp(t: Test, engine: 'sqlite' | 'mysql'): Promise<Setup> {
  const nats = await startNats(t, { shipped: true, locations: ['fra1', 'ams1'] })
  let ports: TargetPorts | undefined
  const tracked = await startTrackedService(t, {
    engine,
    site: { domain: 'shop.test', name: 'Shop' },
    sites: [{ domain: 'blog.test', name: 'Blog' }],
    env: (p) => {
      ports = p
      return {
        LOCATIONS: JSON.stringify([{ label: LOCAL }, { label: FRA1, agent: 'fra1' }, { label: AMS1, agent: 'ams1' }]),
        NATS_URL: natsUrlWithAuth(nats.url, 'central', nats.passwordOf('central')),
        CACHE_TTL_S: '0',
        CHECK_INTERVAL_S: '2',
        // Every answer here comes at once; 3 s, not the helper's 1 s, so that a machine short of CPU
        // does not turn the rogue's well-formed answer into a location that did not answer.
        PROBE_TIMEOUT_MS: '3000'
      }
    }
  })
  const { http: web, closed } = ports as TargetPorts
  await startAgentProcess(t, 'ams1', {
    NATS_URL: natsUrlWithAuth(nats.url, 'agent-ams1', nats.passwordOf('agent-ams1')),
    ALLOW_PRIVATE_TARGETS: '1',
    CONNECT_TO: `:443:127.0.0.1:${closed},:80:127.0.0.1:${web}`
  })
  const rogue = await startRogue(t, nats)
  const client = apiClient(tracked.service.server.info.uri, tracked.key)
  return { tracked, client, nats, rogue }
}

const at = (body: CheckResult, label: string) => body.locations.find((l) => l.location === label)
const agentsOf = (health: Health, agent: string) => health.locations?.find((l) => l.agent === agent)

for (const engine of engines()) {
  t.test(`${engine}: a rogue agent cannot stop recording, invent outages or certificates, or speak for another location`, async (t) => {
    const s = await setUp(t, engine)
    const { client, tracked, rogue } = s
    const health = await until(
      () => client.health(),
      (h) => agentsOf(h, 'fra1')?.agents === 1 && agentsOf(h, 'ams1')?.agents === 1,
      15_000
    )
    t.match(agentsOf(health, 'ams1'), { agents: 1, versions: [/^\d/] }, "/healthz counts ams1's real agent only, not the rogue claiming it")
    t.notMatch(agentsOf(health, 'ams1')?.versions, ['6.6.6'])
    t.match(agentsOf(health, 'fra1'), { agents: 1, versions: ['6.6.6'] }, 'the rogue is counted as what its user may serve: fra1')

    const before = await client.getStatus('shop.test')
    // One on-demand check per wrong answer (the scheduled checks take some of the rogue's turns too).
    const checks: CheckResult[] = []
    for (let i = 0; i < WRONG.length; i++) checks.push(await client.checkDomain(`www-${i}.site.test`))
    t.ok(
      checks.every((c) => c.status === 'up' && c.locations_answered === 2 && c.locations_total === 3),
      'every check answers up from the two honest locations'
    )
    t.ok(
      checks.every((c) => at(c, LOCAL)?.status === 'up' && at(c, AMS1)?.status === 'up'),
      "the other locations' verdicts stand (the central's NATS subscription survived every reply, `null` included)"
    )
    t.ok(
      checks.every((c) => at(c, FRA1)?.status === 'error' && at(c, FRA1)?.error === 'agent: answer not understood'),
      `fra1 counts as not answering: ${JSON.stringify(checks.map((c) => at(c, FRA1)?.error))}`
    )
    t.same(new Set(rogue.modes), new Set(WRONG.map(([name]) => name)), 'every wrong answer was given')

    // A well-formed lie: accepted as fra1's say, but one location's word drives no certificate notice.
    rogue.lying.enabled = true
    // A name no scheduled check asks: a check of shop.test may join a scheduled run of it that
    // fra1 answered, wrongly, before the rogue began to lie.
    const lied = await client.checkDomain('lie.site.test')
    t.match(at(lied, FRA1), { status: 'up', tls_issuer: 'CN=Rogue' }, "the rogue's well-formed answer counts as fra1's")
    t.ok(await holds(() => rogue.modes.filter((m) => m.includes('lie')).length >= 3, 15_000), 'the scheduled checks heard the lie too')
    rogue.lying.enabled = false

    const after = await until(
      () => client.getStatus('shop.test'),
      (r) => r.checked_at !== null && r.checked_at > (before.checked_at ?? ''),
      15_000
    )
    t.equal(after.status, 'up', 'the tracked site is recorded, and up')
    t.ok((after.checked_at ?? '') > (before.checked_at ?? ''), `its checked_at advances (${before.checked_at} -> ${after.checked_at})`)
    t.equal(after.tls, null, 'no certificate is reported for it')
    const blog = await client.getStatus('blog.test')
    t.ok((blog.checked_at ?? '') > (before.checked_at ?? ''), 'every tracked site is recorded')
    t.same((await client.listOutages({})).outages, [], 'no outage invented')
    const events = await tracked.service.db<{ type: string }>('events').select('type')
    t.same(
      events.filter((e) => e.type.startsWith('outage.') || e.type === 'certificate.expiring'),
      [],
      'no outage or certificate event in the outbox'
    )

    const counted = await client.health()
    t.ok(
      (agentsOf(counted, 'fra1')?.bad_answers ?? 0) >= WRONG.length,
      `/healthz counts fra1's bad answers (${agentsOf(counted, 'fra1')?.bad_answers})`
    )
    t.equal(agentsOf(counted, 'ams1')?.bad_answers, 0, "and none of ams1's")
    t.equal(agentsOf(counted, 'ams1')?.agents, 1, 'ams1 still counts its one real agent')
    const metrics = await client.getMetrics()
    const bad = Number(new RegExp(`^site_status_agent_bad_answers_total\\{location="${FRA1}"\\} (\\d+)$`, 'm').exec(metrics)?.[1])
    t.ok(bad >= WRONG.length, `/metrics counts them (${bad})`)
    const warnings = tracked.logs.lines.filter((l) => l.includes("an agent's answer was refused as not understood"))
    t.equal(warnings.length, 1, 'logged once per minute, not once per answer')
    t.match(warnings[0], /"location":"fra1"/)
    // The id of the agent it was sent to; before the first survey a request goes to the queue group, which picks one unnamed.
    t.match(warnings[0], /"agentId":"([A-Za-z0-9]{22}|queue group)"/, "with the agent's id")
    t.ok(
      tracked.logs.lines.some((l) => l.includes('a PING answer of an agent was not understood')),
      'the unreadable PING answer is logged'
    )

    if (engine === 'mysql') return
    // Someone with the central's password reads answers under the central's prefix and sends forged
    // ones: to every answer's subject it sees, and to 100 guesses of the next ones.
    const thief = await connect({
      servers: s.nats.url,
      user: 'central',
      pass: s.nats.passwordOf('central'),
      inboxPrefix: CENTRAL_INBOX_PREFIX
    })
    t.teardown(() => thief.close())
    let forged = 0
    thief.subscribe(`${CENTRAL_INBOX_PREFIX}.>`, {
      callback: (_err, msg) => {
        if (msg.subject.split('.').length !== 3) return
        const [prefix, inbox] = msg.subject.split('.')
        // Only ams1's answers (the rogue's may not parse).
        if (!msg.string().includes('"location":"ams1"')) return
        const body = JSON.parse(msg.string()) as { domain: string }
        const lie = JSON.stringify({ ...failing(body.domain, 'down', 'connect_refused'), location: 'ams1' })
        thief.publish(msg.subject, lie)
        for (let i = 1; i <= 100; i++) thief.publish(`${prefix}.${inbox}.${i.toString(36)}`, lie)
        forged += 101
      }
    })
    await thief.flush()
    const during: CheckResult[] = []
    for (let i = 0; i < 5; i++) during.push(await client.checkDomain(`forged-${i}.site.test`))
    t.ok(forged >= 500, `${forged} forged answers sent`)
    t.ok(
      during.every((c) => at(c, AMS1)?.status === 'up'),
      "none was taken for ams1's: an answer counts only under its request's unguessable token"
    )
  })
}
