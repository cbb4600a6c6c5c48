import t from 'tap'
import { evaluateJsonPath, MAX_MATCHES, parseJsonPath } from '../../../lib/rules/json-path.js'

const doc = {
  status: 'ok',
  'odd key': 1,
  items: [
    { id: 1, tags: ['a'] },
    { id: 2, tags: [] },
    { id: 3, nested: { id: 30 } }
  ],
  meta: { id: 'm' }
}

t.test('a path reads what JSONPath reads', async (t) => {
  const rows: Array<[string, unknown[]]> = [
    ['$', [doc]],
    ['$.status', ['ok']],
    ["$['odd key']", [1]],
    ['$["status"]', ['ok']],
    ['$.items[0].id', [1]],
    ['$.items[-1].id', [3]],
    ['$.items[9].id', []],
    ['$.items[*].id', [1, 2, 3]],
    ['$.items.*.id', [1, 2, 3]],
    ['$..id', [1, 2, 3, 30, 'm']],
    ['$.missing.deeper', []],
    ['$.status.length', []],
    ['$.items[0].tags[0]', ['a']]
  ]
  for (const [path, want] of rows) {
    const parsed = parseJsonPath(path)
    t.not(parsed, null, `${path} parses`)
    if (parsed !== null) t.same(evaluateJsonPath(parsed, doc), want, path)
  }
})

t.test('what is not a path is refused, never run', async (t) => {
  for (const path of ['status', '$.', '$[', "$['a]", '$[?(@.id > 1)]', '$.a()', '$[1:2]', '$..', `$.${'a'.repeat(300)}`]) {
    t.equal(parseJsonPath(path), null, path)
  }
})

t.test('a 1 MiB body is evaluated within its bounds, in time and memory', async (t) => {
  // 1 MiB of nested objects and arrays, every one holding `id`.
  const big = { items: Array.from({ length: 20_000 }, (_, i) => ({ id: i, children: [{ id: -i }, { id: `x${i}` }] })) }
  const text = JSON.stringify(big)
  t.ok(text.length >= 1024 * 1024, `${text.length} bytes`)
  const parsed = parseJsonPath('$..id')!
  const started = performance.now()
  const found = evaluateJsonPath(parsed, JSON.parse(text))
  const ms = performance.now() - started
  t.equal(found.length, MAX_MATCHES, 'at most 1,000 values kept')
  t.ok(ms < 2000, `evaluated in ${Math.round(ms)} ms, bounded by the visits it may make`)
  t.same(evaluateJsonPath(parseJsonPath('$.items[19999].children[1].id')!, big), ['x19999'])
})
