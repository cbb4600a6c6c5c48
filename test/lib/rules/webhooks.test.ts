import t from 'tap'
import { Webhook } from 'standardwebhooks'
import {
  deliveryBody,
  eventDomain,
  judgeAnswer,
  retryDelayMs,
  RETRY_DELAYS_MS,
  signDelivery,
  webhookWants
} from '../../../lib/rules/webhooks.js'

const S = 1000
const M = 60 * S
const H = 60 * M

t.test('the retry schedule: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, then daily while 3 days have not passed', async (t) => {
  const mid = () => 0.5
  const cases: Array<[number, number | null]> = [
    [1, 5 * S],
    [2, 5 * M],
    [3, 30 * M],
    [4, 2 * H],
    [5, 5 * H],
    [6, 10 * H],
    [7, 24 * H],
    [8, 24 * H],
    [9, null],
    [20, null]
  ]
  for (const [attempts, wait] of cases) t.equal(retryDelayMs(attempts, mid), wait, `after ${attempts} failed attempts`)
  const total = RETRY_DELAYS_MS.reduce((a, b) => a + b, 0)
  t.ok(total < 72 * H && total + 24 * H > 72 * H, 'the last retry comes within three days, another day would not')
})

t.test('jitter stretches or shrinks each wait by up to 10%', async (t) => {
  t.equal(
    retryDelayMs(1, () => 0),
    4500
  )
  t.equal(
    retryDelayMs(1, () => 0.999999),
    5500
  )
  t.equal(
    retryDelayMs(6, () => 0),
    9 * H
  )
})

t.test('answers: 2xx delivers, 410 disables, anything else retries', async (t) => {
  const cases: Array<[number, string]> = [
    [200, 'delivered'],
    [202, 'delivered'],
    [204, 'delivered'],
    [299, 'delivered'],
    [301, 'retry'],
    [400, 'retry'],
    [404, 'retry'],
    [410, 'gone'],
    [429, 'retry'],
    [500, 'retry'],
    [503, 'retry']
  ]
  for (const [status, verdict] of cases) t.equal(judgeAnswer(status), verdict, String(status))
})

t.test('the signature is what the standardwebhooks package computes and verifies', async (t) => {
  const secret = `whsec_${Buffer.alloc(32, 42).toString('base64')}`
  const body = deliveryBody({ type: 'site.added', at: new Date('2026-11-24T08:00:00.000Z'), data: '{"site":{"domain":"a.example.com"}}' })
  t.same(JSON.parse(body), { type: 'site.added', timestamp: '2026-11-24T08:00:00.000Z', data: { site: { domain: 'a.example.com' } } })
  const timestamp = Math.floor(Date.now() / 1000)
  const signature = signDelivery({ secret, id: '42', timestamp, body })
  t.equal(signature, new Webhook(secret).sign('42', new Date(timestamp * 1000), body))
  t.ok(new Webhook(secret).verify(body, { 'webhook-id': '42', 'webhook-timestamp': String(timestamp), 'webhook-signature': signature }))
  t.throws(() =>
    new Webhook(secret).verify(body, { 'webhook-id': '43', 'webhook-timestamp': String(timestamp), 'webhook-signature': signature })
  )
  t.throws(() => signDelivery({ secret: 'sk_nope', id: '1', timestamp, body }), /whsec_/)
})

t.test('filters: event types and domains, null meaning all', async (t) => {
  const cases: Array<[string[] | null, string[] | null, string, string | null, boolean]> = [
    [null, null, 'site.added', 'a.example.com', true],
    [['outage.opened'], null, 'site.added', 'a.example.com', false],
    [['outage.opened'], null, 'outage.opened', 'a.example.com', true],
    [null, ['a.example.com'], 'site.added', 'a.example.com', true],
    [null, ['a.example.com'], 'site.added', 'b.example.com', false],
    [null, ['a.example.com'], 'site.added', null, false],
    [['site.removed'], ['a.example.com'], 'site.removed', 'a.example.com', true],
    [['site.removed'], ['a.example.com'], 'site.added', 'a.example.com', false]
  ]
  for (const [events, domains, type, domain, wanted] of cases) {
    t.equal(webhookWants({ events, domains }, { type, domain }), wanted, `${JSON.stringify({ events, domains })} ${type} ${domain}`)
  }
  t.equal(eventDomain({ site: { domain: 'a.example.com', name: 'A' } }), 'a.example.com')
  t.equal(eventDomain({}), null)
  t.equal(eventDomain(null), null)
})
