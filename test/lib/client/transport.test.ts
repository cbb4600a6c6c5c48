import t, { type Test } from 'tap'
import { inspect } from 'node:util'
import { codeOf, SiteStatusError } from '../../../lib/client/errors.js'
import { SiteStatusClient } from '../../../lib/client/index.js'
import { turnsUntil, watch } from '../../helpers/fake-clock.js'
import { answer, budget, manualSleep, standInApi } from '../../helpers/stand-in-api.js'

// Retries and errors against a stand-in whose answers the test writes; the client waits on a
// sleep the test ends, so every "waited, then retried" is an order of events, not a duration.
const KEY = 'ssk_standin000000000000000000000000000000000000'

async function setup(t: Test, options: { retries?: number; maxRetryWaitMs?: number } = {}) {
  const api = await standInApi(t)
  const sleeper = manualSleep()
  const client = new SiteStatusClient({ baseUrl: api.url, key: KEY, sleep: sleeper.sleep, ...options })
  return { api, sleeper, client }
}

const status = { domain: 'a.example.com', status: 'up' }

for (const code of [429, 503]) {
  t.test(`a ${code} with Retry-After is retried after that delay, not before`, async (t) => {
    const { api, sleeper, client } = await setup(t)
    const call = watch(client.getStatus('a.example.com'))
    answer(await api.next(), code, { error: 'not now' }, { 'retry-after': '2', ...budget(10, 3, 40) })
    t.equal(await sleeper.started(), 2000, 'the client waits Retry-After')
    t.equal(api.requests.length, 1, 'and sends nothing meanwhile')
    sleeper.wake()
    const retry = await api.next()
    t.equal(retry.url, '/api/v1/status/a.example.com')
    answer(retry, 200, status, budget(10, 2, 40))
    t.same(await call.pending, status)
    t.same(sleeper.calls, [2000], 'one wait, for the retry')
  })
}

t.test('a Retry-After longer than maxRetryWaitMs fails the call at once', async (t) => {
  const { api, sleeper, client } = await setup(t, { maxRetryWaitMs: 5000 })
  const call = client.checkDomain('a.example.com')
  answer(await api.next(), 429, { error: 'rate limit exceeded' }, { 'retry-after': '30', ...budget(10, 0, 40) })
  await t.rejects(call, { name: 'SiteStatusError', status: 429, code: 'rate_limited', retryAfterS: 30, message: 'rate limit exceeded' })
  t.same(sleeper.calls, [], 'no wait')
  t.equal(api.requests.length, 1, 'no retry')
})

t.test('a 429 for a cost over the whole limit is not retried', async (t) => {
  const { api, client } = await setup(t)
  const call = client.checkDomain('a.example.com')
  answer(await api.next(), 429, { error: 'this request costs 5 units, more than the limit' }, { 'retry-after': '60', ...budget(3, 3, 0) })
  await t.rejects(call, { status: 429, code: 'rate_limited' })
  t.equal(api.requests.length, 1)
})

t.test('after its retries a call fails with the last answer', async (t) => {
  const { api, sleeper, client } = await setup(t, { retries: 2 })
  const call = client.listSites()
  for (let i = 0; i < 3; i++) {
    answer(await api.next(), 503, { error: 'database unavailable' }, { 'retry-after': '1' })
    if (i < 2) {
      await sleeper.started()
      sleeper.wake()
    }
  }
  await t.rejects(call, { status: 503, code: 'unavailable', retryAfterS: 1, message: 'database unavailable' })
  t.equal(api.requests.length, 3, 'the first try and two retries')
})

t.test('a GET that got no answer is tried again; a POST is not (it may have been done)', async (t) => {
  const { api, sleeper, client } = await setup(t)
  const read = client.getStatus('a.example.com')
  ;(await api.next()).res.socket?.destroy()
  t.equal(await sleeper.started(), 200, 'a short pause first')
  sleeper.wake()
  answer(await api.next(), 200, status, budget(10, 9, 60))
  t.same(await read, status)

  const check = client.checkDomain('a.example.com')
  ;(await api.next()).res.socket?.destroy()
  const error = await check.then(
    () => undefined,
    (err: unknown) => err
  )
  t.ok(error instanceof SiteStatusError)
  t.match(error, { status: 0, code: 'network_error', message: /^no answer from the server/ })
  t.equal(api.requests.length, 3, 'the check was sent once')
})

t.test('errors carry the status, a code from the status, the server text, and never the key', async (t) => {
  const { api, client } = await setup(t, { retries: 0 })
  const table: Array<[number, string]> = [
    [400, 'bad_request'],
    [401, 'unauthorized'],
    [403, 'forbidden'],
    [404, 'not_found'],
    [405, 'method_not_allowed'],
    [409, 'conflict'],
    [413, 'payload_too_large'],
    [415, 'unsupported_media_type'],
    [429, 'rate_limited'],
    [500, 'internal_error'],
    [503, 'unavailable'],
    [418, 'client_error'],
    [502, 'server_error']
  ]
  for (const [code, name] of table) {
    const call = client.getStatus('a.example.com').catch((err: unknown) => err)
    answer(await api.next(), code, { error: `refused with ${code}` })
    const error = (await call) as SiteStatusError
    t.match(error, { name: 'SiteStatusError', status: code, code: name, message: `refused with ${code}` }, `${code} is ${name}`)
    t.equal(codeOf(code), name)
    const shown = [String(error), error.stack ?? '', inspect(error, { depth: 5, showHidden: true }), JSON.stringify(error)].join('\n')
    t.notOk(shown.includes(KEY.slice(4)), `${code}: the key appears nowhere in the error`)
  }
  t.equal(codeOf(0), 'network_error')
  const html = client.sitePage('a.example.com').catch((err: unknown) => err)
  const req = await api.next()
  req.res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not tracked</h1>')
  t.match(await html, { status: 404, code: 'not_found', message: '404 Not Found' }, 'an HTML error page: the status text')
})

t.test('a request past the remaining budget waits until RateLimit-Reset instead of spending into a 429', async (t) => {
  const now = { ms: 0 }
  const api = await standInApi(t)
  const sleeper = manualSleep()
  const client = new SiteStatusClient({ baseUrl: api.url, key: KEY, sleep: sleeper.sleep, now: () => now.ms })
  const first = client.listSites()
  answer(await api.next(), 200, { sites: [], next_cursor: null }, budget(10, 4, 30))
  await first
  const check = watch(client.checkDomain('a.example.com'))
  t.equal(await sleeper.started(), 30_000, 'a check costs 5, 4 are left: it waits the 30 s until the reset')
  t.equal(api.requests.length, 1, 'nothing sent meanwhile')
  now.ms += 30_000
  sleeper.wake()
  answer(await api.next(), 200, { domain: 'a.example.com' }, budget(10, 5, 60))
  await check.pending
  t.same(sleeper.calls, [30_000])
})

t.test('aborting a call during its wait for a retry rejects with the reason and sends nothing more', async (t) => {
  const api = await standInApi(t)
  const client = new SiteStatusClient({ baseUrl: api.url, key: KEY })
  const controller = new AbortController()
  const call = client.getStatus('a.example.com', { signal: controller.signal })
  answer(await api.next(), 503, { error: 'database unavailable' }, { 'retry-after': '30', ...budget(10, 9, 60) })
  // The answer read (its budget learnt), the client waits on its own timer for 30 s.
  await turnsUntil(() => client.budget !== undefined)
  await new Promise((resolve) => setImmediate(resolve))
  controller.abort(new Error('no longer needed'))
  await t.rejects(call, { message: 'no longer needed' })
  t.equal(api.requests.length, 1)
})

t.test('the options are checked when the client is made, each named', async (t) => {
  t.throws(() => new SiteStatusClient({ baseUrl: 'status.example.net' }), { message: /^baseUrl / })
  t.throws(() => new SiteStatusClient({ baseUrl: 'https://status.example.net', key: '' }), { message: /^key / })
  t.throws(() => new SiteStatusClient({ baseUrl: 'https://status.example.net', retries: -1 }), { message: /^retries / })
  t.throws(() => new SiteStatusClient({ baseUrl: 'https://status.example.net', maxRetryWaitMs: Number.NaN }), {
    message: /^maxRetryWaitMs /
  })
})
