/**
 * The shipped deploy/nats.conf, run by a real nats-server: the central service and the agent of
 * fra1 can each do their job through it, and the agent nothing more.
 */
import net from 'node:net'
import t from 'tap'
import { connect, ErrorCode, Events, RequestStrategy, StringCodec, type NatsConnection } from 'nats'
import { agentService, CENTRAL_INBOX_PREFIX, probeQueue } from '../../lib/net/agent-protocol.js'
import { startNats } from '../helpers/nats.js'
import { holds } from '../helpers/poll.js'

const nats = await startNats(t, { shipped: true, locations: ['fra1', 'ams1'] })
const sc = StringCodec()
const AGENT = agentService('fra1')
const passwordOf = (user: string): string => nats.passwordOf(user)

type Teardown = { teardown(fn: () => unknown): void }

/** A connection as `user`, closed at the end of test `t`; it keeps retrying while the server is down. */
async function connectAs(t: Teardown, user: string): Promise<NatsConnection> {
  const nc = await connect({
    servers: nats.url,
    user,
    pass: passwordOf(user),
    reconnectTimeWait: 50,
    maxReconnectAttempts: -1,
    // The central reads its answers under its own prefix, as the service connects.
    ...(user === 'central' ? { inboxPrefix: CENTRAL_INBOX_PREFIX } : {})
  })
  t.teardown(() => nc.close())
  return nc
}

/** The permission violations the server reports to `nc`, as they come. */
function violationsOf(nc: NatsConnection): Array<{ operation: string; subject: string }> {
  const seen: Array<{ operation: string; subject: string }> = []
  void (async () => {
    for await (const status of nc.status()) if (status.permissionContext) seen.push(status.permissionContext)
  })()
  return seen
}

/** Answers fra1's probe requests in queue group probe-fra1, as an agent without the services API would. */
function answerProbes(agent: NatsConnection): void {
  agent.subscribe('site-status.probe.fra1', {
    queue: probeQueue('fra1'),
    callback: (_err, msg) => {
      msg.respond(sc.encode(`probed ${msg.string()}`))
    }
  })
}

t.test('the central sends a request to fra1 and the agent of fra1 answers it', async (t) => {
  const central = await connectAs(t, 'central')
  const agent = await connectAs(t, 'agent-fra1')
  answerProbes(agent)
  await agent.flush()
  const reply = await central.request('site-status.probe.fra1', sc.encode('example.com'), { timeout: 5000 })
  t.equal(reply.string(), 'probed example.com')
})

t.test("the agent of fra1 takes no other location's requests, and its own only in its queue group", async (t) => {
  const central = await connectAs(t, 'central')
  const agent = await connectAs(t, 'agent-fra1')
  const refused = new Map<string, string>()
  const tryToSubscribe = (subject: string, queue?: string): void => {
    agent.subscribe(subject, {
      queue,
      callback: (err) => {
        if (err) refused.set(`${subject} ${queue ?? '(no queue)'}`, err.code)
      }
    })
  }
  tryToSubscribe('site-status.probe.ams1', 'probe-ams1')
  tryToSubscribe('site-status.probe.ams1.someid', 'probe-ams1')
  tryToSubscribe('site-status.probe.fra1')
  tryToSubscribe('site-status.probe.fra1.someid')
  tryToSubscribe('site-status.probe.fra1.someid', 'probe-fra1')
  tryToSubscribe(`$SRV.PING.${agentService('ams1')}`)
  tryToSubscribe(`${CENTRAL_INBOX_PREFIX}.>`)
  // The server answers a refused subscription before the PONG of the flush that follows it.
  await agent.flush()
  t.same(
    Object.fromEntries(refused),
    {
      'site-status.probe.ams1 probe-ams1': ErrorCode.PermissionsViolation,
      'site-status.probe.ams1.someid probe-ams1': ErrorCode.PermissionsViolation,
      'site-status.probe.fra1 (no queue)': ErrorCode.PermissionsViolation,
      'site-status.probe.fra1.someid (no queue)': ErrorCode.PermissionsViolation,
      [`$SRV.PING.${agentService('ams1')} (no queue)`]: ErrorCode.PermissionsViolation,
      [`${CENTRAL_INBOX_PREFIX}.> (no queue)`]: ErrorCode.PermissionsViolation
    },
    "every subscription to another location's subjects, outside the queue group, or to the central's answers is refused"
  )
  await t.rejects(
    central.request('site-status.probe.ams1', sc.encode('example.com'), { timeout: 5000 }),
    { code: ErrorCode.NoResponders },
    'no subscriber took the request to ams1'
  )
})

t.test('the agent of fra1 publishes replies and nothing else', async (t) => {
  const central = await connectAs(t, 'central')
  const agent = await connectAs(t, 'agent-fra1')
  const violations = violationsOf(agent)
  const forged: string[] = []
  central.subscribe(`${CENTRAL_INBOX_PREFIX}.forged`, {
    callback: (_err, msg) => {
      forged.push(msg.string())
    }
  })
  await central.flush()
  const subjects = ['site-status.probe.fra1', 'site-status.probe.ams1', '$SRV.PING', `${CENTRAL_INBOX_PREFIX}.forged`]
  for (const subject of subjects) agent.publish(subject, sc.encode('forged'))
  t.ok(
    await holds(() => subjects.every((s) => violations.some((v) => v.operation === 'publish' && v.subject === s)), 5000),
    `the server refused every publish: ${JSON.stringify(violations)}`
  )
  await central.flush()
  t.same(forged, [], 'nothing the agent published reached a subscriber')
})

t.test('a wrong password is refused', async (t) => {
  // Each user's password is a real one, of the other user: neither opens the other's account.
  for (const [user, pass] of [
    ['central', passwordOf('agent-fra1')],
    ['agent-fra1', passwordOf('central')]
  ] as const) {
    await t.rejects(connect({ servers: nats.url, user, pass, reconnect: false }), { code: ErrorCode.AuthorizationViolation }, user)
  }
})

t.test('the central reads its own answers and no other inbox', async (t) => {
  const central = await connectAs(t, 'central')
  const refused: string[] = []
  for (const subject of ['_INBOX.>', '_INBOX.someone', 'site-status.probe.fra1', '$SRV.PING.>']) {
    central.subscribe(subject, {
      callback: (err) => {
        if (err?.code === ErrorCode.PermissionsViolation) refused.push(subject)
      }
    })
  }
  await central.flush()
  t.same(refused.sort(), ['$SRV.PING.>', '_INBOX.>', '_INBOX.someone', 'site-status.probe.fra1'])
})

t.test("an agent that registers as another location's service is refused and never answers for it", async (t) => {
  const central = await connectAs(t, 'central')
  const agent = await connectAs(t, 'agent-fra1')
  const violations = violationsOf(agent)
  await agent.services.add({ name: agentService('ams1'), version: '1.0.0', queue: probeQueue('fra1') })
  await agent.flush()
  t.ok(
    await holds(() => violations.some((v) => v.operation === 'subscription' && v.subject === `$SRV.PING.${agentService('ams1')}`), 5000),
    `NATS refused its PING subject: ${JSON.stringify(violations)}`
  )
  const client = central.services.client({ strategy: RequestStrategy.Timer, maxWait: 500 })
  await t.rejects(
    (async () => {
      for await (const answer of await client.ping(agentService('ams1'))) return answer
      return null
    })(),
    { code: ErrorCode.NoResponders },
    "a PING for ams1's agents reaches nobody"
  )
})

t.test('a client whose host is gone without a word is dropped within about 20 s (sized on purpose: the shipped pings)', async (t) => {
  // A raw connection that logs in as an agent, then answers none of the server's PINGs, as a host
  // that lost power would; ping_interval 5 s and ping_max 3 drop it.
  const socket = net.connect({ host: '127.0.0.1', port: nats.port })
  t.teardown(() => socket.destroy())
  socket.on('error', () => {})
  const closed = new Promise<number>((resolve) =>
    socket.once('close', () => {
      resolve(performance.now())
    })
  )
  await new Promise((resolve) => socket.once('data', resolve))
  const since = performance.now()
  socket.write(`CONNECT ${JSON.stringify({ user: 'agent-fra1', pass: passwordOf('agent-fra1'), verbose: false, pedantic: false })}\r\n`)
  const gone = (await closed) - since
  t.ok(gone >= 10_000 && gone <= 21_000, `dropped after ${Math.round(gone)} ms`)
})

t.test("an agent on the services API answers requests and the central's PING by name and by id", async (t) => {
  const central = await connectAs(t, 'central')
  const agent = await connectAs(t, 'agent-fra1')
  const agentViolations = violationsOf(agent)
  // nats.js 2.29 refuses a service-wide queue with a dot in it; an endpoint's own queue may have one.
  const service = await agent.services.add({ name: AGENT, version: '1.0.0' })
  service.addEndpoint('probe', {
    subject: 'site-status.probe.fra1',
    queue: probeQueue('fra1'),
    handler: (_err, msg) => {
      msg.respond(sc.encode(`probed ${msg.string()}`))
    }
  })
  await agent.flush()
  const reply = await central.request('site-status.probe.fra1', sc.encode('example.com'), { timeout: 5000 })
  t.equal(reply.string(), 'probed example.com')

  const client = central.services.client({ strategy: RequestStrategy.Count, maxMessages: 1, maxWait: 5000 })
  const id = service.info().id
  const answers = async (question: Promise<AsyncIterable<{ name: string; id: string; type: string }>>): Promise<unknown[]> => {
    const found: unknown[] = []
    for await (const a of await question) found.push({ name: a.name, id: a.id, type: a.type })
    return found
  }
  // The central counts agents by name (and may ask one by its id); a PING to all services, and
  // INFO and STATS, are not its to send.
  for (const [subject, question] of [
    [`$SRV.PING.${AGENT}`, client.ping(AGENT)],
    [`$SRV.PING.${AGENT}.<id>`, client.ping(AGENT, id)]
  ] as const) {
    t.match(await answers(question), [{ name: AGENT, id, type: /^io\.nats\.micro\.v1\./ }], subject)
  }
  const violations = violationsOf(central)
  for (const subject of ['$SRV.PING', `$SRV.INFO.${AGENT}`, `$SRV.STATS.${AGENT}`]) central.publish(subject)
  t.ok(
    await holds(() => violations.filter((v) => v.operation === 'publish').length === 3, 5000),
    `the central may not send a PING to all, INFO or STATS: ${JSON.stringify(violations)}`
  )
  // nats.js 2.29 leaves a service running when NATS refuses one of its control subjects: the
  // violations the server reported are what says the file allows every one of them.
  t.same(agentViolations, [], "the server refused none of the service's subscriptions")
})

t.test('an agent answers again once NATS is back on the same port', async (t) => {
  const central = await connectAs(t, 'central')
  const agent = await connectAs(t, 'agent-fra1')
  const back = (nc: NatsConnection): Promise<unknown> =>
    (async () => {
      for await (const status of nc.status()) if (status.type === Events.Reconnect) return
    })()
  answerProbes(agent)
  await agent.flush()
  const bothBack = Promise.all([back(central), back(agent)])
  await nats.stop()
  t.notOk(nats.running(), 'stopped')
  await nats.start()
  // Both reconnect by themselves; the agent's flush is answered once the server has its subscription again.
  await bothBack
  await agent.flush()
  const reply = await central.request('site-status.probe.fra1', sc.encode('example.com'), { timeout: 5000 })
  t.equal(reply.string(), 'probed example.com')
})
