import t, { type Test } from 'tap'
import type { RequestRoute } from '@hapi/hapi'
import { SCOPES, type Scope } from '../../../lib/rules/scopes.js'
import { engines, migratedDb } from '../../helpers/db.js'
import { matchesOpenApi } from '../../helpers/openapi.js'
import { bearer, everyRouteServer } from '../../helpers/server.js'

/** Keyed routes open to any valid key on purpose: a key may always ask what budget it has left. */
const OPEN = new Set(['GET /api/v1/rate_limit'])

/** Every non-empty subset of the scopes. */
const COMBINATIONS: Scope[][] = Array.from({ length: 2 ** SCOPES.length - 1 }, (_, i) => SCOPES.filter((_s, bit) => ((i + 1) >> bit) & 1))

/**
 * The scopes a route declares, as hapi keeps them after setting the route up: the key strategies it
 * names (`api-key:<scope>`, see requireScope) and any hapi `auth.access.scope`, each named once.
 */
function declaredScopes(route: RequestRoute): string[] {
  const auth: unknown = route.settings.auth
  if (typeof auth !== 'object' || auth === null) return []
  const { strategies = [], access = [] } = auth as {
    strategies?: string[]
    access?: Array<{ scope?: { selection?: string[]; required?: string[] } | false }>
  }
  const byStrategy = strategies.flatMap((name) => (name.startsWith('api-key:') ? [name.slice('api-key:'.length)] : []))
  const byAccess = access.flatMap((a) => (a.scope ? [...(a.scope.selection ?? []), ...(a.scope.required ?? [])] : []))
  return [...new Set([...byStrategy, ...byAccess])]
}

async function scopedServer(engine: 'sqlite' | 'mysql', t: Test) {
  const { db, url } = await migratedDb(engine, t)
  return everyRouteServer(t, { db, env: { DATABASE_URL: url } })
}

/**
 * Where a route is asked: its path with placeholders filled. A stream let in would never end, so
 * the events route is asked with an invalid `since`: the scope is judged before validation, so a
 * key let in gets 400 and one refused still gets 403.
 */
function urlOf(path: string): string {
  const url = path.replace('{domain}', 'unscoped-test.example.com').replace(/\{[^}]+\}/g, '1')
  return path === '/api/v1/events' ? `${url}?since=not-an-id` : url
}

for (const engine of engines()) {
  t.test(`every keyed route declares a scope and refuses keys without it, on ${engine}`, async (t) => {
    const { server, issueKey } = await scopedServer(engine, t)
    const keyed = server.table().filter((r) => (r.settings.auth as unknown) !== false)
    t.ok(keyed.length >= 6, 'the route table has its keyed routes')
    const required = new Map<string, Scope | null>()
    for (const route of keyed) {
      const name = `${route.method.toUpperCase()} ${route.path}`
      const scopes = declaredScopes(route)
      if (OPEN.has(name)) {
        t.same(scopes, [], `${name} is open to any key`)
        required.set(name, null)
        continue
      }
      t.equal(scopes.length, 1, `${name} declares one scope`)
      t.ok(SCOPES.includes(scopes[0] as Scope), `${name}'s scope is one a key can hold`)
      required.set(name, scopes[0] as Scope)
    }
    t.same(
      Object.fromEntries([...required].filter(([name]) => !OPEN.has(name))),
      {
        'POST /api/v1/check': 'check',
        'POST /api/v1/checks': 'check',
        'GET /api/v1/status/{domain}': 'read',
        'GET /api/v1/outages': 'read',
        'GET /api/v1/sites': 'read',
        'POST /api/v1/sites': 'manage',
        'PATCH /api/v1/sites/{domain}': 'manage',
        'DELETE /api/v1/sites/{domain}': 'manage',
        'GET /api/v1/sites/{domain}/sla': 'read',
        'GET /api/v1/sites/{domain}/maintenance': 'read',
        'GET /api/v1/heartbeats': 'read',
        'GET /api/v1/heartbeats/{slug}': 'read',
        'POST /api/v1/heartbeats': 'manage',
        'POST /api/v1/config/plan': 'manage',
        'POST /api/v1/config/apply': 'manage',
        'POST /api/v1/heartbeats/{slug}/token': 'manage',
        'PATCH /api/v1/heartbeats/{slug}': 'manage',
        'DELETE /api/v1/heartbeats/{slug}': 'manage',
        // Monitors of kind tcp, tls and dns (issue 47).
        'GET /api/v1/monitors': 'read',
        'POST /api/v1/monitors': 'manage',
        'GET /api/v1/monitors/{slug}': 'read',
        'PATCH /api/v1/monitors/{slug}': 'manage',
        'DELETE /api/v1/monitors/{slug}': 'manage',
        'GET /api/v1/monitors/{slug}/status': 'read',
        'GET /api/v1/monitors/{slug}/sla': 'read',
        'GET /api/v1/monitors/{slug}/maintenance': 'read',
        'POST /api/v1/monitors/{slug}/maintenance': 'manage',
        'DELETE /api/v1/monitors/{slug}/maintenance/{id}': 'manage',
        'POST /api/v1/sites/{domain}/maintenance': 'manage',
        'DELETE /api/v1/sites/{domain}/maintenance/{id}': 'manage',
        'POST /api/v1/pages': 'manage',
        'GET /api/v1/pages': 'read',
        'GET /api/v1/pages/{slug}': 'read',
        'PATCH /api/v1/pages/{slug}': 'manage',
        'DELETE /api/v1/pages/{slug}': 'manage',
        'GET /api/v1/events': 'read',
        'POST /api/v1/webhooks': 'manage',
        'GET /api/v1/webhooks': 'manage',
        'DELETE /api/v1/webhooks/{id}': 'manage',
        'GET /api/v1/webhooks/{id}/deliveries': 'manage',
        'POST /api/v1/webhooks/{id}/deliveries/{delivery_id}/retry': 'manage',
        // Alerting (issue 49): everything is `manage`.
        'POST /api/v1/channels': 'manage',
        'GET /api/v1/channels': 'manage',
        'GET /api/v1/channels/{id}': 'manage',
        'PATCH /api/v1/channels/{id}': 'manage',
        'DELETE /api/v1/channels/{id}': 'manage',
        'POST /api/v1/channels/{id}/test': 'manage',
        'GET /api/v1/channels/{id}/deliveries': 'manage',
        'POST /api/v1/alert-policies': 'manage',
        'GET /api/v1/alert-policies': 'manage',
        'GET /api/v1/alert-policies/{id}': 'manage',
        'PATCH /api/v1/alert-policies/{id}': 'manage',
        'DELETE /api/v1/alert-policies/{id}': 'manage',
        'GET /api/v1/sites/{domain}/alerting': 'manage',
        'PUT /api/v1/sites/{domain}/alerting': 'manage',
        'GET /api/v1/pages/{slug}/alerting': 'manage',
        'PUT /api/v1/pages/{slug}/alerting': 'manage',
        'GET /metrics': 'read'
      },
      'the scopes the interface names'
    )

    for (const scopes of COMBINATIONS) {
      const key = await issueKey({ name: scopes.join('+'), limit: 10_000, scopes: scopes.join(',') })
      for (const route of keyed) {
        const name = `${route.method.toUpperCase()} ${route.path}`
        const need = required.get(name) ?? null
        const url = urlOf(route.path)
        const budget = async () =>
          Number(JSON.parse((await server.inject({ url: '/api/v1/rate_limit', headers: bearer(key) })).payload).remaining)
        const before = await budget()
        const res = await server.inject({
          method: route.method,
          url,
          headers: {
            ...bearer(key),
            ...(route.method === 'get' || route.method === 'delete' ? {} : { 'content-type': 'application/json' })
          },
          payload: route.method === 'get' || route.method === 'delete' ? undefined : '{}'
        })
        const what = `${name} with a ${scopes.join(',')} key`
        if (need === null || scopes.includes(need)) {
          t.not(res.statusCode, 403, `${what} is let in (${res.statusCode})`)
          continue
        }
        t.equal(res.statusCode, 403, `${what} is refused`)
        t.match(res.headers['content-type'], /^application\/json/, `${what}: JSON`)
        t.match(JSON.parse(res.payload), { error: new RegExp(`"${need}" scope`) }, `${what}: the error names the scope needed`)
        t.equal(Number(res.headers['ratelimit-remaining']), before, `${what}: the 403 shows the budget untouched`)
        t.equal(await budget(), before, `${what}: and consumed nothing`)
        matchesOpenApi(t, res, `${what}: the 403`)
      }
    }
  })
}

t.test('a key refused for its scope keeps its whole budget for the routes it may use', async (t) => {
  const { server, issueKey, logs } = await scopedServer('sqlite', t)
  const key = await issueKey({ limit: 3, scopes: 'read' })
  for (let i = 0; i < 5; i++) {
    const res = await server.inject({ method: 'POST', url: '/api/v1/sites', headers: bearer(key), payload: { domain: 'example.com' } })
    t.equal(res.statusCode, 403, `refused attempt ${i + 1} is 403, not 429`)
    t.equal(
      JSON.parse(res.payload).error,
      'this API key lacks the "manage" scope this route needs (the key\'s scopes: read)',
      'a clear message instead of hapi\'s "Insufficient scope"'
    )
  }
  const codes: number[] = []
  for (let i = 0; i < 4; i++) codes.push((await server.inject({ url: '/api/v1/sites', headers: bearer(key) })).statusCode)
  t.same(codes, [200, 200, 200, 429], 'all three units are left for reading, then the limit applies')
  t.notOk(
    logs.lines.some((l) => l.includes('ssk_')),
    'no key reaches the log'
  )
})
