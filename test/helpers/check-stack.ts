import type { Test } from 'tap'
import type { Server, ServerInjectResponse } from '@hapi/hapi'
import { loadConfig } from '../../config/index.js'
import { createProbing } from '../../lib/probing/build.js'
import type { Locations } from '../../lib/probing/locations/index.js'
import type { CheckResult } from '../../lib/probing/supervisor.js'
import type { Expectations } from '../../lib/rules/expectations.js'
import { createLogger } from '../../lib/logger.js'
import { TEST_ACTORS } from './compiled.js'
import { migratedDb } from './db.js'
import { bearer, testServer } from './server.js'

export interface CheckStack {
  server: Server
  pools: Locations
  key: string
  /** Another key of the same service (checks pass it as `bearer(key)` in their headers). */
  issueKey: (options?: { name?: string; limit?: number | null }) => Promise<string>
  results: CheckResult[]
  /** `extra`: more of the body (`check`, `expect`). */
  check(
    domain: unknown,
    headers?: Record<string, string>,
    extra?: Record<string, unknown>
  ): Promise<{ status: number; body: any; headers: Record<string, unknown>; res: ServerInjectResponse }>
}

/** The real check path: location actors in Piscina pools, the supervisor and the HTTP route, on loopback only. */
export async function checkStack(
  t: Test,
  {
    proxies,
    connectTo,
    timeoutMs = 1500,
    cacheTtlS = 60,
    actorFile = TEST_ACTORS.actorFile,
    keyLimit = 100_000,
    scheduledActors = false,
    lightActors = false,
    engine = 'sqlite',
    siteExpect,
    env: extraEnv = {}
  }: {
    proxies: Array<number | null>
    connectTo: string
    timeoutMs?: number
    cacheTtlS?: number
    /** A compiled actor module (test/helpers/compiled.ts); default the product's. */
    actorFile?: string
    keyLimit?: number
    /** The scheduler's actors of their own (Locations' `scheduledActors`). */
    scheduledActors?: boolean
    /** The light consumers' actors of their own, started with the others (Locations' `lightActors`). */
    lightActors?: boolean
    /** The database the keys live in. */
    engine?: 'sqlite' | 'mysql'
    /** Tracked sites' own expectations (the service reads them from its in-memory states). */
    siteExpect?: (domain: string) => Readonly<Expectations> | null
    /** More settings (DNS_SERVERS, ...). */
    env?: Record<string, string>
  }
): Promise<CheckStack> {
  const locations = proxies.map((port, i) => ({
    label: `Proxy ${i + 1}, Testland`,
    ...(port === null ? {} : { proxy: `http://127.0.0.1:${port}` })
  }))
  const env = {
    LOCATIONS: JSON.stringify(locations),
    CONNECT_TO: connectTo,
    ALLOW_PRIVATE_TARGETS: '1',
    PROBE_TIMEOUT_MS: String(timeoutMs),
    CACHE_TTL_S: String(cacheTtlS),
    ...extraEnv
  }
  const config = loadConfig(env)
  const results: CheckResult[] = []
  const { locations: pools, checks } = createProbing(config, {
    logger: createLogger({ level: 'silent' }),
    userAgent: 'SiteStatusAPI/test',
    ...TEST_ACTORS,
    actorFile,
    scheduledActors,
    lightActors,
    onResult: (r) => results.push(r),
    siteExpect
  })
  t.teardown(() => pools.close())
  await pools.ready({ light: lightActors })
  const { db } = await migratedDb(engine, t)
  const { server, issueKey } = await testServer({ db, env, checks })
  const key = await issueKey({ limit: keyLimit })
  return {
    server,
    pools,
    key,
    issueKey,
    results,
    check: async (domain, headers = {}, extra = {}) => {
      const res = await server.inject({
        method: 'POST',
        url: '/api/v1/check',
        headers: { ...bearer(key), 'content-type': 'application/json', ...headers },
        payload: JSON.stringify({ domain, ...extra })
      })
      return { status: res.statusCode, body: JSON.parse(res.payload), headers: res.headers, res }
    }
  }
}
