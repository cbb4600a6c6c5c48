/**
 * The probers of the kinds beyond a GET, run as the actors run them: a TCP port (refused, open, a
 * line sent and the reply's start compared, TLS on connect), a TLS handshake (certificate days,
 * an untrusted chain), a DNS record asked of a loopback server; and the HTTP check's own request
 * (method, path, headers, body) with assertions on its answer.
 */
import net from 'node:net'
import http from 'node:http'
import t from 'tap'
import { checkSchema, type CheckSpec, type DnsCheck, type TcpCheck, type TlsCheck } from '../../lib/rules/check-spec.js'
import { probeDnsRecord } from '../../workers/dns-probe.js'
import { createLocationDispatcher, probe } from '../../workers/http-probe.js'
import { createLocationConnector } from '../../workers/location-dispatcher.js'
import { probeSocket } from '../../workers/tcp-probe.js'
import { startDnsZone } from '../helpers/dns-zone.js'
import { closedPort, makeCert, serveOnLoopback, startHttpsTarget } from '../helpers/targets.js'

const spec = (value: unknown): CheckSpec => checkSchema.validate(value).value as CheckSpec
const socketSpec = (value: unknown) => spec(value) as TcpCheck | TlsCheck
const dnsSpec = (value: unknown) => spec(value) as DnsCheck
const httpSpec = (value: unknown) => spec(value) as Extract<CheckSpec, { type: 'http' }>
const cert = makeCert({ days: 3 })
const secure = await startHttpsTarget(cert)
const nowhere = await closedPort()
t.teardown(() => secure.close())

// A line server: greets with "+OK ready", then answers each line "PONG <line>".
const sockets = new Set<net.Socket>()
const lines = net.createServer((socket) => {
  sockets.add(socket)
  socket.on('error', () => {})
  socket.on('close', () => sockets.delete(socket))
  socket.write('+OK ready\r\n')
  socket.on('data', (d) => socket.write(`PONG ${d.toString().trim()}\r\n`))
})
await new Promise<void>((resolve) => lines.listen(0, '127.0.0.1', resolve))
const linePort = (lines.address() as net.AddressInfo).port
t.teardown(() => {
  for (const s of sockets) s.destroy()
  lines.close()
})
const rule = (port: number) => [{ host1: null, port1: null, host2: '127.0.0.1', port2: port }]
const connector = (port: number, extra: Parameters<typeof createLocationConnector>[0] = {}) =>
  createLocationConnector({ connectTo: rule(port), tls: { ca: cert.cert }, ...extra })

t.test('tcp: an open port is up, a closed one down with connect_refused', async (t) => {
  const open = await probeSocket({
    domain: 'db.site.test',
    spec: socketSpec({ type: 'tcp', port: 5432 }),
    connector: connector(linePort),
    timeoutMs: 2000
  })
  t.match(open, { status: 'up', code: null, error: null, http_code: 0, final_url: null })
  t.ok(open.timings.connect > 0 && open.timings.total >= open.timings.connect)
  const closed = await probeSocket({
    domain: 'db.site.test',
    spec: socketSpec({ type: 'tcp', port: 5432 }),
    connector: connector(nowhere),
    timeoutMs: 2000
  })
  t.match(closed, { status: 'down', code: 'connect_refused', error: 'connect: ECONNREFUSED' })
})

t.test('tcp: a line sent and the reply compared with its expected start', async (t) => {
  const ok = socketSpec({ type: 'tcp', port: 1, expect_prefix: '+OK' })
  t.match(await probeSocket({ domain: 'mail.site.test', spec: ok, connector: connector(linePort), timeoutMs: 2000 }), { status: 'up' })
  const wrong = socketSpec({ type: 'tcp', port: 1, expect_prefix: '220 ' })
  t.match(await probeSocket({ domain: 'mail.site.test', spec: wrong, connector: connector(linePort), timeoutMs: 2000 }), {
    status: 'down',
    code: 'reply_mismatch',
    error: /expect: reply starts with "220 " \(got "\+OK r/
  })
  const asserted = socketSpec({
    type: 'tcp',
    port: 1,
    send: 'PING\r\n',
    expect_prefix: '+OK',
    assertions: [{ source: 'text_body', comparison: 'contains', target: 'PONG PING' }]
  })
  // The reply's text is read to its end, or until the deadline: the server keeps the connection open.
  const result = await probeSocket({ domain: 'mail.site.test', spec: asserted, connector: connector(linePort), timeoutMs: 600 })
  t.match(result, { status: 'up' }, 'what was sent got its answer')
})

t.test('tcp over TLS and tls: the handshake verified, the certificate read', async (t) => {
  const tcpTls = await probeSocket({
    domain: 'imaps.site.test',
    spec: socketSpec({ type: 'tcp', port: 993, tls: true }),
    connector: connector(secure.port),
    timeoutMs: 2000
  })
  t.match(tcpTls, { status: 'up', tls_expires_at: String })
  t.ok(tcpTls.timings.tls > 0, 'the handshake is timed')
  const three = socketSpec({
    type: 'tls',
    port: 993,
    assertions: [{ source: 'certificate_days', comparison: 'greater_than', target: 7 }]
  })
  t.match(await probeSocket({ domain: 'imaps.site.test', spec: three, connector: connector(secure.port), timeoutMs: 2000 }), {
    status: 'down',
    code: 'assertion_failed',
    assertion: 0,
    error: /assert: certificate_days greater_than "7" \(got [23]\)/
  })
  const untrusted = await probeSocket({
    domain: 'imaps.site.test',
    spec: socketSpec({ type: 'tls' }),
    connector: createLocationConnector({ connectTo: rule(secure.port) }),
    timeoutMs: 2000
  })
  t.match(untrusted, { status: 'down', code: 'tls', error: 'tls: DEPTH_ZERO_SELF_SIGNED_CERT' })
})

t.test('tcp: the target policy judges the address dialled, as for HTTP', async (t) => {
  const refused = await probeSocket({
    domain: 'db.site.test',
    spec: socketSpec({ type: 'tcp', port: 5432 }),
    connector: connector(linePort, { allowAddress: () => false }),
    timeoutMs: 2000
  })
  t.match(refused, { status: 'down', code: 'policy_non_public' })
})

t.test('dns: records compared as a set, rcodes, and a resolver that fails is the location error', async (t) => {
  const zone = await startDnsZone(t, {
    'mail.test': { MX: ['10 mx1.mail.test', '20 mx2.mail.test'], TXT: ['v=spf1 -all'], A: ['192.0.2.7'] },
    'gone.test': { rcode: 'SERVFAIL' },
    'refused.test': { rcode: 'REFUSED' },
    'quiet.test': { rcode: 'drop' }
  })
  const dns = { servers: [zone.address], timeoutMs: 500 }
  const ask = (domain: string, check: unknown) => probeDnsRecord({ domain, spec: dnsSpec(check), dns, timeoutMs: 1000 })
  t.match(await ask('mail.test', { type: 'dns', record: 'MX', expect: ['20 MX2.mail.test.', '10 mx1.mail.test'] }), {
    status: 'up',
    answers: ['10 mx1.mail.test', '20 mx2.mail.test']
  })
  t.match(await ask('mail.test', { type: 'dns', record: 'MX', expect: ['10 mx1.mail.test'] }), {
    status: 'down',
    code: 'dns_answer_mismatch'
  })
  t.match(await ask('mail.test', { type: 'dns', record: 'TXT', expect: ['v=spf1 -all'] }), { status: 'up' })
  t.match(await ask('nowhere.test', { type: 'dns', record: 'A' }), {
    status: 'down',
    code: 'dns_rcode',
    error: 'dns: NXDOMAIN (expected NOERROR)'
  })
  t.match(await ask('nowhere.test', { type: 'dns', record: 'A', rcode: 'NXDOMAIN' }), { status: 'up' }, 'an expected NXDOMAIN')
  t.match(await ask('gone.test', { type: 'dns', record: 'A' }), {
    status: 'down',
    code: 'dns_rcode',
    error: 'dns: SERVFAIL (expected NOERROR)'
  })
  t.match(
    await ask('refused.test', { type: 'dns', record: 'A' }),
    { status: 'error', code: 'dns_refused' },
    "our resolver's refusal is ours"
  )
  t.match(await ask('quiet.test', { type: 'dns', record: 'A' }), { status: 'error', code: 'dns_refused' }, 'and its silence')
  zone.set('mail.test', { MX: ['10 elsewhere.test'] })
  t.match(
    await ask('mail.test', { type: 'dns', record: 'MX', expect: ['10 mx1.mail.test', '20 mx2.mail.test'] }),
    {
      status: 'down',
      code: 'dns_answer_mismatch'
    },
    'the answer changed'
  )
})

t.test('http: the check sends its method, path, headers and body, and asserts on the answer', async (t) => {
  const seen: Array<{ method?: string; url?: string; auth?: string; body: string }> = []
  let health = { status: 'ok' }
  const api = http.createServer((req, res) => {
    let body = ''
    req.on('data', (c: Buffer) => (body += c.toString()))
    req.on('end', () => {
      seen.push({ method: req.method, url: req.url, auth: req.headers.authorization, body })
      if (req.url === '/old') res.writeHead(302, { location: '/health' }).end()
      else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(health))
    })
  })
  const port = await serveOnLoopback(t, api)
  const dispatcher = createLocationDispatcher({
    connectTo: [{ host1: null, port1: 443, host2: '127.0.0.1', port2: nowhere }, ...rule(port)]
  })
  t.teardown(() => dispatcher.destroy())
  const check = httpSpec({
    type: 'http',
    method: 'POST',
    path: '/health?deep=1',
    headers: { Authorization: 'Bearer s3cret', 'content-type': 'application/json' },
    body: '{"probe":true}',
    assertions: [{ source: 'json_body', property: '$.status', comparison: 'equals', target: 'ok' }]
  })
  const run = () =>
    probe({ domain: 'api.site.test', dispatcher, timeoutMs: 2000, userAgent: 'test', request: check, assertions: check.assertions })
  t.match(await run(), { status: 'up', http_code: 200, final_url: 'http://api.site.test/health?deep=1' })
  t.match(seen.at(-1), { method: 'POST', url: '/health?deep=1', auth: 'Bearer s3cret', body: '{"probe":true}' })
  health = { status: 'degraded' }
  t.match(await run(), {
    status: 'down',
    code: 'assertion_failed',
    assertion: 0,
    error: 'assert: json_body $.status equals "ok" (got "degraded")'
  })
  const moved = httpSpec({ type: 'http', method: 'POST', path: '/old', body: 'x' })
  await probe({ domain: 'api.site.test', dispatcher, timeoutMs: 2000, userAgent: 'test', request: moved })
  t.match(
    seen.slice(-2),
    [
      { method: 'POST', url: '/old', body: 'x' },
      { method: 'GET', url: '/health', body: '' }
    ],
    'a 302 after a POST goes on as a GET without the body'
  )
})
