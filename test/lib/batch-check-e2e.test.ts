import t from 'tap'
import type { BatchCheckItem, BatchCheckSummary } from '../../lib/client/index.js'
import { generateKey, hashKey } from '../../lib/keys.js'
import { createKey } from '../../lib/store/keys.js'
import { apiClient } from '../helpers/api-client.js'
import { matchesOpenApi } from '../helpers/openapi.js'
import { holds } from '../helpers/poll.js'
import { heldTarget } from '../helpers/held-target.js'
import { startTrackedService, type TrackedService } from '../helpers/tracked-service.js'
import { engines } from '../helpers/db.js'

const TRACKED = { domain: 'tracked.example.com', name: 'Tracked' }
const LOCATIONS = 3

async function extraKey(tracked: TrackedService, name: string, limit = 100_000, scopes?: string): Promise<string> {
  const key = generateKey()
  await createKey({ db: tracked.service.db, name, keyHash: hashKey(key), rateLimit: limit, scopes, now: new Date() })
  return key
}

/**
 * Raw requests through inject, for the answers checked against the OpenAPI document (matchesOpenApi
 * reads an inject response) and for the budget's refusals, which the client's own budget would
 * pre-empt; everything else goes through the client over the listening port.
 */
function api(tracked: TrackedService) {
  const { server } = tracked.service
  return {
    batch: (key: string, domains: unknown, accept = 'application/x-ndjson') =>
      server.inject({
        method: 'POST',
        url: '/api/v1/checks',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(accept === '' ? {} : { accept }) },
        payload: JSON.stringify({ domains })
      }),
    check: (key: string, domain: string) =>
      server.inject({
        method: 'POST',
        url: '/api/v1/check',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ domain })
      }),
    used: async (key: string): Promise<number> =>
      JSON.parse((await server.inject({ url: '/api/v1/rate_limit', headers: { authorization: `Bearer ${key}` } })).payload).used
  }
}

const lines = (payload: string): any[] =>
  payload
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l))

/**
 * A batch read through the client as its lines arrive, the summary line last; `abort` hangs up.
 * `done` resolves with the answer's status (undefined when none came before the hang-up).
 */
function streamBatch(tracked: TrackedService, key: string, domains: string[]) {
  const client = apiClient(tracked.service.server.info.uri, key)
  const controller = new AbortController()
  const received: Array<BatchCheckItem | { summary: BatchCheckSummary }> = []
  const done = (async () => {
    const batch = client.checkMany(domains, { signal: controller.signal })
    try {
      for await (const line of batch) received.push(line)
      if (batch.summary) received.push({ summary: batch.summary })
    } catch (err) {
      if (!controller.signal.aborted) throw err
    }
    return client.statuses.at(-1)
  })()
  return {
    received,
    done,
    abort: () => {
      controller.abort()
    }
  }
}

for (const engine of engines()) {
  t.test(`${engine}: a batch of 100 answers each distinct domain on its own line, costs counted exactly`, async (t) => {
    const target = await heldTarget(t)
    const tracked = await startTrackedService(t, {
      engine,
      site: TRACKED,
      env: ({ closed }) => ({
        // 300 probes at once beside the other test files: a 1 s deadline (the helper's) measured the
        // machine's load, not the batch (a run with heavy neighbours saw a third of them time out).
        PROBE_TIMEOUT_MS: '5000',
        DENY_TARGETS: '127.0.0.2/32',
        CONNECT_TO: `private.batch.test:443:127.0.0.2:443,:443:127.0.0.1:${closed},:80:127.0.0.1:${target.port}`
      })
    })
    const { batch } = api(tracked)
    const key = await extraKey(tracked, 'batch')
    const client = apiClient(tracked.service.server.info.uri, key)
    const used = async (): Promise<number> => (await client.getRateLimit()).used
    await client.checkDomain('cached.batch.test')
    t.equal(client.statuses.at(-1), 200, 'a domain checked a moment ago')
    const fresh = Array.from({ length: 95 }, (_, i) => `d${i}.batch.test`)
    const entries = [...fresh, 'D0.batch.test', 'https://d1.batch.test/', 'not a domain!', 'private.batch.test', 'cached.batch.test']
    t.equal(entries.length, 100)
    const before = await used()

    const res = await batch(key, entries)
    t.equal(res.statusCode, 200)
    t.match(res.headers['content-type'], /^application\/x-ndjson/)
    matchesOpenApi(t, res, 'every line')
    const answer = lines(res.payload)
    const summary = answer.pop()
    t.same(summary, { summary: { domains: 98, checked: 96, cached: 1, errors: 2 } })
    t.equal(answer.length, 98, 'one line per distinct entry: the duplicates after normalisation are checked once')
    const byDomain = new Map(answer.map((l) => [l.domain, l]))
    t.equal(byDomain.size, 98)
    for (const domain of fresh) t.match(byDomain.get(domain), { status: 'up', cached: false, locations_answered: LOCATIONS })
    t.match(byDomain.get('cached.batch.test'), { status: 'up', cached: true })
    t.same(byDomain.get('not a domain!'), { domain: 'not a domain!', error: byDomain.get('not a domain!')?.error, code: 'invalid_domain' })
    t.match(byDomain.get('private.batch.test'), { code: 'non_public_target', error: 'domain resolves to a non-public address' })
    t.ok(
      fresh.every((d) => target.seen(d) === LOCATIONS),
      'each domain probed once per location, the duplicates too'
    )
    t.equal(target.seen('cached.batch.test'), LOCATIONS, 'the cached domain is not probed again')
    t.equal(target.seen('private.batch.test'), 0)
    // 97 distinct valid domains charged up front (485 units); the refused one's 5 given back.
    t.equal((await used()) - before, 5 * 96, 'charged 5 per distinct domain checked, the refused one refunded')

    const json = await batch(key, ['d2.batch.test', 'D2.BATCH.TEST', '-bad-'], '')
    t.equal(json.statusCode, 200)
    t.match(json.headers['content-type'], /^application\/json/)
    matchesOpenApi(t, json)
    t.match(JSON.parse(json.payload), {
      results: [
        { domain: '-bad-', code: 'invalid_domain' },
        { domain: 'd2.batch.test', cached: true }
      ],
      summary: { domains: 2, checked: 1, cached: 1, errors: 1 }
    })
    t.equal(target.seen('d2.batch.test'), LOCATIONS, 'reuse is shared with the single checks and batches before')
  })
}

for (const engine of engines()) {
  t.test(`${engine}: a batch the budget does not cover is refused whole; a bad body is 400`, async (t) => {
    const tracked = await startTrackedService(t, { engine, site: TRACKED, env: {} })
    const { batch, check, used } = api(tracked)
    const key = await extraKey(tracked, 'small', 50)
    const domains = (n: number) => Array.from({ length: n }, (_, i) => `b${i}.budget.test`)

    const over = await batch(key, domains(11))
    t.equal(over.statusCode, 429)
    matchesOpenApi(t, over)
    t.match(JSON.parse(over.payload), {
      fits: 10,
      error: /costs 55 units \(11 domains\), more than this key's limit of 50 per minute, so waiting will not help: send at most 10 domains/
    })
    t.equal(over.headers['ratelimit-remaining'], '50')
    t.equal(over.headers['retry-after'], undefined, 'no Retry-After: no wait makes it fit')
    t.equal(await used(key), 0, 'nothing charged')

    for (const d of ['one.budget.test', 'two.budget.test', 'three.budget.test', 'four.budget.test'])
      t.equal((await check(key, d)).statusCode, 200)
    const partly = await batch(key, [...domains(7), 'b0.budget.test'])
    t.equal(partly.statusCode, 429)
    t.match(JSON.parse(partly.payload), { fits: 6, error: /costs 35 units \(7 domains\) and this key has 30 left/ })
    t.equal(Number(partly.headers['retry-after']) > 0 && Number(partly.headers['retry-after']) <= 60, true)
    t.equal((await batch(key, domains(6))).statusCode, 200, 'what fits passes')
    t.equal(await used(key), 50)

    for (const [what, body] of [
      ['not a list', 'example.com'],
      ['an empty list', []],
      ['101 domains', domains(101)],
      ['a list of numbers', [1, 2]]
    ] as const) {
      const res = await batch(key, body)
      t.equal(res.statusCode, 400, what)
      matchesOpenApi(t, res, what)
    }
    const noBody = await tracked.service.server.inject({
      method: 'POST',
      url: '/api/v1/checks',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'text/plain' },
      payload: 'example.com'
    })
    t.equal(noBody.statusCode, 415)
    const readOnly = await extraKey(tracked, 'reader', 100, 'read')
    t.equal((await batch(readOnly, domains(1))).statusCode, 403, 'the check scope is needed')
  })

  t.test(`${engine}: a batch larger than the key share waits for its slots: no 503, never over the share`, async (t) => {
    const target = await heldTarget(t)
    const tracked = await startTrackedService(t, {
      engine,
      site: TRACKED,
      // 12 slots: 3 for the scheduler, 9 on demand, 4 per key.
      env: ({ closed }) => ({ MAX_CHECKS_IN_FLIGHT: '12', CONNECT_TO: `:443:127.0.0.1:${closed},:80:127.0.0.1:${target.port}` })
    })
    const { admission } = tracked.service
    let most = 0
    void target.when(() => {
      most = Math.max(most, admission.stats().demand)
      return false
    })
    const refusedBefore = admission.stats().refusedKey
    const domains = Array.from({ length: 30 }, (_, i) => `w${i}.wait.test`)
    const client = apiClient(tracked.service.server.info.uri, tracked.key)
    const batch = client.checkMany(domains)
    const answer: BatchCheckItem[] = []
    for await (const line of batch) answer.push(line)
    t.equal(client.statuses.at(-1), 200)
    t.same(batch.summary, { domains: 30, checked: 30, cached: 0, errors: 0 })
    t.ok(
      answer.every((l) => 'status' in l && l.status === 'up'),
      'every domain checked'
    )
    t.equal(admission.stats().refusedKey, refusedBefore, 'none refused')
    t.ok(most >= 1 && most <= admission.keySlots, `at most the key's share in flight (${most} of ${admission.keySlots})`)
    t.equal(admission.waiting, 0)
  })

  t.test(`${engine}: another key keeps its share and its turn; a client that hangs up ends the probing only it waited for`, async (t) => {
    const target = await heldTarget(t)
    const tracked = await startTrackedService(t, {
      engine,
      site: TRACKED,
      // A held site would be given up on after 20 s: every probe ended here is ended by the hang-up.
      env: ({ closed }) => ({
        MAX_CHECKS_IN_FLIGHT: '12',
        PROBE_TIMEOUT_MS: '20000',
        CONNECT_TO: `:443:127.0.0.1:${closed},:80:127.0.0.1:${target.port}`
      })
    })
    const { admission } = tracked.service
    const other = apiClient(tracked.service.server.info.uri, await extraKey(tracked, 'other'))
    const refusedBefore = admission.stats().refusedKey + admission.stats().refusedInstance

    // The other key is already waiting for one of the batch's domains.
    const sharedCheck = other.checkDomain('shared.held.test')
    await target.when(() => target.seen('shared.held.test') === LOCATIONS)
    const xs = Array.from({ length: 9 }, (_, i) => `x${i + 1}.held.test`)
    const stream = streamBatch(tracked, tracked.key, ['shared.held.test', ...xs])
    const inFlight = xs.slice(0, 4)
    await target.when(() => inFlight.every((d) => target.seen(d) === LOCATIONS))
    t.match(admission.stats(), { demand: 5 }, "the batch holds its key's share (4), the other key its check")
    t.equal(admission.waiting, 5, 'the rest of the batch waits')

    // Probe order: the other key's check reaches the site before any of the batch's waiting domains.
    const quick = await other.checkDomain('quick.instant.test')
    t.equal(other.statuses.at(-1), 200)
    t.match(quick, { status: 'up' })
    t.same(
      [...new Set(target.arrivals.slice(0, target.arrivals.indexOf('quick.instant.test')))].filter((h) => h !== TRACKED.domain).sort(),
      ['shared.held.test', ...inFlight].sort(),
      'nothing of the batch but its share went first'
    )

    const hungUp = Date.now()
    stream.abort()
    t.equal(await stream.done, 200)
    await target.when(() => inFlight.every((d) => target.closes.filter((h) => h === d).length === LOCATIONS))
    t.ok(Date.now() - hungUp < 10_000, 'the probes only the batch waited for ended at once, long before their deadline')
    t.ok(await holds(() => admission.stats().demand === 1 && admission.waiting === 0, 5000), 'their slots are free, nothing waits')
    t.equal(target.closes.filter((h) => h === 'shared.held.test').length, 0, 'the domain the other key waits for is still being probed')

    await other.checkDomain('after.instant.test')
    t.equal(other.statuses.at(-1), 200)
    t.equal(
      xs.slice(4).reduce((n, d) => n + target.seen(d), 0),
      0,
      'the domains that were waiting were never probed'
    )
    target.release('shared.held.test')
    const shared = await sharedCheck
    t.equal(other.statuses.at(-1), 200)
    t.match(shared, { status: 'up', cached: false })

    // What was cancelled was neither kept nor recorded: checking it again probes it.
    const again = other.checkDomain('x1.held.test')
    await target.when(() => target.seen('x1.held.test') === 2 * LOCATIONS)
    target.release('x1.held.test')
    t.match(await again, { status: 'up', cached: false })
    t.equal(admission.stats().refusedKey + admission.stats().refusedInstance, refusedBefore, 'nobody was refused')
    t.same(stream.received, [], 'the hung-up client got no line: nothing of its batch had completed')
  })

  t.test(`${engine}: a client that hangs up on a batch answered as one JSON object ends its probing too`, async (t) => {
    const target = await heldTarget(t)
    const tracked = await startTrackedService(t, {
      engine,
      site: TRACKED,
      env: ({ closed }) => ({ PROBE_TIMEOUT_MS: '20000', CONNECT_TO: `:443:127.0.0.1:${closed},:80:127.0.0.1:${target.port}` })
    })
    const client = apiClient(tracked.service.server.info.uri, tracked.key)
    const held = ['j1.held.test', 'j2.held.test']
    const hangUp = new AbortController()
    const answer = client.checkDomains([...held, 'quick.instant.test'], { signal: hangUp.signal })
    await target.when(() => held.every((d) => target.seen(d) === LOCATIONS) && target.seen('quick.instant.test') === LOCATIONS)
    const hungUp = Date.now()
    hangUp.abort(new Error('hung up'))
    await t.rejects(answer, { message: 'hung up' })
    await target.when(() => held.every((d) => target.closes.filter((h) => h === d).length === LOCATIONS))
    t.ok(Date.now() - hungUp < 10_000, 'the held probes ended at once, long before their deadline')
    t.ok(await holds(() => tracked.service.admission.stats().demand === 0, 5000), 'their slots are free')
  })
}
