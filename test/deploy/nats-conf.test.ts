/**
 * The shipped deploy/nats.conf, run by a real nats-server: the central service and the agent of
 * fra1 can each do their job through it, and the agent nothing more.
 */
import t from 'tap'
import { connect, ErrorCode, Events, RequestStrategy, StringCodec, type NatsConnection } from 'nats'
import { probeQueue } from '../../lib/net/agent-protocol.js'
import { startNats } from '../helpers/nats.js'
import { holds } from '../helpers/poll.js'

const nats = await startNats(t, { shipped: true })
const sc = StringCodec()
const AGENT = 'site-status-agent'

/** The password the shipped file reads for `user` (`agent-fra1`: $NATS_AGENT_FRA1_PASSWORD). */
function passwordOf(user: string): string {
  const password = nats.env[`NATS_${user.toUpperCase().replace(/-/g, '_')}_PASSWORD`]
  if (password === undefined) throw new Error(`deploy/nats.conf has no password variable for ${user}`)
  return password
}

type Teardown = { teardown(fn: () => unknown): void }

/** A connection as `user`, closed at the end of test `t`; it keeps retrying while the server is down. */
async function connectAs(t: Teardown, user: string): Promise<NatsConnection> {
  const nc = await connect({ servers: nats.url, user, pass: passwordOf(user), reconnectTimeWait: 50, maxReconnectAttempts: -1 })
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
  tryToSubscribe('site-status.probe.ams1', 'probe.ams1')
  tryToSubscribe('site-status.probe.fra1')
  // The server answers a refused subscription before the PONG of the flush that follows it.
  await agent.flush()
  t.same(
    Object.fromEntries(refused),
    {
      'site-status.probe.ams1 probe.ams1': ErrorCode.PermissionsViolation,
      'site-status.probe.fra1 (no queue)': ErrorCode.PermissionsViolation
    },
    'both subscriptions are refused'
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
  central.subscribe('_INBOX.forged', {
    callback: (_err, msg) => {
      forged.push(msg.string())
    }
  })
  await central.flush()
  const subjects = ['site-status.probe.fra1', 'site-status.probe.ams1', '$SRV.PING', '_INBOX.forged']
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

t.test('an agent on the services API answers requests and the PING, INFO and STATS of the central', async (t) => {
  const central = await connectAs(t, 'central')
  const agent = await connectAs(t, 'agent-fra1')
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
  // Every control subject the service subscribes: for all services, by name, by instance id.
  for (const verb of ['ping', 'info', 'stats'] as const) {
    for (const [subject, question] of [
      [`$SRV.${verb.toUpperCase()}`, client[verb]()],
      [`$SRV.${verb.toUpperCase()}.${AGENT}`, client[verb](AGENT)],
      [`$SRV.${verb.toUpperCase()}.${AGENT}.<id>`, client[verb](AGENT, id)]
    ] as const) {
      t.match(await answers(question), [{ name: AGENT, id, type: /^io\.nats\.micro\.v1\./ }], subject)
    }
  }
  // A refused control subject stops the whole service.
  t.notOk(service.isStopped, "the server refused none of the service's subscriptions")
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
