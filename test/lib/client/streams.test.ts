import t from 'tap'
import { readLines } from '../../../lib/client/lines.js'
import { isBatchCheckError, SiteStatusClient, type BatchCheckItem } from '../../../lib/client/index.js'
import { answer, budget, standInApi } from '../../helpers/stand-in-api.js'

// The batch route streams NDJSON; until it is merged here, a stand-in speaks its contract
// (lib/openapi/schemas/checks.ts): a line per domain as it completes, the summary last.
const KEY = 'ssk_standin000000000000000000000000000000000000'

const result = (domain: string) => ({
  domain,
  status: 'up',
  locations_answered: 1,
  locations_total: 1,
  response_ms: 12,
  cached: false,
  locations: [],
  checked_at: '2026-11-22T06:25:07.123Z',
  partial: false,
  blocked: false
})
const badLine = { domain: 'not a domain', error: 'domain must be a hostname', code: 'invalid_domain' }
const summary = { domains: 3, checked: 2, cached: 0, errors: 1 }

function streamOf(chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const c of chunks) controller.enqueue(c)
      controller.close()
    }
  })
}

t.test('lines are whole whatever the chunks: split mid-line, mid-character, with CRLF, the last without a newline', async (t) => {
  const text = '{"a":"bücher"}\r\n{"b":2}\n\n{"c":3}'
  const bytes = new TextEncoder().encode(text)
  const umlaut = text.indexOf('ü') + 1 // inside the two bytes of ü
  const cuts = [1, umlaut, umlaut + 1, 14, 15, 16, bytes.length - 1]
  const chunks = [0, ...cuts].map((from, i) => bytes.slice(from, cuts[i] ?? bytes.length))
  const lines: string[] = []
  for await (const line of readLines(streamOf(chunks))) lines.push(line)
  t.same(lines, ['{"a":"bücher"}', '{"b":2}', '', '{"c":3}'])
})

t.test('checkMany yields each line as it arrives and keeps the summary apart', async (t) => {
  const api = await standInApi(t)
  const client = new SiteStatusClient({ baseUrl: api.url, key: KEY })
  const batch = client.checkMany(['a.example.com', 'B.example.com', 'https://a.example.com/', 'not a domain'])
  const seen: BatchCheckItem[] = []
  const served = (async () => {
    const req = await api.next()
    t.equal(req.method, 'POST')
    t.equal(req.url, '/api/v1/checks')
    t.equal(req.headers.accept, 'application/x-ndjson')
    t.equal(req.headers.authorization, `Bearer ${KEY}`)
    t.same(JSON.parse(req.body), { domains: ['a.example.com', 'B.example.com', 'https://a.example.com/', 'not a domain'] })
    t.equal(client.budget, undefined, 'the budget is not known before the first answer')
    req.res.writeHead(200, { 'content-type': 'application/x-ndjson', ...budget(100, 90, 60) })
    // Each line in two pieces, the second sent only once the client has read the one before.
    for (const line of [result('a.example.com'), badLine, result('b.example.com'), { summary }].map((l) => JSON.stringify(l) + '\n')) {
      const read = seen.length
      req.res.write(line.slice(0, 7))
      await new Promise((resolve) => setImmediate(resolve))
      req.res.write(line.slice(7))
      if (!line.includes('"summary"')) while (seen.length === read) await new Promise((resolve) => setImmediate(resolve))
    }
    req.res.end()
  })()
  t.equal(batch.summary, undefined)
  for await (const line of batch) seen.push(line)
  await served
  t.same(
    seen.map((l) => l.domain),
    ['a.example.com', 'not a domain', 'b.example.com']
  )
  t.same(
    seen.map((l) => isBatchCheckError(l)),
    [false, true, false],
    'an error line is told apart by its code'
  )
  t.same(batch.summary, summary, 'the summary, once the stream ended')
  t.match(client.budget, { limit: 100, remaining: 90, pending: 0 }, 'the budget read from the answer')
})

t.test('checkMany holds 5 units per distinct valid domain while the batch is under way', async (t) => {
  const api = await standInApi(t)
  const client = new SiteStatusClient({ baseUrl: api.url, key: KEY })
  // Learn the budget first: a batch then goes with its cost held.
  const first = client.getRateLimit()
  answer(await api.next(), 200, {}, budget(100, 100, 0))
  await first
  const batch = client.checkMany(['a.example.com', 'A.EXAMPLE.COM.', 'https://a.example.com/x', 'b.example.com', 'not a domain'])
  const iterating = batch.next()
  const req = await api.next()
  t.equal(client.budget?.pending, 10, 'a.example.com in three spellings counts once; the invalid entry costs nothing')
  req.res.writeHead(200, { 'content-type': 'application/x-ndjson', ...budget(100, 90, 60) })
  req.res.end(JSON.stringify({ summary: { domains: 3, checked: 2, cached: 0, errors: 1 } }) + '\n')
  t.same(await iterating, { done: true, value: { domains: 3, checked: 2, cached: 0, errors: 1 } }, 'the summary is the return value')
  t.match(client.budget, { remaining: 90, pending: 0 })
})

t.test('leaving the loop early aborts the request: the server sees the client go', async (t) => {
  const api = await standInApi(t)
  const client = new SiteStatusClient({ baseUrl: api.url, key: KEY })
  const batch = client.checkMany(['a.example.com', 'b.example.com'])
  const served = (async () => {
    const req = await api.next()
    req.res.writeHead(200, { 'content-type': 'application/x-ndjson', ...budget(100, 90, 60) })
    req.res.write(JSON.stringify(result('a.example.com')) + '\n')
    return req
  })()
  for await (const line of batch) {
    t.equal(line.domain, 'a.example.com')
    break
  }
  const req = await served
  t.equal(await req.closed, false, 'the connection closed before the answer was complete')
  t.equal(batch.summary, undefined, 'no summary for a batch left early')
})

t.test('aborting the signal mid-stream ends the loop with its reason and the request with it', async (t) => {
  const api = await standInApi(t)
  const client = new SiteStatusClient({ baseUrl: api.url, key: KEY })
  const controller = new AbortController()
  const batch = client.checkMany(['a.example.com', 'b.example.com'], { signal: controller.signal })
  const served = (async () => {
    const req = await api.next()
    req.res.writeHead(200, { 'content-type': 'application/x-ndjson', ...budget(100, 90, 60) })
    req.res.write(JSON.stringify(result('a.example.com')) + '\n')
    return req
  })()
  const lines: string[] = []
  await t.rejects(
    (async () => {
      for await (const line of batch) {
        lines.push(line.domain)
        controller.abort(new Error('enough'))
      }
    })(),
    { message: 'enough' }
  )
  t.same(lines, ['a.example.com'])
  t.equal(await (await served).closed, false, 'the server saw the request go before its end')
})

t.test('a stream that ends before its summary is an error, not a short batch', async (t) => {
  const api = await standInApi(t)
  const client = new SiteStatusClient({ baseUrl: api.url, key: KEY })
  const lines: string[] = []
  const reading = (async () => {
    for await (const line of client.checkMany(['a.example.com', 'b.example.com'])) lines.push(line.domain)
  })()
  const req = await api.next()
  req.res.writeHead(200, { 'content-type': 'application/x-ndjson', ...budget(100, 90, 60) })
  req.res.end(JSON.stringify(result('a.example.com')) + '\n')
  await t.rejects(reading, { name: 'SiteStatusError', status: 0, code: 'network_error' })
  t.same(lines, ['a.example.com'])
})

t.test('checkDomains answers the whole batch as one object', async (t) => {
  const api = await standInApi(t)
  const client = new SiteStatusClient({ baseUrl: api.url, key: KEY })
  const pending = client.checkDomains(['a.example.com', 'not a domain'])
  const req = await api.next()
  t.equal(req.headers.accept, 'application/json')
  const body = { results: [result('a.example.com'), badLine], summary: { domains: 2, checked: 1, cached: 0, errors: 1 } }
  answer(req, 200, body, budget(100, 95, 60))
  t.same(await pending, body)
})

t.test('streamEvents yields typed events across chunks, skips comments, and closes when left', async (t) => {
  const api = await standInApi(t)
  const client = new SiteStatusClient({ baseUrl: api.url, key: KEY })
  const events = client.streamEvents({ lastEventId: 41 })
  const served = (async () => {
    const req = await api.next()
    t.equal(req.headers['last-event-id'], '41')
    t.equal(req.headers.accept, 'text/event-stream')
    req.res.writeHead(200, { 'content-type': 'text/event-stream', ...budget(100, 99, 60) })
    const data = { site: { domain: 'a.example.com', name: 'A' }, at: '2026-11-22T06:25:07.123Z' }
    const text = `: replaying after 41\n\nid: 42\nevent: site.added\ndata: ${JSON.stringify(data)}\n\n: keep-alive\n\nid: 43\nevent: site.removed\ndata: ${JSON.stringify(data)}\n\n`
    for (let at = 0; at < text.length; at += 9) {
      req.res.write(text.slice(at, at + 9))
      await new Promise((resolve) => setImmediate(resolve))
    }
    return req
  })()
  const seen: Array<{ id: number; type: string; domain: string }> = []
  for await (const event of events) {
    if (event.type === 'site.added' || event.type === 'site.removed')
      seen.push({ id: event.id, type: event.type, domain: event.data.site.domain })
    if (seen.length === 2) break
  }
  t.same(seen, [
    { id: 42, type: 'site.added', domain: 'a.example.com' },
    { id: 43, type: 'site.removed', domain: 'a.example.com' }
  ])
  t.equal(await (await served).closed, false, 'leaving the loop closed the stream')
})
