import { stat } from 'node:fs/promises'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setImmediate as nextTurn } from 'node:timers/promises'
import t from 'tap'
import { createResolver, dnsTimeoutFor, readHostsFile } from '../../../lib/net/resolver.js'
import { startDnsServer } from '../../helpers/dns-server.js'
import { fakeClock, turnsUntil, watch } from '../../helpers/fake-clock.js'

const dns = await startDnsServer([
  { suffix: 'both.test', A: ['127.0.0.7'], AAAA: ['::1'] },
  { suffix: 'v4only.test', A: ['127.0.0.8'], AAAA: [] },
  { suffix: 'v6only.test', A: [], AAAA: ['fd00::8'] },
  { suffix: 'nx.test', A: 'nxdomain', AAAA: 'nxdomain' },
  { suffix: 'broken.test', A: 'servfail', AAAA: 'servfail' },
  { suffix: 'hang.test', A: 'drop', AAAA: 'drop' },
  { suffix: 'noaaaa.test', A: ['127.0.0.9'], AAAA: 'drop' }
])
t.teardown(() => dns.close())

const TIMEOUT_MS = 1500
const resolve = createResolver({ servers: [dns.address], timeoutMs: TIMEOUT_MS, hosts: new Map([['listed.test', ['127.0.0.42']]]) })

async function failure(name: string): Promise<{ code: unknown; ms: number }> {
  const started = performance.now()
  try {
    await resolve(name)
  } catch (err) {
    return { code: (err as { code?: unknown }).code, ms: performance.now() - started }
  }
  return { code: 'resolved', ms: performance.now() - started }
}

t.test('A and AAAA are asked at once and combined, IPv4 first', async (t) => {
  t.same(await resolve('both.test'), ['127.0.0.7', '::1'])
  t.same(await resolve('v4only.test'), ['127.0.0.8'])
  t.same(await resolve('v6only.test'), ['fd00::8'])
  t.same(await resolve('Both.Test.'), ['127.0.0.7', '::1'], 'case and a trailing dot do not matter')
  const asked = await dns.queries()
  t.ok(asked.includes('A both.test') && asked.includes('AAAA both.test'), 'both families were asked')
})

t.test('failures come back as the codes a probe reports', async (t) => {
  t.equal((await failure('nx.test')).code, 'ENOTFOUND')
  t.equal((await failure('broken.test')).code, 'ESERVFAIL')
})

t.test('a resolver that never answers costs the look-up its timeout, then ETIMEOUT', async (t) => {
  const { code, ms } = await failure('hang.test')
  t.equal(code, 'ETIMEOUT')
  t.ok(ms >= TIMEOUT_MS - 20, `not before the timeout (${Math.round(ms)} ms)`)
})

t.test('an unanswered AAAA does not hold up an answered A', async (t) => {
  // The other family gets the 50 ms resolution delay, not the whole timeout. The delay and the
  // deadline run on a fake clock; c-ares's own timeouts are real, and with a budget of a minute
  // none of them can end the look-up first.
  const slow = createResolver({ servers: [dns.address], timeoutMs: 60_000, hosts: new Map() })
  const clock = fakeClock(t)
  const looking = watch(slow('noaaaa.test'))
  t.equal(clock.countTimers(), 1, 'the look-up has its deadline')
  await turnsUntil(() => clock.countTimers() === 2)
  t.pass('the A answer came, and with it the delay for the AAAA one')
  await clock.tickAsync(49)
  t.notOk(looking.ended(), 'the AAAA answer gets the delay')
  await clock.tickAsync(1)
  await nextTurn()
  if (!t.ok(looking.ended(), 'and no more: the look-up is answered 50 ms after the A answer, not at its deadline')) return
  t.same(await looking.pending, ['127.0.0.9'])
})

t.test('localhost, the hosts table and IP literals need no DNS', async (t) => {
  const before = (await dns.queries()).length
  t.same(await resolve('localhost'), ['127.0.0.1', '::1'])
  t.same(await resolve('app.localhost'), ['127.0.0.1', '::1'])
  t.same(await resolve('listed.test'), ['127.0.0.42'])
  t.same(await resolve('192.0.2.1'), ['192.0.2.1'])
  t.equal((await dns.queries()).length, before, 'no query was sent')
})

t.test('pending look-ups hold no libuv pool thread: file I/O goes on meanwhile', async (t) => {
  // dns.lookup would park each of these on one of libuv's four threads until it gave up, and the
  // stat calls below would wait behind them. Through c-ares they finish first.
  const hung = Array.from({ length: 40 }, (_, i) =>
    resolve(`hang${i}.hang.test`).then(
      () => 'resolved',
      () => 'failed'
    )
  )
  const io = Promise.all(Array.from({ length: 20 }, () => stat(import.meta.dirname))).then(() => 'io')
  const first = await Promise.race([io, ...hung])
  t.equal(first, 'io', 'file I/O finished while every look-up was still pending')
  t.same(new Set(await Promise.all(hung)), new Set(['failed']))
})

t.test('the hosts file is read as getaddrinfo reads it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'hosts-'))
  t.teardown(() => {
    rmSync(dir, { recursive: true, force: true })
  })
  const file = join(dir, 'hosts')
  writeFileSync(
    file,
    '# comment\n127.0.0.1 localhost Box  # trailing\n::1 localhost ip6-localhost\n10.0.0.5\tdb.internal db\nnot-an-ip name\n'
  )
  const table = readHostsFile(file)
  t.same(table.get('localhost'), ['127.0.0.1', '::1'])
  t.same(table.get('box'), ['127.0.0.1'])
  t.same(table.get('db'), ['10.0.0.5'])
  t.equal(table.get('name'), undefined)
  t.same(readHostsFile(join(dir, 'missing')), new Map(), 'a missing file is an empty table')
})

t.test('DNS gets half the probe deadline', async (t) => {
  t.equal(dnsTimeoutFor(10_000), 5000)
  t.equal(dnsTimeoutFor(1000), 500)
})
