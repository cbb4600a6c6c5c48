/**
 * Location agents end to end (issue 33): a real nats-server on loopback with the users and
 * permissions deploy/nats.conf gives, the central service, and three agent locations served by
 * `site-status agent` processes from the build (two for fra1). On-demand checks and a tracked site
 * go through them on both engines; on SQLite the faults follow: an agent killed mid-probe, NATS
 * stopped for 10 s, wrong credentials. Each agent reaches the target through its own CONNECT_TO,
 * as a real region reaches a site by its own route: ams1's route is slower, sfo1 cannot reach
 * `partial.test` at all; the central has no route of its own to any of them.
 */
import t, { type Test } from 'tap'
import http from 'node:http'
import { randomBytes } from 'node:crypto'
import { createLogger } from '../../lib/logger.js'
import { startService } from '../../lib/main.js'
import { TEST_ACTORS } from '../helpers/compiled.js'
import { engines } from '../helpers/db.js'
import { LogCapture } from '../helpers/server.js'
import { natsUsers, startAgentProcess, type AgentProcess } from '../helpers/agents.js'
import { startNats, natsUrlWithAuth, type PrivateNats } from '../helpers/nats.js'
import { holds, until } from '../helpers/poll.js'
import { closedPort, serveOnLoopback } from '../helpers/targets.js'
import { startTrackedService, type TargetPorts, type TrackedService } from '../helpers/tracked-service.js'

t.setTimeout(240_000)

const LABELS = { fra1: 'Frankfurt 1, Germany', ams1: 'Amsterdam 1, Netherlands', sfo1: 'San Francisco 1, United States' } as const
type Agent = keyof typeof LABELS
const AGENTS = Object.keys(LABELS) as Agent[]
/** How much slower ams1's route to the sites is: its target answers after this. */
const SLOWER_MS = 150
/** The bound for the agent locations to answer again once NATS is back. */
const BACK_WITHIN_MS = 5000

interface Answer {
  status: number
  body: any
}

interface Setup {
  nats: PrivateNats
  tracked: TrackedService
  agents: Record<Agent, AgentProcess[]>
  password: string
  base: string
  check(domain: string): Promise<Answer>
  get(path: string): Promise<Answer>
}

async function setUp(t: Test, engine: 'sqlite' | 'mysql'): Promise<Setup> {
  const password = `p${randomBytes(12).toString('hex')}`
  const nats = await startNats(t, { users: natsUsers(password, AGENTS) })
  // ams1's own route: the same answer, later.
  const slow = http.createServer((_req, res) => {
    setTimeout(() => res.writeHead(200).end('ok'), SLOWER_MS)
  })
  const slowPort = await serveOnLoopback(t, slow)
  const refused = await closedPort()
  let ports: TargetPorts | undefined
  const tracked = await startTrackedService(t, {
    engine,
    site: { domain: 'shop.test', name: 'Shop' },
    hang: (host) => host.startsWith('hang-'),
    env: (p) => {
      ports = p
      return {
        LOCATIONS: JSON.stringify(AGENTS.map((agent) => ({ label: LABELS[agent], agent }))),
        NATS_URL: natsUrlWithAuth(nats.url, 'central', password),
        CACHE_TTL_S: '0',
        CHECK_INTERVAL_S: '2',
        // The central's own route leads nowhere: every answer below is an agent's.
        CONNECT_TO: `:443:127.0.0.1:${refused},:80:127.0.0.1:${refused}`
      }
    }
  })
  const { http: web, closed } = ports as TargetPorts
  const routes: Record<Agent, string> = {
    fra1: `:443:127.0.0.1:${closed},:80:127.0.0.1:${web}`,
    ams1: `:443:127.0.0.1:${closed},hang-1.test:80:127.0.0.1:${web},:80:127.0.0.1:${slowPort}`,
    sfo1: `partial.test:80:127.0.0.1:${refused},:443:127.0.0.1:${closed},:80:127.0.0.1:${web}`
  }
  const start = (agent: Agent) =>
    startAgentProcess(t, agent, {
      NATS_URL: natsUrlWithAuth(nats.url, `agent-${agent}`, password),
      ALLOW_PRIVATE_TARGETS: '1',
      PROBE_TIMEOUT_MS: '1000',
      CONNECT_TO: routes[agent]
    })
  const [fraA, fraB, ams, sfo] = await Promise.all([start('fra1'), start('fra1'), start('ams1'), start('sfo1')])
  const agents = { fra1: [fraA, fraB], ams1: [ams], sfo1: [sfo] } as Record<Agent, AgentProcess[]>
  const base = tracked.service.server.info.uri
  const auth = { authorization: `Bearer ${tracked.key}` }
  const get = async (path: string): Promise<Answer> => {
    const res = await fetch(`${base}${path}`, { headers: auth })
    return { status: res.status, body: await res.json() }
  }
  const check = async (domain: string): Promise<Answer> => {
    const res = await fetch(`${base}/api/v1/check`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ domain })
    })
    return { status: res.status, body: await res.json() }
  }
  return { nats, tracked, agents, password, base, check, get }
}

const byLabel = (body: any, agent: Agent) => (body.locations as any[]).find((l) => l.location === LABELS[agent])
const agentCounts = (health: any) =>
  Object.fromEntries(AGENTS.map((agent) => [agent, (health.locations as any[]).find((l) => l.agent === agent)?.agents]))

for (const engine of engines()) {
  t.test(`${engine}: checks through agent locations`, async (t) => {
    const s = await setUp(t, engine)
    const health = await until(
      () => s.get('/healthz'),
      (h) => JSON.stringify(agentCounts(h.body)) === JSON.stringify({ fra1: 2, ams1: 1, sfo1: 1 }),
      15_000
    )
    t.equal(health.status, 200)
    t.same(agentCounts(health.body), { fra1: 2, ams1: 1, sfo1: 1 }, '/healthz counts each location’s agents')
    t.match(health.body.locations, [
      { kind: 'agent', agent: 'fra1', label: LABELS.fra1, versions: [String] },
      { kind: 'agent' },
      { kind: 'agent' }
    ])

    const { status, body } = await s.check('www.site.test')
    t.equal(status, 200)
    t.match(body, { status: 'up', locations_answered: 3, locations_total: 3, partial: false })
    t.ok(byLabel(body, 'ams1').timings.first_byte >= SLOWER_MS, 'ams1’s timings are its own route’s, slower')
    t.ok(byLabel(body, 'fra1').timings.first_byte < byLabel(body, 'ams1').timings.first_byte, 'fra1’s are its own')
    t.ok(s.tracked.userAgents.has(`SiteStatusAPI/0.1 (+${s.tracked.config.publicUrl})`), 'agents probe with the central’s User-Agent')

    const partial = await s.check('partial.test')
    t.match(partial.body, { status: 'up', partial: true, locations_answered: 3 }, 'one region that cannot reach the site: partial')
    t.match(byLabel(partial.body, 'sfo1'), { status: 'down', http_code: 0 })

    const record = await until(
      () => s.get('/api/v1/status/shop.test'),
      (a) => a.body.status === 'up',
      15_000
    )
    t.equal(record.body.status, 'up', 'the tracked site is monitored through the agents')
    const metrics = await fetch(`${s.base}/metrics`, { headers: { authorization: `Bearer ${s.tracked.key}` } }).then((r) => r.text())
    t.match(metrics, `site_status_location_agents{location="${LABELS.fra1}"} 2`, '/metrics counts the agents')
    t.match(metrics, /site_status_location_agent_info\{location="Frankfurt 1, Germany",version="[^"]+"\} 1/)
    if (engine === 'mysql') {
      // A second instance on the same database talks to the same agents.
      const second = await startService({
        config: { ...s.tracked.config, instanceId: 'second' },
        actors: TEST_ACTORS,
        logger: createLogger({ level: 'info', stream: new LogCapture() })
      })
      t.teardown(() => second.stop())
      const res = await fetch(`${second.server.info.uri}/api/v1/check`, {
        method: 'POST',
        headers: { authorization: `Bearer ${s.tracked.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ domain: 'second.site.test' })
      })
      t.match(await res.json(), { status: 'up', locations_answered: 3 }, 'a second instance is answered by the same agents')
      return
    }

    // kill -9 of one of fra1's agents while probes hang at every location.
    const hanging: Array<Promise<Answer>> = []
    let seen = 0
    s.tracked.onRequest((host) => {
      if (host.startsWith('hang-')) seen++
    })
    for (let i = 1; i <= 12; i++) hanging.push(s.check(`hang-${i}.test`))
    t.ok(await holds(() => seen >= 24, 10_000), 'the probes are under way at the agents')
    s.agents.fra1[0]?.child.kill('SIGKILL')
    const answers = await Promise.all(hanging)
    t.ok(
      answers.every((a) => a.status === 200 && a.body.locations_total === 3),
      'every check answers'
    )
    const fra1 = answers.map((a) => byLabel(a.body, 'fra1'))
    t.ok(
      fra1.some((l) => l.status === 'error' && l.error === 'agent: no answer in time'),
      'the killed agent’s probes: fra1 did not answer them'
    )
    t.ok(
      fra1.every((l) => l.status === 'error' || l.status === 'down'),
      'and never counted them up'
    )
    const after = await s.check('after-kill.site.test')
    t.match(after.body, { status: 'up', locations_answered: 3 }, 'fra1’s other agent takes its probes')
    t.ok(await holds(async () => agentCounts((await s.get('/healthz')).body).fra1 === 1, 15_000), '/healthz counts one fra1 agent')

    // NATS away for 10 s: every agent location does not answer; nothing is down.
    await s.nats.stop()
    const stoppedAt = Date.now()
    const during: Answer[] = []
    // NATS stays away for 10 s, a check asked every half second meanwhile.
    await until(
      async () => {
        during.push(await s.check(`during-${during.length}.site.test`))
        return Date.now() - stoppedAt
      },
      (ms) => ms >= 10_000,
      15_000,
      500
    )
    t.ok(during.length >= 10, `${during.length} checks while NATS was away`)
    const away = await s.get('/healthz')
    t.equal(away.status, 200, '/healthz stays 200 without agents')
    t.same(agentCounts(away.body), { fra1: 0, ams1: 0, sfo1: 0 }, 'and says no location has one')
    t.ok(
      during.every((a) => a.status === 200 && a.body.status === 'unavailable' && a.body.locations_answered === 0),
      'each answered 200, unavailable: no location answered'
    )
    t.ok(
      during.every((a) => (a.body.locations as any[]).every((l) => l.status === 'error' && l.error === 'agent: NATS cannot be reached')),
      'each agent location said why'
    )
    await s.nats.start()
    const restarted = Date.now()
    const back = await until(
      () => s.check(`back-${Date.now()}.site.test`),
      (a) => a.body.locations_answered === 3,
      BACK_WITHIN_MS + 5000,
      200
    )
    const backMs = Date.now() - restarted
    t.equal(back.body.locations_answered, 3, 'the agent locations answer again')
    t.ok(backMs <= BACK_WITHIN_MS, `within ${BACK_WITHIN_MS} ms of NATS starting (${backMs} ms)`)

    const outages = await s.get('/api/v1/outages?domain=shop.test')
    t.equal(outages.status, 200)
    t.same(outages.body.outages, [], 'no outage opened for the tracked site')
    const recovered = await until(
      () => s.get('/api/v1/status/shop.test'),
      (a) => a.body.status === 'up',
      15_000
    )
    t.equal(recovered.body.status, 'up', 'the tracked site is up again at its next check')

    // SIGTERM: the agent answers the probe it holds (a hanging site: its deadline), then exits 0.
    let arrived = 0
    s.tracked.onRequest((host) => {
      if (host === 'hang-1.test') arrived++
    })
    const held = s.check('hang-1.test')
    t.ok(await holds(() => arrived === 3, 10_000), 'the probes are under way at every location')
    const last = s.agents.fra1[1] as AgentProcess
    last.child.kill('SIGTERM')
    t.match(byLabel((await held).body, 'fra1'), { status: 'down', error: /no response in 1000 ms/ }, 'the probe it held is answered')
    t.equal(await last.exited, 0, 'and the agent exits 0')

    const wrong = await startAgentProcess(t, 'fra1', { NATS_URL: natsUrlWithAuth(s.nats.url, 'agent-fra1', 'wrong') })
    t.equal(await wrong.exited, 1, 'an agent with wrong credentials exits 1')
    t.match(wrong.output(), /^site-status: NATS refused the agent: check NATS_URL or NATS_CREDENTIALS$/m)
    t.notMatch(wrong.output(), /wrong/, 'without repeating the password')
  })
}
