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
import type { CheckResult, Health } from '../../lib/client/index.js'
import { apiClient, type ApiClient } from '../helpers/api-client.js'
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
/** How much slower ams1's route to the sites is: its target answers after this (well apart from fra1's, even on a loaded machine). */
const SLOWER_MS = 500
/**
 * fra1's and sfo1's probe deadline: short, so that the hanging probes below end soon, yet long enough
 * for the first probes of agents just reconnected to NATS on a loaded machine (at 1000 ms two of them
 * timed out once and opened an outage of the tracked site).
 */
const HANG_TIMEOUT_MS = 2000
/** The bound for the agent locations to answer again once NATS is back. */
const BACK_WITHIN_MS = 5000

interface Setup {
  nats: PrivateNats
  tracked: TrackedService
  agents: Record<Agent, AgentProcess[]>
  password: string
  /** The central's API, with the tracked service's key. */
  client: ApiClient
  /** Starts one more agent of a location. */
  start(agent: Agent): Promise<AgentProcess>
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
      // ams1's slower route gets room to answer on a loaded machine (at 1000 ms its first, cold
      // answer was sometimes a timeout).
      PROBE_TIMEOUT_MS: String(agent === 'ams1' ? 3000 : HANG_TIMEOUT_MS),
      CONNECT_TO: routes[agent]
    })
  const [fraA, fraB, ams, sfo] = await Promise.all([start('fra1'), start('fra1'), start('ams1'), start('sfo1')])
  const agents = { fra1: [fraA, fraB], ams1: [ams], sfo1: [sfo] } as Record<Agent, AgentProcess[]>
  const client = apiClient(tracked.service.server.info.uri, tracked.key)
  return { nats, tracked, agents, password, client, start }
}

const byLabel = (body: CheckResult, agent: Agent): any => body.locations.find((l) => l.location === LABELS[agent])
const lateAnswers = async (client: ApiClient): Promise<number> =>
  Number(/^site_status_agent_late_answers_total (\d+)$/m.exec(await client.getMetrics())?.[1] ?? 0)
const agentCounts = (health: Health) =>
  Object.fromEntries(AGENTS.map((agent) => [agent, health.locations?.find((l) => l.agent === agent)?.agents]))

for (const engine of engines()) {
  t.test(`${engine}: checks through agent locations`, async (t) => {
    const s = await setUp(t, engine)
    const { client } = s
    const health = await until(
      () => client.health(),
      (h) => JSON.stringify(agentCounts(h)) === JSON.stringify({ fra1: 2, ams1: 1, sfo1: 1 }),
      15_000
    )
    t.equal(client.statuses.at(-1), 200)
    t.same(agentCounts(health), { fra1: 2, ams1: 1, sfo1: 1 }, '/healthz counts each location’s agents')
    t.match(health.locations, [
      { kind: 'agent', agent: 'fra1', label: LABELS.fra1, versions: [String] },
      { kind: 'agent' },
      { kind: 'agent' }
    ])

    // The agents' first probes pay for their cold start (connections, compiled code): one round
    // answered by all three first, so that what follows measures their routes.
    await until(
      () => client.checkDomain('warm.site.test'),
      (a) => a.locations_answered === 3 && !a.partial,
      30_000
    )
    const body = await client.checkDomain('www.site.test')
    t.equal(client.statuses.at(-1), 200)
    t.match(body, { status: 'up', locations_answered: 3, locations_total: 3, partial: false })
    t.ok(byLabel(body, 'ams1').timings.first_byte >= SLOWER_MS, 'ams1’s timings are its own route’s, slower')
    t.ok(byLabel(body, 'fra1').timings.first_byte < byLabel(body, 'ams1').timings.first_byte, 'fra1’s are its own')
    t.ok(s.tracked.userAgents.has(`SiteStatusAPI/0.1 (+${s.tracked.config.publicUrl})`), 'agents probe with the central’s User-Agent')

    const partial = await client.checkDomain('partial.test')
    t.match(partial, { status: 'up', partial: true, locations_answered: 3 }, 'one region that cannot reach the site: partial')
    t.match(byLabel(partial, 'sfo1'), { status: 'down', http_code: 0 })

    const record = await until(
      () => client.getStatus('shop.test'),
      (r) => r.status === 'up',
      15_000
    )
    t.equal(record.status, 'up', 'the tracked site is monitored through the agents')
    const metrics = await client.getMetrics()
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
      const checked = await apiClient(second.server.info.uri, s.tracked.key).checkDomain('second.site.test')
      t.match(checked, { status: 'up', locations_answered: 3 }, 'a second instance is answered by the same agents')
      return
    }

    // kill -9 of one of fra1's agents while probes hang at every location: what it held goes to
    // fra1's other agent within the check's deadline.
    const hangAll = async (from: number, stop: () => void): Promise<CheckResult[]> => {
      const hanging: Array<Promise<CheckResult>> = []
      let seen = 0
      s.tracked.onRequest((host) => {
        if (host.startsWith('hang-')) seen++
      })
      const answeredBefore = client.statuses.length
      for (let i = from; i < from + 12; i++) hanging.push(client.checkDomain(`hang-${i}.test`))
      t.ok(await holds(() => seen >= 24, 10_000), 'the probes are under way at the agents')
      stop()
      const answers = await Promise.all(hanging)
      t.ok(
        client.statuses.slice(answeredBefore).every((status) => status === 200) && answers.every((a) => a.locations_total === 3),
        'every check answers'
      )
      return answers
    }
    const afterKill = (await hangAll(1, () => s.agents.fra1[0]?.child.kill('SIGKILL'))).map((a) => byLabel(a, 'fra1'))
    t.ok(
      afterKill.every((l) => l.status === 'down' && l.error === `timeout: no response in ${HANG_TIMEOUT_MS} ms`),
      `the killed agent's probes were sent again to fra1's other agent, which answered them: ${JSON.stringify(afterKill.map((l) => l.error))}`
    )
    const after = await client.checkDomain('after-kill.site.test')
    t.match(after, { status: 'up', locations_answered: 3 }, 'fra1’s other agent takes its probes')
    t.ok(await holds(async () => agentCounts(await client.health()).fra1 === 1, 15_000), '/healthz counts one fra1 agent')

    // An agent whose host is gone without a word (frozen: its connection open, nothing answered):
    // its probes go to another agent too, long before NATS drops it.
    const third = await s.start('fra1')
    t.ok(await holds(async () => agentCounts(await client.health()).fra1 === 2, 15_000), '/healthz counts a new fra1 agent')
    const frozen = s.agents.fra1[1] as AgentProcess
    const lateBefore = await lateAnswers(client)
    const afterFreeze = (await hangAll(13, () => frozen.child.kill('SIGSTOP'))).map((a) => byLabel(a, 'fra1'))
    t.ok(
      afterFreeze.every((l) => l.status === 'down' && l.error === `timeout: no response in ${HANG_TIMEOUT_MS} ms`),
      `the frozen agent's probes were answered by another: ${JSON.stringify(afterFreeze.map((l) => l.error))}`
    )
    frozen.child.kill('SIGCONT')
    t.ok(await holds(async () => (await lateAnswers(client)) > lateBefore, 10_000), 'thawed, its own answers come too late and are dropped')
    frozen.child.kill('SIGKILL')
    t.ok(await holds(async () => agentCounts(await client.health()).fra1 === 1, 15_000), 'one fra1 agent again')
    s.agents.fra1 = [frozen, third]

    // NATS away for 10 s: every agent location does not answer; nothing is down.
    await s.nats.stop()
    const stoppedAt = Date.now()
    const during: Array<{ status: number | undefined; body: CheckResult }> = []
    // NATS stays away for 10 s, a check asked every half second meanwhile.
    await until(
      async () => {
        const body = await client.checkDomain(`during-${during.length}.site.test`)
        during.push({ status: client.statuses.at(-1), body })
        return Date.now() - stoppedAt
      },
      (ms) => ms >= 10_000,
      15_000,
      500
    )
    t.ok(during.length >= 10, `${during.length} checks while NATS was away`)
    const away = await client.health()
    t.equal(client.statuses.at(-1), 200, '/healthz stays 200 without agents')
    t.same(agentCounts(away), { fra1: 0, ams1: 0, sfo1: 0 }, 'and says no location has one')
    t.ok(
      during.every((a) => a.status === 200 && a.body.status === 'unavailable' && a.body.locations_answered === 0),
      'each answered 200, unavailable: no location answered'
    )
    t.ok(
      during.every((a) => a.body.locations.every((l) => l.status === 'error' && l.error === 'agent: NATS cannot be reached')),
      'each agent location said why'
    )
    await s.nats.start()
    const restarted = Date.now()
    const back = await until(
      () => client.checkDomain(`back-${Date.now()}.site.test`),
      (a) => a.locations_answered === 3,
      BACK_WITHIN_MS + 5000,
      200
    )
    const backMs = Date.now() - restarted
    t.equal(back.locations_answered, 3, 'the agent locations answer again')
    t.ok(backMs <= BACK_WITHIN_MS, `within ${BACK_WITHIN_MS} ms of NATS starting (${backMs} ms)`)

    const outages = await client.listOutages({ domain: 'shop.test' })
    t.equal(client.statuses.at(-1), 200)
    t.same(outages.outages, [], 'no outage opened for the tracked site')
    const recovered = await until(
      () => client.getStatus('shop.test'),
      (r) => r.status === 'up',
      15_000
    )
    t.equal(recovered.status, 'up', 'the tracked site is up again at its next check')

    // SIGTERM: the agent answers the probe it holds (a hanging site: its deadline), then exits 0.
    let arrived = 0
    s.tracked.onRequest((host) => {
      if (host === 'hang-1.test') arrived++
    })
    const held = client.checkDomain('hang-1.test')
    t.ok(await holds(() => arrived === 3, 10_000), 'the probes are under way at every location')
    const last = s.agents.fra1[1] as AgentProcess
    last.child.kill('SIGTERM')
    t.match(
      byLabel(await held, 'fra1'),
      { status: 'down', error: `timeout: no response in ${HANG_TIMEOUT_MS} ms` },
      'the probe it held is answered'
    )
    t.equal(await last.exited, 0, 'and the agent exits 0')
    t.ok(await holds(async () => agentCounts(await client.health()).fra1 === 0, 15_000), 'nobody answers for fra1 now: /healthz counts 0')

    const wrong = await startAgentProcess(t, 'fra1', { NATS_URL: natsUrlWithAuth(s.nats.url, 'agent-fra1', 'wrong') })
    t.equal(await wrong.exited, 1, 'an agent with wrong credentials exits 1')
    t.match(wrong.output(), /^site-status: NATS refused the agent: check NATS_URL or NATS_CREDENTIALS$/m)
    t.notMatch(wrong.output(), /wrong/, 'without repeating the password')
  })
}
