import { setImmediate as nextTurn } from 'node:timers/promises'
import t from 'tap'
import { Agent, ProxyAgent, type Dispatcher } from 'undici'
import { createLocationDispatcher, probe, type ConnectToRule, type ProbeOptions, type ProbeResult } from '../../workers/http-probe.js'
import { POLICY_REFUSAL } from '../../lib/rules/target-policy.js'
import { fakeClock, turnsUntil, watch } from '../helpers/fake-clock.js'
import { holds } from '../helpers/poll.js'
import { closedPort, makeCert, startHttpTarget, startHttpsTarget, startProxy, type Target } from '../helpers/targets.js'

const UA = 'site-status-probe/test (+https://example.invalid)'
const cert = makeCert()
const web = await startHttpTarget()
const secure = await startHttpsTarget(cert)
const nowhere = await closedPort()

const dispatchers: Dispatcher[] = []
function location(opts: Parameters<typeof createLocationDispatcher>[0] = {}): Dispatcher {
  const d = createLocationDispatcher(opts)
  dispatchers.push(d)
  return d
}
const trusted = location({ tls: { ca: cert.cert } })
const untrusted = location()

t.teardown(async () => {
  await Promise.all(dispatchers.map((d) => d.destroy()))
  await Promise.all([web.close(), secure.close()])
})

/** site.test:443 -> the TLS target (or a closed port), site.test:80 -> the HTTP target (or closed). */
function rules(httpsPort: number, httpPort: number): ConnectToRule[] {
  return [
    { host1: null, port1: 443, host2: '127.0.0.1', port2: httpsPort },
    { host1: null, port1: 80, host2: '127.0.0.1', port2: httpPort }
  ]
}

function run(domain: string, extra: Partial<ProbeOptions> = {}): Promise<ProbeResult> {
  return probe({
    domain,
    dispatcher: trusted,
    timeoutMs: 5000,
    userAgent: UA,
    connectTo: rules(secure.port, web.port),
    ...extra
  })
}

const hitsFor = (target: Target, label: string) => target.hits.filter((h) => h.host.startsWith(`${label}.`))

/**
 * The fake clock of the deadline tests: the timers a probe sets (its deadline, the dialer's) and
 * the targets' own (a drip's pace, a late answer). The probe is given `now: () => clock.now`, so
 * that its times are the clock's.
 */
const probeClock = (t: Parameters<typeof fakeClock>[0]) => fakeClock(t, ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'])

/** `dispatcher`, telling `onHeaders` each response status as its headers reach the probe. */
function heard(dispatcher: Dispatcher, onHeaders: (status: number) => void): Dispatcher {
  return dispatcher.compose(
    (dispatch) => (opts, handler) =>
      dispatch(opts, {
        onRequestStart: (controller, context) => handler.onRequestStart?.(controller, context),
        onResponseStart: (controller, status, headers, message) => {
          onHeaders(status)
          handler.onResponseStart?.(controller, status, headers, message)
        },
        onResponseData: (controller, chunk) => handler.onResponseData?.(controller, chunk),
        onResponseEnd: (controller, trailers) => handler.onResponseEnd?.(controller, trailers),
        onResponseError: (controller, err) => handler.onResponseError?.(controller, err)
      })
  )
}

t.test('a healthy site over https is up, with phase timings and the given user agent', async (t) => {
  const r = await run('ok.site.test')
  t.match(r, { status: 'up', http_code: 200, error: null, code: null, final_url: 'https://ok.site.test/' })
  t.equal(hitsFor(secure, 'ok').at(-1)?.userAgent, UA)
  t.equal(hitsFor(secure, 'ok').at(-1)?.connection, 'close')
  for (const [phase, ms] of Object.entries(r.timings)) t.ok(ms >= 0, `${phase} is not negative`)
  t.ok(r.timings.tls > 0, 'the TLS handshake was measured')
  t.ok(r.timings.connect > 0, 'the TCP connect was measured')
  t.ok(r.timings.total >= r.timings.first_byte, 'total covers the wait for the first byte')
  t.equal(r.timings.total, r.response_ms)
})

t.test('a name is resolved through the location lookup and timed as dns', async (t) => {
  const asked: string[] = []
  const dispatcher = location({
    tls: { ca: cert.cert },
    lookup: async (host) => {
      asked.push(host)
      return ['127.0.0.1']
    }
  })
  const r = await run('ok.site.test', { dispatcher, connectTo: [{ host1: null, port1: 443, host2: 'loopback.test', port2: secure.port }] })
  t.match(r, { status: 'up', http_code: 200 })
  t.same(asked, ['loopback.test'])
  t.ok(r.timings.dns >= 0)
})

t.test('a name that does not resolve is down with dns: NXDOMAIN', async (t) => {
  const dispatcher = location({
    lookup: async () => {
      throw Object.assign(new Error('nope'), { code: 'ENOTFOUND' })
    }
  })
  const r = await run('nx.site.test', { dispatcher, connectTo: [] })
  t.match(r, { status: 'down', http_code: 0, code: 'dns_nxdomain', error: 'dns: NXDOMAIN', final_url: 'http://nx.site.test/' })
})

t.test('a 503 answer is down with its status code', async (t) => {
  t.match(await run('fail.site.test'), { status: 'down', http_code: 503, code: 'http_5xx', error: 'http: 503' })
})

t.test('headers that never come end the probe at the deadline', async (t) => {
  const clock = probeClock(t)
  const asked = hitsFor(secure, 'hang').length
  const probing = watch(run('hang.site.test', { timeoutMs: 300, now: () => clock.now }))
  await turnsUntil(() => hitsFor(secure, 'hang').length > asked)
  await clock.tickAsync(299)
  t.notOk(probing.ended(), 'the probe waits for the headers until its deadline')
  t.ok(secure.open() > 0, 'on the connection it opened')
  await clock.tickAsync(1)
  await nextTurn()
  if (!t.ok(probing.ended(), 'the deadline ends it, with nothing else to wait for')) return
  const r = await probing.pending
  t.match(r, {
    status: 'down',
    http_code: 0,
    code: 'timeout',
    error: 'timeout: no response in 300 ms',
    final_url: 'https://hang.site.test/'
  })
  t.equal(r.response_ms, 300, 'its time is the deadline')
  await turnsUntil(() => secure.open() === 0)
  t.pass('and the target saw its connection closed')
  clock.stop()
  // The abandoned request once left its Client asking to reconnect in a loop that froze the thread.
  let ticks = 0
  const ticker = setInterval(() => {
    ticks++
  }, 10)
  t.teardown(() => {
    clearInterval(ticker)
  })
  t.match(await run('ok.site.test'), { status: 'up' }, 'the location probes on afterwards')
  t.ok(await holds(() => ticks >= 3, 1000), `the event loop kept turning (${ticks} ticks)`)
})

t.test('the work of a passed deadline can be taken later, and waits for it', async (t) => {
  let expire: (() => void) | undefined
  let ended = false
  const probing = run('hang.site.test', {
    timeoutMs: 100,
    connectTo: rules(nowhere, web.port),
    onDeadline: (work) => {
      expire = work
    }
  }).finally(() => {
    ended = true
  })
  t.ok(await holds(() => expire !== undefined, 2000), 'the deadline handed its work over')
  await nextTurn()
  t.notOk(ended, 'the probe still waits: nothing has ended its hop yet')
  expire?.()
  t.match(await probing, { status: 'down', http_code: 0, code: 'timeout', error: 'timeout: no response in 100 ms' })
  t.ok(await holds(() => web.open() === 0, 1000), 'and its connection was closed')
})

t.test('an answer that comes after the deadline, before its work is done, does not count', async (t) => {
  // The deadline's work is never run here: the late answer itself ends the hop, as a timeout.
  let deadlines = 0
  const r = await run('tardy.site.test', {
    timeoutMs: 200,
    connectTo: rules(nowhere, web.port),
    onDeadline: () => {
      deadlines++
    }
  })
  t.equal(deadlines, 1)
  t.match(r, { status: 'down', http_code: 0, code: 'timeout', error: 'timeout: no response in 200 ms' })
  t.equal(hitsFor(web, 'tardy').length, 1, 'the site was asked, and answered late')
  t.match(
    await run('tardy.site.test', { connectTo: rules(nowhere, web.port) }),
    { status: 'up', http_code: 200 },
    'in time, the same answer counts'
  )
})

t.test('a deadline that expires while connecting still ends the probe on time', async (t) => {
  // The lookup never answers, so undici has not even got a socket when the deadline fires.
  const asked: string[] = []
  const dispatcher = location({
    lookup: (host) => {
      asked.push(host)
      return new Promise<string[]>(() => {})
    }
  })
  const clock = probeClock(t)
  const probing = watch(run('stuck.site.test', { dispatcher, connectTo: [], timeoutMs: 300, now: () => clock.now }))
  await turnsUntil(() => asked.length > 0)
  await clock.tickAsync(299)
  t.notOk(probing.ended(), 'the probe waits for the look-up until its deadline')
  await clock.tickAsync(1)
  await nextTurn()
  if (!t.ok(probing.ended(), 'the deadline ends it, the look-up still unanswered')) return
  const r = await probing.pending
  t.match(r, { status: 'down', code: 'timeout', error: 'timeout: no response in 300 ms' })
  t.equal(r.response_ms, 300, 'its time is the deadline')
  t.same(asked, ['stuck.site.test'], 'one look-up, for https; none for http after the deadline')
})

t.test('a connection that comes only after the deadline is closed unused', async (t) => {
  // https is refused at once; http://late.site.test/ resolves 400 ms into a 300 ms probe.
  const dispatcher = location({
    lookup: async () => {
      await new Promise((resolve) => setTimeout(resolve, 400))
      return ['127.0.0.1']
    }
  })
  const before = web.accepted()
  const r = await run('late.site.test', {
    dispatcher,
    timeoutMs: 300,
    connectTo: [
      { host1: null, port1: 443, host2: '127.0.0.1', port2: nowhere },
      { host1: null, port1: 80, host2: 'web.test', port2: web.port }
    ]
  })
  t.match(r, {
    status: 'down',
    http_code: 0,
    code: 'timeout',
    error: 'timeout: no response in 300 ms',
    final_url: 'http://late.site.test/'
  })
  await holds(() => web.accepted() !== before, 1000)
  t.equal(web.accepted() - before, 1, 'the late connection was made')
  await holds(() => web.open() === 0, 1000)
  t.equal(web.open(), 0, 'and closed')
  t.equal(hitsFor(web, 'late').length, 0, 'without a request on it')
})

t.test('a body still arriving at the deadline is judged on its status', async (t) => {
  // The target sends its headers with the first of 40 bytes, one every 50 ms: 2 s of body.
  const statuses: number[] = []
  const dispatcher = heard(trusted, (status) => statuses.push(status))
  const clock = probeClock(t)
  const asked = hitsFor(web, 'drip').length
  const probing = watch(run('drip.site.test', { dispatcher, timeoutMs: 300, connectTo: rules(nowhere, web.port), now: () => clock.now }))
  await turnsUntil(() => hitsFor(web, 'drip').length > asked)
  await clock.tickAsync(50)
  await turnsUntil(() => statuses.length > 0)
  t.same(statuses, [200], 'the headers have come')
  await clock.tickAsync(249)
  t.notOk(probing.ended(), 'the probe reads the body as it comes, until its deadline')
  await clock.tickAsync(1)
  await nextTurn()
  if (!t.ok(probing.ended(), 'the deadline ends it, 1.75 s of body short')) return
  const r = await probing.pending
  t.match(r, { status: 'up', http_code: 200, error: null, final_url: 'http://drip.site.test/' })
  t.equal(r.response_ms, 300, 'its time is the deadline')
  await turnsUntil(() => web.open() === 0)
  t.pass('the connection was dropped')
})

t.test('an informational 103 is not the answer: the final status after it is', async (t) => {
  // The target sends the 103 at once and the 503 100 ms later, on the fake clock.
  const clock = probeClock(t)
  const asked = hitsFor(secure, 'hints').length
  const probing = run('hints.site.test', { now: () => clock.now })
  await turnsUntil(() => hitsFor(secure, 'hints').length > asked)
  await clock.tickAsync(100)
  const r = await probing
  clock.stop()
  t.match(r, { status: 'down', http_code: 503, code: 'http_5xx', error: 'http: 503', final_url: 'https://hints.site.test/' })
  t.equal(r.timings.first_byte, 100, 'the wait for the first byte runs to the final answer')
  const hung = await run('hintsonly.site.test', { timeoutMs: 300 })
  t.match(
    hung,
    { status: 'down', http_code: 0, code: 'timeout', error: 'timeout: no response in 300 ms' },
    'a 103 with no answer after it is no response'
  )
})

t.test('a redirect that cannot be followed is the final answer', async (t) => {
  t.match(await run('elsewhere.site.test'), { status: 'up', http_code: 302, error: null, final_url: 'https://elsewhere.site.test/' })
  t.match(await run('garbled.site.test'), { status: 'up', http_code: 302, error: null, final_url: 'https://garbled.site.test/' })
})

t.test('a connection reset before any answer is down', async (t) => {
  const r = await run('reset.site.test')
  t.match(r, { status: 'down', http_code: 0, code: 'connect_reset', error: 'connect: ECONNRESET' })
})

t.test('a self-signed certificate is a tls error even when http is refused', async (t) => {
  const r = await run('ok.site.test', { dispatcher: untrusted, connectTo: rules(secure.port, nowhere) })
  t.match(r, { status: 'down', http_code: 0, code: 'tls', error: 'tls: DEPTH_ZERO_SELF_SIGNED_CERT', final_url: 'http://ok.site.test/' })
})

t.test('when https is refused the probe falls back to http once', async (t) => {
  const r = await run('ok.site.test', { connectTo: rules(nowhere, web.port) })
  t.match(r, { status: 'up', http_code: 200, error: null, final_url: 'http://ok.site.test/' })
  t.equal(r.timings.tls, 0, 'no TLS phase on the http answer')
  const both = await run('ok.site.test', { connectTo: rules(nowhere, nowhere) })
  t.match(both, { status: 'down', http_code: 0, code: 'connect_refused', error: 'connect: ECONNREFUSED' })
})

t.test('redirects are followed hop by hop, each on its own connection', async (t) => {
  const before = hitsFor(secure, 'chain').length
  const r = await run('chain.site.test')
  t.match(r, { status: 'up', http_code: 200, final_url: 'https://chain.site.test/hop/3' })
  const hops = hitsFor(secure, 'chain').slice(before)
  t.same(
    hops.map((h) => h.path),
    ['/', '/hop/1', '/hop/2', '/hop/3']
  )
  t.equal(new Set(hops.map((h) => h.remotePort)).size, 4)
})

t.test('more than five redirects is down', async (t) => {
  const before = hitsFor(secure, 'loop').length
  const r = await run('loop.site.test')
  t.match(r, {
    status: 'down',
    http_code: 302,
    code: 'too_many_redirects',
    error: 'http: too many redirects',
    final_url: 'https://loop.site.test/loop/5'
  })
  t.equal(hitsFor(secure, 'loop').length - before, 6, 'the first request and five redirects')
})

t.test('a 10 MB body is capped and the connection dropped early', async (t) => {
  let deadlines = 0
  const r = await run('big.site.test', {
    connectTo: rules(nowhere, web.port),
    onDeadline: (work) => {
      deadlines++
      work()
    }
  })
  t.match(r, { status: 'up', http_code: 200 })
  t.equal(deadlines, 0, 'the cap ended the probe, not its deadline')
  t.ok(await holds(() => web.open() === 0, 2000), 'the connection was closed')
  t.same(web.bigFinished, [false], 'the server never got to write the whole body')
})

t.test('a Cloudflare-style challenge is blocked', async (t) => {
  t.match(await run('challenge.site.test'), {
    status: 'blocked',
    http_code: 403,
    code: 'blocked_challenge',
    error: 'blocked: challenge (cloudflare)'
  })
})

t.test('a plain 403 is blocked', async (t) => {
  t.match(await run('forbidden.site.test'), { status: 'blocked', http_code: 403, code: 'blocked_status', error: 'blocked: http 403' })
})

t.test('checkTarget is asked about every hop and can refuse a redirect', async (t) => {
  const asked: string[] = []
  const checkTarget = async (host: string, port: number): Promise<'policy_non_public' | null> => {
    asked.push(`${host}:${port}`)
    return host === 'internal.site.test' ? 'policy_non_public' : null
  }
  const before = hitsFor(web, 'internal').length
  const r = await run('jump.site.test', { checkTarget })
  t.match(r, { status: 'down', http_code: 302, code: 'policy_non_public', error: POLICY_REFUSAL, final_url: 'https://jump.site.test/' })
  t.same(asked, ['jump.site.test:443', 'internal.site.test:80'])
  t.equal(hitsFor(web, 'internal').length, before, 'the refused hop was never requested')
  const allowed = await run('jump.site.test', { checkTarget: async () => null })
  t.match(allowed, { status: 'up', final_url: 'http://internal.site.test/' })
})

t.test('a direct location judges the very address it dials, so a name that rebinds is still refused', async (t) => {
  // The name looked public when the check began; the lookup made for the dial says loopback.
  const publicOnly = (ip: string): boolean => !ip.startsWith('127.')
  const rebinding = location({ tls: { ca: cert.cert }, allowAddress: publicOnly, lookup: async () => ['127.0.0.1'] })
  const to = (host2: string): ConnectToRule[] => [{ host1: null, port1: null, host2, port2: web.port }]
  const before = hitsFor(web, 'rebind').length
  t.match(
    await run('rebind.site.test', { dispatcher: rebinding, connectTo: [] }),
    { status: 'down', http_code: 0, code: 'policy_non_public', error: POLICY_REFUSAL },
    'a name resolving to loopback at dial time'
  )
  const literal = location({ allowAddress: publicOnly, connectTo: to('127.0.0.1') })
  t.match(
    await run('rebind.site.test', { dispatcher: literal, connectTo: [] }),
    { status: 'down', code: 'policy_non_public', error: POLICY_REFUSAL },
    'a connect-to address literal'
  )
  const mixed = location({ allowAddress: publicOnly, lookup: async () => ['93.184.215.14', '127.0.0.1'] })
  t.match(
    await run('rebind.site.test', { dispatcher: mixed, connectTo: [] }),
    { status: 'down', code: 'policy_non_public', error: POLICY_REFUSAL },
    'one private address among public ones'
  )
  t.equal(hitsFor(web, 'rebind').length, before, 'nothing was fetched')
  const allowed = location({ allowAddress: () => true, connectTo: to('127.0.0.1') })
  t.match(
    await run('rebind.site.test', { dispatcher: allowed, connectTo: [] }),
    { status: 'up', final_url: 'http://rebind.site.test/' },
    'the same dial goes ahead when the policy allows it'
  )
})

t.test('a probe through a CONNECT proxy is up and its tunnel is timed', async (t) => {
  const proxy = await startProxy()
  t.teardown(proxy.close)
  const dispatcher = location({ proxy: `http://127.0.0.1:${proxy.port}`, tls: { ca: cert.cert } })
  const r = await run('ok.site.test', { dispatcher })
  t.match(r, { status: 'up', http_code: 200, error: null, final_url: 'https://ok.site.test/' })
  t.same(proxy.connects, [`127.0.0.1:${secure.port}`])
  t.ok(r.timings.connect > 0 && r.timings.tls > 0)
})

t.test('a proxied location sends its connect-to target on the CONNECT line', async (t) => {
  const proxy = await startProxy()
  t.teardown(proxy.close)
  const dispatcher = location({ proxy: `http://127.0.0.1:${proxy.port}`, connectTo: rules(nowhere, web.port) })
  const r = await run('ok.site.test', { dispatcher, connectTo: [] })
  t.match(r, { status: 'up', http_code: 200, final_url: 'http://ok.site.test/' })
  t.same(proxy.connects, [`127.0.0.1:${nowhere}`, `127.0.0.1:${web.port}`], 'https got a 502, http went through')
})

t.test('a proxy refusing CONNECT makes the site down from that location', async (t) => {
  const proxy = await startProxy({ refuse: 502 })
  t.teardown(proxy.close)
  const r = await run('ok.site.test', { dispatcher: location({ proxy: `http://127.0.0.1:${proxy.port}` }) })
  t.match(r, { status: 'down', http_code: 0, code: 'proxy_refused', error: 'proxy: 502' })
  t.equal(proxy.connects.length, 2, 'https, then the http fallback')
})

t.test('an unreachable proxy is a location error, whoever built the ProxyAgent', async (t) => {
  const ours = await run('ok.site.test', { dispatcher: location({ proxy: `http://127.0.0.1:${nowhere}` }) })
  t.match(ours, { status: 'error', http_code: 0, code: 'location_egress', error: 'location: egress unreachable' })
  const plain = new ProxyAgent({ uri: `http://127.0.0.1:${nowhere}` })
  dispatchers.push(plain)
  const theirs = await run('ok.site.test', { dispatcher: plain })
  t.match(theirs, { status: 'error', code: 'location_egress', error: 'location: egress unreachable' })
})

t.test('each probe opens a fresh connection and closes it afterwards', async (t) => {
  const before = web.accepted()
  const opts = { connectTo: rules(nowhere, web.port) }
  t.match(await run('ok.site.test', opts), { status: 'up' })
  t.match(await run('ok.site.test', opts), { status: 'up' })
  t.equal(web.accepted() - before, 2, 'two probes, two TCP connections')
  const ports = hitsFor(web, 'ok')
    .slice(-2)
    .map((h) => h.remotePort)
  t.not(ports[0], ports[1])
  await holds(() => web.open() === 0, 1000)
  t.equal(web.open(), 0, 'no connection is left open')
})

t.test('concurrent probes of one origin each get a connection of their own, whose start and end are reported', async (t) => {
  const dispatcher = location({ connectTo: rules(nowhere, web.port) })
  let connected = 0
  let gone = 0
  dispatcher
    .on('connect', () => {
      connected++
    })
    .on('disconnect', () => {
      gone++
    })
    .on('connectionError', () => {
      gone++
    })
  const before = web.accepted()
  const results = await Promise.all(Array.from({ length: 20 }, () => run('same.site.test', { dispatcher, connectTo: [] })))
  t.ok(
    results.every((r) => r.status === 'up'),
    'all 20 are up'
  )
  t.equal(web.accepted() - before, 20, 'twenty connections at once, none waited in a queue for another')
  await holds(() => gone >= 40, 1000)
  t.equal(connected, 20, 'every connection was reported')
  t.equal(gone, 40, 'and so was its end (20 refused https dials, 20 closed http connections): what an Agent holding it counts')
})

t.test('a plain undici Agent works too, with the probe applying connect-to', async (t) => {
  const agent = new Agent()
  dispatchers.push(agent)
  const r = await run('ok.site.test', { dispatcher: agent, connectTo: rules(nowhere, web.port) })
  t.match(r, { status: 'up', http_code: 200, final_url: 'http://ok.site.test/' })
  t.match(r.timings, { dns: 0, connect: 0, tls: 0 })
  t.ok(r.timings.first_byte > 0)
})
