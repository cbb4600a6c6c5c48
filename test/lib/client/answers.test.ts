import t from 'tap'
import { retryAfterOf, SiteStatusError } from '../../../lib/client/errors.js'
import { SiteStatusClient } from '../../../lib/client/index.js'
import { watch } from '../../helpers/fake-clock.js'
import { answer, budget, manualSleep, standInApi, type StandInRequest } from '../../helpers/stand-in-api.js'

// Retry-After in both of its forms, and stream lines the client cannot read, against a stand-in
// whose answers the test writes. The client's clock is fixed: a Retry-After date is read by it.
const KEY = 'ssk_standin000000000000000000000000000000000000'
const NOW = Date.parse('2026-11-22T06:25:07.000Z')

/** `ms` after NOW as an HTTP-date (IMF-fixdate). */
const httpDate = (ms: number): string => new Date(NOW + ms).toUTCString()

t.test('Retry-After is read as delta-seconds or as an HTTP-date, by the given clock', async (t) => {
  const read = (value: string | undefined) => retryAfterOf(new Headers(value === undefined ? {} : { 'retry-after': value }), NOW)
  t.equal(read('120'), 120)
  t.equal(read(' 7 '), 7)
  t.equal(read(httpDate(30_000)), 30, 'IMF-fixdate')
  t.equal(retryAfterOf(new Headers({ 'retry-after': httpDate(2000) }), NOW + 500), 2, 'a part of a second counts as a whole one')
  t.equal(read('Sunday, 22-Nov-26 06:25:17 GMT'), 10, 'the obsolete RFC 850 form')
  t.equal(read('Sun Nov 22 06:25:12 2026'), 5, 'the obsolete asctime form (GMT)')
  t.equal(read(httpDate(-60_000)), 0, 'a date past: at once')
  for (const value of [undefined, '', 'soon', '-5', '1.5', '12abc']) t.equal(read(value), undefined, `${JSON.stringify(value)} is neither`)
})

t.test('a 503 whose Retry-After is a date is retried at that date, not before', async (t) => {
  const api = await standInApi(t)
  const sleeper = manualSleep()
  const client = new SiteStatusClient({ baseUrl: api.url, key: KEY, sleep: sleeper.sleep, now: () => NOW })
  const call = watch(client.getStatus('a.example.com'))
  answer(await api.next(), 503, { error: 'database unavailable' }, { 'retry-after': httpDate(3000), ...budget(10, 9, 60) })
  t.equal(await sleeper.started(), 3000, 'the client waits until the date')
  t.equal(api.requests.length, 1)
  sleeper.wake()
  answer(await api.next(), 200, { domain: 'a.example.com', status: 'up' }, budget(10, 8, 60))
  t.same(await call.pending, { domain: 'a.example.com', status: 'up' })
})

t.test('a 429 dated further than maxRetryWaitMs fails at once, saying how long in seconds', async (t) => {
  const api = await standInApi(t)
  const sleeper = manualSleep()
  const client = new SiteStatusClient({ baseUrl: api.url, key: KEY, sleep: sleeper.sleep, now: () => NOW, maxRetryWaitMs: 5000 })
  const call = client.listSites()
  answer(await api.next(), 429, { error: 'rate limit exceeded' }, { 'retry-after': httpDate(90_000), ...budget(10, 0, 90) })
  await t.rejects(call, { name: 'SiteStatusError', status: 429, code: 'rate_limited', retryAfterS: 90 })
  t.same(sleeper.calls, [], 'no wait')
})

/** Starts an NDJSON answer: the budget headers, then `text` as written. */
function ndjson(req: StandInRequest, text: string): void {
  req.res.writeHead(200, { 'content-type': 'application/x-ndjson', ...budget(100, 90, 60) })
  req.res.write(text)
}

const line = (domain: string) => JSON.stringify({ domain, status: 'up', locations: [], cached: false }) + '\n'

for (const [what, bad] of [
  ['a line cut short', '{"domain": "b.example.com", "sta'],
  ['a line of JSON that is no object', '[1, 2]'],
  ['an object that is neither a result, an error nor the summary', '{"hello": "world"}']
] as const) {
  t.test(`a batch with ${what} ends with a malformed_answer error and hangs up`, async (t) => {
    const api = await standInApi(t)
    const client = new SiteStatusClient({ baseUrl: api.url, key: KEY })
    const seen: string[] = []
    const reading = (async () => {
      for await (const item of client.checkMany(['a.example.com', 'b.example.com'])) seen.push(item.domain)
    })()
    const req = await api.next()
    ndjson(req, line('a.example.com') + bad + '\n')
    const error = await reading.then(
      () => undefined,
      (err: unknown) => err
    )
    t.ok(error instanceof SiteStatusError, "the client's own error")
    t.match(error, { status: 200, code: 'malformed_answer', message: /batch line/ })
    t.same(seen, ['a.example.com'], 'the lines before it were yielded')
    t.equal(await req.closed, false, 'the request was aborted before the answer ended')
  })
}

/** Answers an event stream with `text` and leaves it open. */
function sse(req: StandInRequest, text: string): void {
  req.res.writeHead(200, { 'content-type': 'text/event-stream', ...budget(100, 99, 60) })
  req.res.write(text)
}

const added = JSON.stringify({ site: { domain: 'a.example.com', name: 'A' }, at: '2026-11-22T06:25:07.123Z' })

for (const [what, bad, message] of [
  ['data that is not JSON', 'id: 8\nevent: site.added\ndata: {"site": \n\n', /not JSON/],
  ['an id that is no number', `id: eight\nevent: site.added\ndata: ${added}\n\n`, /no numeric id/]
] as const) {
  t.test(`an event stream with ${what} ends with a malformed_answer error`, async (t) => {
    const api = await standInApi(t)
    const client = new SiteStatusClient({ baseUrl: api.url, key: KEY })
    const ids: number[] = []
    const reading = (async () => {
      for await (const event of client.streamEvents()) ids.push(event.id)
    })()
    const req = await api.next()
    sse(req, `: hello\n\nid: 7\nevent: site.added\ndata: ${added}\n\n${bad}`)
    await t.rejects(reading, { name: 'SiteStatusError', status: 200, code: 'malformed_answer', message })
    t.same(ids, [7])
    t.equal(await req.closed, false, 'the stream was closed by the client')
  })
}

t.test("a status page event without its domain ends the page's stream with a malformed_answer error", async (t) => {
  const api = await standInApi(t)
  const client = new SiteStatusClient({ baseUrl: api.url })
  const reading = (async () => {
    for await (const _ of client.streamStatusPageEvents('acme'));
  })()
  const req = await api.next()
  t.equal(req.url, '/status/acme/events')
  t.equal(req.headers.authorization, undefined, 'an open route goes without a key')
  sse(req, 'event: outage.opened\ndata: {"name": "Shop", "at": "2026-11-22T06:25:07.123Z"}\n\n')
  await t.rejects(reading, { name: 'SiteStatusError', code: 'malformed_answer', message: /domain/ })
})
