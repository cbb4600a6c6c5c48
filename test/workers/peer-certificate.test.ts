import { X509Certificate } from 'node:crypto'
import https from 'node:https'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import type { Dispatcher } from 'undici'
import { createLocationDispatcher, probe, type ConnectToRule, type ProbeResult } from '../../workers/http-probe.js'
import { issuerName, peerCertificate } from '../../workers/peer-certificate.js'
import { closedPort, makeCert, startHttpTarget, startHttpsTarget, startProxy } from '../helpers/targets.js'

const DAY = 86_400_000
const soon = makeCert({ days: 3, subject: '/O=Site Status Tests/CN=Three Days' })
const later = makeCert({ days: 30, subject: '/O=Site Status Tests/CN=Thirty Days' })
const web = await startHttpTarget()
const soonTarget = await startHttpsTarget(soon)
const laterTarget = await startHttpsTarget(later)
const nowhere = await closedPort()

const dispatchers: Dispatcher[] = []
function location(opts: Parameters<typeof createLocationDispatcher>[0] = {}): Dispatcher {
  const d = createLocationDispatcher(opts)
  dispatchers.push(d)
  return d
}
const ca = [soon.cert, later.cert]
const trusted = location({ tls: { ca } })
t.teardown(async () => {
  await Promise.all(dispatchers.map((d) => d.destroy()))
  await Promise.all([web.close(), soonTarget.close(), laterTarget.close()])
})

/** site.test:443 -> `httpsPort`, site.test:80 -> `httpPort`. */
function rules(httpsPort: number, httpPort: number): ConnectToRule[] {
  return [
    { host1: null, port1: 443, host2: '127.0.0.1', port2: httpsPort },
    { host1: null, port1: 80, host2: '127.0.0.1', port2: httpPort }
  ]
}

function run(domain: string, httpsPort: number, httpPort = web.port, dispatcher = trusted): Promise<ProbeResult> {
  return probe({ domain, dispatcher, timeoutMs: 5000, userAgent: 'test', connectTo: rules(httpsPort, httpPort) })
}

const notAfter = (pem: string): string => new Date(new X509Certificate(pem).validTo).toISOString()

t.test("an https answer reports its certificate's notAfter and issuer", async (t) => {
  const before = Date.now()
  const r = await run('ok.site.test', soonTarget.port)
  t.match(r, { status: 'up', final_url: 'https://ok.site.test/' })
  t.equal(r.tls_expires_at, notAfter(soon.cert), 'the leaf certificate’s notAfter, ISO 8601')
  t.equal(r.tls_issuer, 'CN=Three Days, O=Site Status Tests')
  const left = Date.parse(r.tls_expires_at as string) - before
  t.ok(left > 2.9 * DAY && left <= 3 * DAY, 'the certificate made with 3 days has about 3 days left')

  const other = await run('ok.site.test', laterTarget.port)
  t.equal(other.tls_expires_at, notAfter(later.cert))
  t.equal(other.tls_issuer, 'CN=Thirty Days, O=Site Status Tests')
})

t.test('a failing https answer still reports the certificate its handshake presented', async (t) => {
  const r = await run('fail.site.test', soonTarget.port)
  t.match(r, { status: 'down', http_code: 503 })
  t.equal(r.tls_expires_at, notAfter(soon.cert))
})

t.test('the final hop counts: https redirected to http has no certificate', async (t) => {
  const r = await run('jump.site.test', soonTarget.port)
  t.match(r, { final_url: 'http://internal.site.test/' })
  t.equal(r.tls_expires_at, null)
  t.equal(r.tls_issuer, null)
})

t.test('a redirect chain over https reports the last hop’s certificate', async (t) => {
  const r = await run('chain.site.test', laterTarget.port)
  t.match(r, { status: 'up', final_url: 'https://chain.site.test/hop/3' })
  t.equal(r.tls_expires_at, notAfter(later.cert))
})

t.test('an http fallback, a refused https and a failed handshake report none', async (t) => {
  const plain = await run('ok.site.test', nowhere)
  t.match(plain, { status: 'up', final_url: 'http://ok.site.test/', tls_expires_at: null, tls_issuer: null })
  const refused = await run('ok.site.test', nowhere, nowhere)
  t.match(refused, { status: 'down', tls_expires_at: null })
  const untrusted = await run('ok.site.test', soonTarget.port, nowhere, location())
  t.match(untrusted, { status: 'down', code: 'tls', tls_expires_at: null, tls_issuer: null })
})

t.test('a probe through a CONNECT proxy reads the site’s certificate, not the tunnel’s', async (t) => {
  const proxy = await startProxy()
  t.teardown(proxy.close)
  const dispatcher = location({ proxy: `http://127.0.0.1:${proxy.port}`, tls: { ca } })
  const r = await run('ok.site.test', soonTarget.port, web.port, dispatcher)
  t.match(r, { status: 'up', final_url: 'https://ok.site.test/' })
  t.equal(r.tls_expires_at, notAfter(soon.cert))
})

t.test('every probe reads a fresh handshake: a certificate swapped on the server shows at once', async (t) => {
  const renewed = makeCert({ days: 90, subject: '/CN=Renewed' })
  const server = https.createServer({ key: soon.key, cert: soon.cert, keepAlive: true }, (_req, res) => res.end('ok'))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    server.closeAllConnections()
    server.close()
  })
  const port = (server.address() as AddressInfo).port
  const dispatcher = location({ tls: { ca: [...ca, renewed.cert] } })
  t.equal((await run('ok.site.test', port, web.port, dispatcher)).tls_expires_at, notAfter(soon.cert))
  server.setSecureContext({ key: renewed.key, cert: renewed.cert })
  const after = await run('ok.site.test', port, web.port, dispatcher)
  t.equal(after.tls_expires_at, notAfter(renewed.cert), 'the same origin, a new handshake, the new certificate')
  t.equal(after.tls_issuer, 'CN=Renewed')
})

t.test("an issuer's name reads most specific first", async (t) => {
  t.equal(issuerName({ C: 'US', O: "Let's Encrypt", CN: 'R11' }), "CN=R11, O=Let's Encrypt, C=US")
  t.equal(issuerName({ CN: 'localhost' }), 'CN=localhost')
  t.equal(issuerName({ O: 'Example', OU: ['Web', 'Ops'] }), 'OU=Web+OU=Ops, O=Example', 'a repeated attribute stays in one part')
  t.equal(issuerName({}), null)
  t.equal(issuerName(undefined), null)
})

t.test('the certificate can be read again from the same connection afterwards', async (t) => {
  const tls = await import('node:tls')
  const socket = tls.connect({ host: '127.0.0.1', port: soonTarget.port, servername: 'ok.site.test', ca })
  t.teardown(() => socket.destroy())
  await new Promise((resolve) => socket.once('secureConnect', resolve))
  const first = peerCertificate(socket)
  t.equal(first?.expires_at, notAfter(soon.cert))
  t.same(peerCertificate(socket), first, 'reading it leaves the socket as it was')
  t.equal(socket.getPeerCertificate().valid_to, new X509Certificate(soon.cert).validTo, 'for any other reader too')
})

t.test('what the store cannot hold is not kept: an expiry past 9999, an issuer over 512 characters', async (t) => {
  const tls = await import('node:tls')
  const net = await import('node:net')
  const seen = (cert: { valid_to: string; issuer: Record<string, string> }) => {
    const socket = new tls.TLSSocket(new net.Socket())
    t.teardown(() => socket.destroy())
    Object.assign(socket, { getPeerCertificate: () => cert })
    return peerCertificate(socket)
  }
  t.same(seen({ valid_to: 'Dec 31 23:59:59 9999 GMT', issuer: { CN: 'R' } }), { expires_at: '9999-12-31T23:59:59.000Z', issuer: 'CN=R' })
  t.equal(seen({ valid_to: '+275760-09-13T00:00:00.000Z', issuer: { CN: 'R' } }), null, 'a time past what MySQL stores')
  const long = seen({ valid_to: 'Dec 31 23:59:59 2030 GMT', issuer: { O: 'o'.repeat(300), CN: 'c'.repeat(300) } })
  t.equal(long?.issuer?.length, 512, 'an issuer cut to the column')
  t.ok(long?.issuer?.endsWith('…'), 'and marked as cut')
})
