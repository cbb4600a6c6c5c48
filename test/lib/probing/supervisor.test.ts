import FakeTimers from '@sinonjs/fake-timers'
import t from 'tap'
import {
  CheckSupervisor,
  CHECKS_PER_TURN,
  checkKey,
  laneOf,
  TargetPolicyError,
  type Outcome,
  type Prober,
  type SharedRuns
} from '../../../lib/probing/supervisor.js'
import type { Expectations, LocationExpectations } from '../../../lib/rules/expectations.js'
import { Admission, HEAVY_KEY_MEMORY_MS, LIGHT_KEY_CHECKS } from '../../../lib/probing/admission.js'
import { SCHEDULED_LANE } from '../../../workers/fair-starts.js'
import type { LocationAnswer, LocationErrorCode, LocationResult } from '../../../lib/probing/locations/index.js'
import { PORT_ERROR, PORT_REFUSAL } from '../../../lib/rules/target-policy.js'

/** A prober that answers `up` from three locations after `delayMs`, counting its runs. */
function counting(delayMs = 20): Prober & { runs: number } {
  const prober = {
    runs: 0,
    async probeAll(domain: string): Promise<LocationResult[]> {
      prober.runs++
      await new Promise((resolve) => setTimeout(resolve, delayMs))
      return [1, 2, 3].map((n) => ({
        location: `L ${n}, X`,
        status: 'up',
        http_code: 200,
        response_ms: 10 * n,
        error: null,
        final_url: `https://${domain}/`,
        timings: { dns: 0, connect: 1, tls: 1, first_byte: 1, total: 10 * n }
      }))
    }
  }
  return prober
}

const options = { cacheTtlS: 60, policy: { allowPrivate: true }, connectTo: [], lookup: async () => ['8.8.8.8'] }

/** A prober whose second location answers with `code` (and `error`); the others are up. */
function answering(code: LocationErrorCode, error: string): Prober {
  return {
    async probeAll(domain: string): Promise<LocationAnswer[]> {
      return [1, 2, 3].map((n) => ({
        location: `L ${n}, X`,
        status: n === 2 ? 'down' : 'up',
        http_code: 200,
        response_ms: 10,
        error: n === 2 ? error : null,
        code: n === 2 ? code : null,
        final_url: `https://${domain}/`,
        timings: { dns: 0, connect: 1, tls: 1, first_byte: 1, total: 10 }
      }))
    }
  }
}

t.test('on-demand results are reused; scheduled ones are not kept', async (t) => {
  const prober = counting()
  const seen: string[] = []
  const checks = new CheckSupervisor({ ...options, prober, onResult: (r, source) => seen.push(`${r.domain} ${source}`) })
  await checks.probeNow('a.example.com')
  t.equal((await checks.check('a.example.com')).cached, false, 'a scheduled result is not served to an on-demand check')
  t.equal((await checks.check('a.example.com')).cached, true, 'an on-demand result is')
  await checks.probeNow('a.example.com')
  t.equal(prober.runs, 3, 'the scheduler always probes')
  t.same(
    seen,
    ['a.example.com schedule', 'a.example.com demand', 'a.example.com schedule'],
    'every fresh result reaches the recording seam once'
  )
})

t.test('a scheduled check joins an on-demand run already under way', async (t) => {
  const prober = counting(100)
  const checks = new CheckSupervisor({ ...options, prober })
  const [demand, scheduled] = await Promise.all([checks.check('b.example.com'), checks.probeNow('b.example.com')])
  t.equal(prober.runs, 1)
  t.equal(demand.checked_at, scheduled?.checked_at)
  t.equal(demand.response_ms, 20, 'the median of the locations')
})

t.test('a resolver that never answers holds a check up only until the lookup deadline', async (t) => {
  const clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout'] })
  t.teardown(() => {
    clock.uninstall()
  })
  const prober = counting(1)
  const never = (): Promise<string[]> => new Promise(() => {})
  const checks = new CheckSupervisor({ ...options, policy: { allowPrivate: false }, prober, lookup: never, lookupTimeoutMs: 200 })
  let answered = false
  const checking = checks.check('hung-dns.example.com').finally(() => {
    answered = true
  })
  await clock.tickAsync(199)
  t.equal(prober.runs, 0, 'no location is asked before the lookup deadline')
  await clock.tickAsync(1)
  t.equal(prober.runs, 1, 'the locations are asked at the deadline, without the resolver having answered')
  t.notOk(answered, 'and the check waits for them')
  await clock.tickAsync(1)
  t.equal((await checking).status, 'up')
})

t.test('a name resolving to a non-public address is still refused before probing', async (t) => {
  const prober = counting(1)
  const checks = new CheckSupervisor({
    ...options,
    policy: { allowPrivate: false },
    prober,
    lookup: async () => ['10.1.2.3'],
    lookupTimeoutMs: 200
  })
  await t.rejects(checks.check('inside.example.com'), { code: 'non_public_target' })
  t.equal(prober.runs, 0)
})

t.test('a location refused by the policy makes the whole check a refusal saying why, by its code', async (t) => {
  const checks = new CheckSupervisor({ ...options, prober: answering('policy_port', PORT_REFUSAL) })
  await t.rejects(checks.check('port.example.com'), new TargetPolicyError(PORT_ERROR))
  await t.rejects(checks.check('port.example.com'), { code: 'non_public_target' }, 'the refusal is cached like a result')
  t.equal(await checks.probeNow('port.example.com'), null, 'and the scheduler is told there is nothing to record')
})

t.test('the same text without the code is an ordinary error', async (t) => {
  const checks = new CheckSupervisor({ ...options, prober: answering('http_5xx', PORT_REFUSAL) })
  t.match(await checks.check('text.example.com'), { status: 'up', locations: [{}, { error: PORT_REFUSAL }, {}] })
})

t.test('a check cut short by the stop is answered but not recorded; each location carries its code beside its error', async (t) => {
  const seen: string[] = []
  const checks = new CheckSupervisor({
    ...options,
    prober: answering('location_stopping', 'location: service stopping'),
    onResult: (r) => seen.push(r.domain)
  })
  const result = await checks.check('stopping.example.com')
  t.match(result.locations[1], { status: 'down', error: 'location: service stopping' })
  t.same(seen, [], 'nothing reached the recording seam')
  t.match(result.locations[1], { code: 'location_stopping' }, 'a stable code beside the error text')
  const fresh = new CheckSupervisor({ ...options, prober: answering('http_5xx', 'http: 503'), onResult: (r) => seen.push(r.domain) })
  const recorded: LocationResult[] = (await fresh.check('down.example.com')).locations
  t.same(seen, ['down.example.com'], 'an ordinary result is recorded')
  t.same(
    Object.keys(recorded[1] as object),
    ['location', 'status', 'http_code', 'response_ms', 'error', 'code', 'final_url', 'timings'],
    'in the fields and order the API shows'
  )
})

t.test('each check is probed in its lane: the scheduler’s, or its key’s', async (t) => {
  const lanes: Array<[string, string | undefined]> = []
  const inner = counting(1)
  const prober: Prober = {
    probeAll(domain, lane) {
      lanes.push([domain, lane])
      return inner.probeAll(domain)
    }
  }
  const checks = new CheckSupervisor({ ...options, prober })
  await checks.probeNow('a.example.com')
  await checks.check('b.example.com', { key: '7' })
  await checks.check('c.example.com', { key: '8' })
  await checks.check('d.example.com')
  t.same(lanes, [
    ['a.example.com', SCHEDULED_LANE],
    ['b.example.com', 'key:7'],
    ['c.example.com', 'key:8'],
    ['d.example.com', 'key:']
  ])
  t.equal(laneOf('demand', '7'), 'key:7')
  t.equal(laneOf('schedule', '7'), SCHEDULED_LANE, 'a scheduled check is the scheduler’s whoever asked')
})

t.test('a key holding few checks is a light consumer: its checks go to the light actors', async (t) => {
  const sent: Array<[string, string | undefined, boolean | undefined]> = []
  const hanging: Array<() => void> = []
  const inner = counting(0)
  const prober: Prober = {
    async probeAll(domain, lane, light) {
      sent.push([domain, lane, light])
      // The heavy key's checks stay in flight until released, holding their slots.
      if (domain.startsWith('h')) await new Promise<void>((resolve) => hanging.push(resolve))
      return inner.probeAll(domain, lane)
    }
  }
  let now = 0
  const admission = new Admission({ capacity: 1000, keyShare: 0.5, maxCheckMs: 10_000, now: () => now })
  const checks = new CheckSupervisor({ ...options, cacheTtlS: 0, prober, admission })
  const heavy = Array.from({ length: LIGHT_KEY_CHECKS + 2 }, (_, i) => checks.check(`h${i}.example.com`, { key: 'heavy' }))
  await t.resolves(checks.check('other.example.com', { key: 'light' }))
  await checks.probeNow('scheduled.example.com')
  await checks.check('nokey.example.com')
  const light = (domain: string) => sent.find(([d]) => d === domain)?.[2]
  t.same(
    heavy.map((_, i) => light(`h${i}.example.com`)),
    [...Array.from({ length: LIGHT_KEY_CHECKS }, () => true), false, false],
    `the heavy key's first ${LIGHT_KEY_CHECKS} checks were light; once it held more, not`
  )
  t.equal(light('other.example.com'), true, 'another key with one check is light while the first holds many')
  t.equal(light('scheduled.example.com'), false, 'a scheduled check is never light: it has actors of its own')
  t.equal(light('nokey.example.com'), false, 'a check on behalf of no key is not light')
  for (const release of hanging) release()
  await Promise.all(heavy)
  // Between bursts a heavy consumer holds almost nothing: it stays heavy for a while.
  now += HEAVY_KEY_MEMORY_MS - 1
  await checks.check('between.example.com', { key: 'heavy' })
  t.equal(light('between.example.com'), false, 'right after its checks have ended, the heavy key is still heavy')
  now += HEAVY_KEY_MEMORY_MS
  await checks.check('again.example.com', { key: 'heavy' })
  t.equal(
    light('again.example.com'),
    true,
    `once it has held at most ${LIGHT_KEY_CHECKS} for ${HEAVY_KEY_MEMORY_MS} ms, the heavy key is light again`
  )
  t.equal(admission.heldBy('heavy'), 0, 'and holds nothing')
})

t.test('without admission no check is light', async (t) => {
  const sent: Array<boolean | undefined> = []
  const inner = counting(0)
  const checks = new CheckSupervisor({
    ...options,
    prober: {
      probeAll(domain, lane, light) {
        sent.push(light)
        return inner.probeAll(domain, lane)
      }
    }
  })
  await checks.check('a.example.com', { key: '1' })
  t.same(sent, [false])
})

t.test('one key’s flood of checks does not hold up another key’s check on this thread', async (t) => {
  const handedOver: string[] = []
  const inner = counting(0)
  const prober: Prober = {
    probeAll(domain, lane) {
      handedOver.push(domain)
      return inner.probeAll(domain, lane)
    }
  }
  const checks = new CheckSupervisor({ ...options, cacheTtlS: 0, prober })
  const answered: string[] = []
  const asked = [
    ...Array.from({ length: 600 }, (_, i) => checks.check(`h${i}.example.com`, { key: '1' })),
    checks.check('light.example.com', { key: '2' })
  ].map((p) => p.then((r) => answered.push(r.domain)))
  await Promise.all(asked)
  t.equal(handedOver.length, 601, 'every check was handed to the locations')
  // First come, first served, the light check would be the 601st both times; in turns, it goes in
  // the turn after the first (a turn's worth go at once, with nothing waiting yet).
  const over = handedOver.indexOf('light.example.com')
  const done = answered.indexOf('light.example.com')
  t.ok(over >= 0 && over < CHECKS_PER_TURN + 8, `handed over ${over + 1}th of 601`)
  t.ok(done >= 0 && done < CHECKS_PER_TURN + 8, `answered ${done + 1}th of 601`)
})

t.test('expectations travel to the locations and key the reuse and single flight', async (t) => {
  const asked: Array<LocationExpectations | undefined> = []
  const inner = counting(50)
  const prober: Prober = {
    probeAll(domain, lane, light, signal, expect) {
      asked.push(expect)
      return inner.probeAll(domain, lane, light, signal)
    }
  }
  const seen: string[] = []
  const checks = new CheckSupervisor({ ...options, prober, onResult: (r, source) => seen.push(`${r.domain} ${source}`) })
  const keyword: Expectations = { status: null, body_contains: 'Sign in', max_response_ms: null }
  const fast: Expectations = { status: null, body_contains: null, max_response_ms: 15 }
  const [withKeyword, scheduled, plain] = await Promise.all([
    checks.check('e.example.com', { expect: keyword }),
    checks.probeNow('e.example.com'),
    checks.check('e.example.com')
  ])
  t.equal(inner.runs, 2, 'the scheduled and the plain check share a run; the one with expectations has its own')
  t.equal(scheduled?.checked_at, plain.checked_at)
  t.same(asked, [{ status: null, body_contains: 'Sign in' }, undefined], 'only the part judged at the locations travels')
  t.notOk('slow' in withKeyword, 'no slow without max_response_ms')
  t.equal((await checks.check('e.example.com', { expect: { ...keyword } })).cached, true, 'the same expectations reuse it')
  const slow = await checks.check('e.example.com', { expect: fast })
  t.match(slow, { cached: false, slow: true, response_ms: 20 }, 'over max_response_ms: slow')
  t.equal(asked.at(-1), undefined, 'max_response_ms alone asks the locations nothing')
  t.same(seen, ['e.example.com schedule'], 'results judged by a check’s own expectations are not recorded')
})

t.test('runs shared across instances are keyed as the local ones', async (t) => {
  const keys: string[] = []
  const shared: SharedRuns<Outcome> = {
    async cached(key) {
      keys.push(key)
      return null
    },
    async run(key, probe) {
      keys.push(key)
      return { value: (await probe()).value, ran: true }
    }
  }
  const checks = new CheckSupervisor({ ...options, prober: counting(), shared })
  const expect: Expectations = { status: [401], body_contains: null, max_response_ms: null }
  await checks.check('f.example.com')
  await checks.check('f.example.com', { expect })
  t.same(keys, ['f.example.com', 'f.example.com', checkKey('f.example.com', expect), checkKey('f.example.com', expect)])
  t.equal(checkKey('f.example.com', null), 'f.example.com', 'a check without expectations keeps the bare domain')
  t.notOk(checkKey('f.example.com', expect).includes('\n'), 'no newline: check-runs messages split on the first')
})
