/**
 * A monitor's identity (`monitor:<slug>`) is what the scheduler probes and the recorder records,
 * never what the locations dial: the supervisor's `siteTarget` seam sends its target host, with its
 * own check, through the target policy and CONNECT_TO; a check of the same host asked on demand is
 * the host's own, never the monitor's.
 */
import t from 'tap'
import type { CheckResult } from '../../../lib/probing/check-result.js'
import type { LocationResult } from '../../../lib/probing/locations/index.js'
import { CheckSupervisor, type Prober } from '../../../lib/probing/supervisor.js'
import type { CheckSpec } from '../../../lib/rules/check-spec.js'

const TCP: CheckSpec = { type: 'tcp', port: 5432, send: null, expect_prefix: null, tls: false, assertions: [] }

function recording(): Prober & { asked: Array<{ host: string; check: CheckSpec | undefined }> } {
  const prober = {
    asked: [] as Array<{ host: string; check: CheckSpec | undefined }>,
    async probeAll(host: string, _lane?: string, _light?: boolean, _signal?: AbortSignal, _expect?: unknown, check?: CheckSpec) {
      prober.asked.push({ host, check })
      return [1, 2, 3].map((n): LocationResult => ({
        location: `L ${n}, X`,
        status: 'up',
        http_code: 0,
        response_ms: 5,
        error: null,
        final_url: null,
        timings: { dns: 0, connect: 1, tls: 0, first_byte: 0, total: 5 }
      }))
    }
  }
  return prober
}

const seams = {
  siteTarget: (domain: string) => (domain === 'monitor:orders-db' ? 'db.example.com' : null),
  siteCheck: (domain: string) => (domain === 'monitor:orders-db' ? TCP : null)
}

t.test("the scheduler probes a monitor's target with its check, recorded under its identity", async (t) => {
  const prober = recording()
  const recorded: CheckResult[] = []
  const checks = new CheckSupervisor({
    prober,
    cacheTtlS: 60,
    policy: { allowPrivate: false },
    connectTo: [],
    lookup: async () => ['8.8.8.8'],
    onResult: (result) => recorded.push(result),
    ...seams
  })
  const result = await checks.probeNow('monitor:orders-db')
  t.same(prober.asked, [{ host: 'db.example.com', check: TCP }], 'the locations are sent the target and the check')
  t.match(result, { domain: 'monitor:orders-db', status: 'up', check: { type: 'tcp', port: 5432 } })
  t.same(
    recorded.map((r) => r.domain),
    ['monitor:orders-db'],
    'recorded under the identity'
  )

  const demand = await checks.check('db.example.com')
  t.same(prober.asked[1], { host: 'db.example.com', check: undefined }, 'on demand the host is a web check, as ever')
  t.equal(demand.check, undefined)
  t.same(
    recorded.map((r) => r.domain),
    ['monitor:orders-db', 'db.example.com'],
    "and its result is the host's, never the monitor's"
  )
})

t.test("the target policy judges the target as CONNECT_TO dials it, at the monitor's port", async (t) => {
  const prober = recording()
  const checks = new CheckSupervisor({
    prober,
    cacheTtlS: 0,
    policy: { allowPrivate: false },
    connectTo: [{ host1: 'db.example.com', port1: 5432, host2: '127.0.0.1', port2: 15432 }],
    lookup: async () => ['8.8.8.8'],
    ...seams
  })
  t.equal(await checks.probeNow('monitor:orders-db'), null, 'a loopback target is refused before any location is asked')
  t.same(prober.asked, [])
  await t.resolves(checks.check('db.example.com'), 'the host itself at :443 is not mapped')
  await t.rejects(checks.check('db.example.com', { check: TCP }), { message: /non-public/ }, 'on demand, that port is refused the same way')
})
