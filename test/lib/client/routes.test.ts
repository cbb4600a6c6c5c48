import t from 'tap'
import { batchCost, batchDomain, costOf, isKeyed, isRetried } from '../../../lib/client/routes.js'
import { tryNormaliseDomain } from '../../../lib/rules/domain.js'
import { serviceDocument } from '../../../scripts/client-schema.js'

// The client's table of routes (which take the key, what they cost) against the document it was
// generated from, and its count of a batch's domains against the server's own rule.
type Operation = { operationId: string; security?: Array<Record<string, string[]>> }
const document = serviceDocument() as { security: Operation['security']; paths: Record<string, Record<string, Operation>> }

t.test('the client sends the key exactly to the operations whose security asks for the bearer key', async (t) => {
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const security = operation.security ?? document.security ?? []
      const bearer = security.some((requirement) => 'bearerAuth' in requirement)
      t.equal(isKeyed(path), bearer, `${method.toUpperCase()} ${path} (${operation.operationId}): ${bearer ? 'keyed' : 'open'}`)
    }
  }
})

t.test(
  "costs as the document's info says: a check 5, a batch 5 per distinct domain, rate_limit and metrics nothing, the rest 1",
  async (t) => {
    t.equal(costOf('/api/v1/check'), 5)
    t.equal(costOf('/api/v1/rate_limit'), 0)
    t.equal(costOf('/metrics'), 0)
    const ones = Object.keys(document.paths).filter(
      (p) => p.startsWith('/api/v1/') && !['/api/v1/check', '/api/v1/checks', '/api/v1/rate_limit'].includes(p)
    )
    t.ok(ones.length > 10)
    for (const path of ones) t.equal(costOf(path), 1, path)
    t.equal(batchCost(['a.example.com', 'A.Example.COM.', 'https://a.example.com/', 'b.example.com', 'not a domain', 42]), 10)
    const tcp = { type: 'tcp', port: 5432 }
    t.equal(
      batchCost([
        'a.example.com',
        { domain: 'a.example.com' },
        { domain: 'a.example.com', check: tcp },
        { domain: 'A.example.com', check: tcp },
        { domain: 'x y' }
      ]),
      10,
      'a domain with a check of its own counts apart, once'
    )
    t.equal(isRetried('/healthz'), false, 'a degraded instance answers 503 at once')
    t.equal(isRetried('/api/v1/status/{domain}'), true)
  }
)

t.test("a batch's domains are counted as the server counts them, without the server's rule", async (t) => {
  const spellings = [
    'example.com',
    'EXAMPLE.com',
    'example.com.',
    ' example.com ',
    'http://example.com',
    'HTTPS://Example.com/',
    'sub.domain.example.co.uk',
    'xn--bcher-kva.de',
    'Bücher.de',
    'https://BÜCHER.de/',
    'ｅｘａｍｐｌｅ。com',
    'a-b.example.com',
    `${'a'.repeat(63)}.example.com`,
    // refused
    `${'a'.repeat(64)}.example.com`,
    `${'a.'.repeat(127)}com`,
    'not a domain',
    'localhost',
    '127.0.0.1',
    '127.1',
    '0x7f000001',
    'example.123',
    '[::1]',
    '::1',
    'example.com:8080',
    'user@example.com',
    'ftp://example.com',
    'javascript:alert(1)',
    'https://example.com/path',
    'example.com?q=1',
    'example.com#top',
    '-a.example.com',
    'a-.example.com',
    'a..example.com',
    '.example.com',
    'exa_mple.com',
    'http://',
    '',
    '   '
  ]
  let refused = 0
  for (const entry of spellings) {
    const server = tryNormaliseDomain(entry)
    if (!server.ok) refused++
    t.equal(
      batchDomain(entry),
      server.ok ? server.domain : undefined,
      `${JSON.stringify(entry)}: ${server.ok ? server.domain : server.error.code}`
    )
  }
  t.ok(refused > 20, 'the table holds refusals of every kind')
  t.equal(batchDomain('x'.repeat(3000)), undefined)
})
