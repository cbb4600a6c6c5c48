import t from 'tap'
import { compare, failedAssertion, type Answered, type Assertion } from '../../../lib/rules/assertions.js'

const json = (value: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(value))
const answered = (over: Partial<Answered> = {}): Answered => ({
  status: 200,
  headers: { 'content-type': 'application/json; charset=utf-8', 'x-ids': ['1', '2'] },
  body: json({ status: 'ok', count: 3, items: ['a', 'b'], empty: [], none: null }),
  responseMs: 120,
  certificateDays: 30,
  ...over
})
const a = (
  source: Assertion['source'],
  comparison: Assertion['comparison'],
  target: string | null,
  property: string | null = null
): Assertion => ({
  source,
  property,
  comparison,
  target
})

t.test('every source and comparison, passing and failing', async (t) => {
  const rows: Array<[Assertion, boolean]> = [
    [a('status_code', 'equals', '200'), true],
    [a('status_code', 'equals', '201'), false],
    [a('status_code', 'not_equals', '500'), true],
    [a('status_code', 'less_than', '300'), true],
    [a('status_code', 'greater_than', '299'), false],
    [a('status_code', 'matches', '^2\\d\\d$'), true],
    [a('header', 'contains', 'json', 'Content-Type'), true],
    [a('header', 'not_contains', 'xml', 'content-type'), true],
    [a('header', 'equals', '1, 2', 'x-ids'), true],
    [a('header', 'is_empty', null, 'x-missing'), true],
    [a('header', 'not_empty', null, 'x-missing'), false],
    [a('header', 'equals', 'x', 'x-missing'), false],
    [a('header', 'not_equals', 'x', 'x-missing'), true],
    [a('json_body', 'equals', 'ok', '$.status'), true],
    [a('json_body', 'equals', 'degraded', '$.status'), false],
    [a('json_body', 'not_equals', 'degraded', '$.status'), true],
    [a('json_body', 'equals', '3', '$.count'), true],
    [a('json_body', 'greater_than', '2', '$.count'), true],
    [a('json_body', 'less_than', '3', '$.count'), false],
    [a('json_body', 'contains', 'b', '$.items'), true],
    [a('json_body', 'not_contains', 'c', '$.items'), true],
    [a('json_body', 'is_empty', null, '$.empty'), true],
    [a('json_body', 'is_empty', null, '$.none'), true],
    [a('json_body', 'is_empty', null, '$.absent'), true],
    [a('json_body', 'not_empty', null, '$.items'), true],
    [a('json_body', 'matches', '^o', '$.status'), true],
    [a('text_body', 'contains', '"status":"ok"'), true],
    [a('text_body', 'not_contains', 'error'), true],
    [a('text_body', 'equals', 'ok'), false],
    [a('text_body', 'matches', '"count":\\s*3'), true],
    [a('text_body', 'not_empty', null), true],
    [a('response_time', 'less_than', '500'), true],
    [a('response_time', 'greater_than', '500'), false],
    [a('certificate_days', 'greater_than', '14'), true],
    [a('certificate_days', 'less_than', '14'), false]
  ]
  for (const [assertion, passes] of rows) {
    const failed = failedAssertion([assertion], answered())
    t.equal(failed === null, passes, `${assertion.source} ${assertion.property ?? ''} ${assertion.comparison} ${assertion.target ?? ''}`)
  }
})

t.test('the first failing assertion is named, with what was seen', async (t) => {
  const list = [a('status_code', 'equals', '200'), a('json_body', 'equals', 'ok', '$.status'), a('response_time', 'less_than', '50')]
  t.same(failedAssertion(list, answered({ body: json({ status: 'degraded' }) })), {
    index: 1,
    error: 'assert: json_body $.status equals "ok" (got "degraded")'
  })
  t.same(failedAssertion(list.slice(0, 2), answered()), null)
  t.match(failedAssertion([a('json_body', 'equals', 'ok', '$.status')], answered({ body: new TextEncoder().encode('<html>') })), {
    error: /got a body that is not JSON/
  })
  t.match(failedAssertion([a('certificate_days', 'greater_than', '7')], answered({ certificateDays: null })), { error: /got nothing/ })
})

t.test('a pathological regular expression runs in linear time (RE2: no backtracking)', async (t) => {
  // (a+)+$ against a's and one b takes a backtracking engine exponential time; RE2 reads the text once.
  const text = `${'a'.repeat(64 * 1024 - 1)}b`
  const started = performance.now()
  t.equal(compare(text, 'matches', '(a+)+$'), false)
  t.equal(compare(text, 'matches', '(a|aa)*c'), false)
  const ms = performance.now() - started
  t.ok(ms < 1000, `64 KiB judged in ${Math.round(ms)} ms`)
  t.equal(compare('x'.repeat(200_000) + 'needle', 'matches', 'needle'), false, 'past the first 64 KiB nothing is read')
})
