import { stat } from 'node:fs/promises'
import { rootCertificates } from 'node:tls'
import { workerData } from 'node:worker_threads'
import { createResolver, type DnsSettings } from '../lib/net/resolver.js'
import { checkHost } from '../lib/net/host-check.js'
import { isAllowedAddress, judgesAddresses, type PolicyRefusalCode, type TargetPolicy } from '../lib/rules/target-policy.js'
import { FairStarts, SCHEDULED_LANE } from './fair-starts.js'
import type { CheckSpec } from '../lib/rules/check-spec.js'
import type { LocationExpectations } from '../lib/rules/expectations.js'
import { probeDnsRecord } from './dns-probe.js'
import { probe, type ProbeResult } from './http-probe.js'
import {
  applyConnectTo,
  createLocationConnector,
  createLocationDispatcher,
  openConnections,
  type ConnectToRule,
  type LocationDispatcherOptions
} from './location-dispatcher.js'
import { probeSocket } from './tcp-probe.js'
import { lowerThreadPriority, threadPriority } from './thread-priority.js'

/** What the pool hands each actor thread once, at start. */
export interface ActorSettings {
  proxy: string | null
  /** Behind the proxy, the proxy resolves the site's name (LOCATIONS `"resolve": "proxy"`). */
  resolveAtProxy: boolean
  connectTo: readonly ConnectToRule[]
  policy: TargetPolicy
  /** The actor's own resolver: DNS_SERVERS (empty: the system's) and the look-up budget. */
  dns: DnsSettings
  timeoutMs: number
  userAgent: string
  /** Nice steps this thread runs below the one that started it (0: the same priority). */
  niceness: number
  /**
   * A certificate authority (PEM) trusted for sites' handshakes besides the system's: tests' own CA.
   * Operators with a private CA set NODE_EXTRA_CA_CERTS instead, which every thread reads.
   */
  extraCa?: string
}

/**
 * A probe of one domain (`userAgent`: the one an agent's central names, instead of the actor's;
 * `id`: a probe that may be cancelled by that id; `expect`: what the check expects of the answer;
 * `check`: a check other than the plain web one, lib/rules/check-spec.ts);
 * a readiness and liveness check (`ping`) that only proves the actor's event loop runs; (`stats`)
 * what the actor holds: the TCP connections it dialled and has not closed; or (`cancel`) the end of
 * a probe nobody waits for any longer.
 */
export type ProbeTask =
  | { domain: string; lane?: string; userAgent?: string; id?: number; expect?: LocationExpectations; check?: CheckSpec }
  | { ping: true }
  | { stats: true }
  | { cancel: number }

/**
 * Probes started between two looks at the thread's I/O. A start costs about 50-200 µs (its dials),
 * so a full turn takes up to about 25 ms. Fewer would cap how fast a thread busy with thousands of
 * sockets can start probes at all (docs/decisions.md, Probing).
 */
export const STARTS_PER_TURN = 128

/**
 * Passed deadlines whose work (the hop ended, its connection closed, the answer built and posted)
 * is done between two looks at the thread's I/O. Probes started together expire together: a flood
 * of checks of hanging sites ends by the thousand in one timers phase, which, done in one piece,
 * would hold the actor for hundreds of ms (docs/decisions.md, Probing).
 */
export const EXPIRIES_PER_TURN = 64

/** The answer to a `stats` task. */
export interface ActorStats {
  connections: number
  /** The actor thread's nice value; null where it cannot be read. */
  nice: number | null
}

const settings = workerData as ActorSettings

// The scheduler's actors run below the rest (LocationPools' `scheduledActors`): when the machine is
// short of CPU, the API and on-demand checks go first. libuv's pool threads inherit the priority of
// the thread that starts them, and the first work queued starts them: queue some first, so that
// whichever thread it is, the pool runs at the priority the process started with.
if (settings.niceness > 0) {
  await stat('.').catch(() => undefined)
  lowerThreadPriority(settings.niceness)
}

// A target's failure is data here, never an exception that leaves the thread, so nobody reads a
// stack: undici and net build several errors per probe (a refused dial, every closed socket), and
// capturing their stacks would be a large share of a probe's CPU.
Error.stackTraceLimit = 0

// The actor's own c-ares channel: look-ups wait on a socket of this thread, never on libuv's pool.
const resolve = createResolver(settings.dns)
const { policy } = settings

/**
 * A proxy that resolves names itself (`resolveAtProxy`) is asked to CONNECT to a name, so every hop
 * is judged beforehand by the name as this machine resolves it, where the connection will go: the
 * connect-to target if a rule matches (HOST2, as the interface says), otherwise the hop's own name.
 * This cannot see what the proxy's resolver answers, which is why the proxy must deny non-public
 * destinations itself. Every other location resolves here and judges the very addresses it dials or
 * asks the proxy to tunnel to.
 */
async function checkProxiedName(host: string, port: number): Promise<PolicyRefusalCode | null> {
  const dial = applyConnectTo(settings.connectTo, host, port)
  const verdict = await checkHost(dial.host, policy, { lookup: resolve })
  return !verdict.ok && verdict.reason === 'non_public' ? 'policy_non_public' : null
}

// The actor's one dispatcher lives as long as the thread; each probe still opens a fresh connection.
// TCP and TLS checks dial through the same resolver, policy, connect-to and proxy.
const dialling: LocationDispatcherOptions = {
  proxy: settings.proxy ?? undefined,
  resolveAtProxy: settings.resolveAtProxy,
  connectTo: settings.connectTo,
  connectTimeoutMs: settings.timeoutMs,
  lookup: resolve,
  tls: settings.extraCa === undefined ? undefined : { ca: [...rootCertificates, settings.extraCa] },
  allowAddress: judgesAddresses(policy) ? (ip) => isAllowedAddress(ip, policy) : undefined
}
const dispatcher = createLocationDispatcher(dialling)
const connector = createLocationConnector(dialling)
const checkTarget = settings.proxy !== null && settings.resolveAtProxy && judgesAddresses(policy) ? checkProxiedName : undefined

const starts = new FairStarts({ perTurn: STARTS_PER_TURN, priority: SCHEDULED_LANE })
const expiries = new FairStarts({ perTurn: EXPIRIES_PER_TURN, priority: SCHEDULED_LANE })
const passed = (): Promise<void> => Promise.resolve()
const onDeadline = (expire: () => void): void => {
  void expiries.run('deadline', passed).then(expire)
}

/** Cancellable probes under way or waiting for their turn, by id: each one's cancel. */
const cancels = new Map<number, () => void>()

// A ping, the stats and a cancel skip the turns: they prove the thread's loop runs, not its backlog.
export default async function run(task: ProbeTask): Promise<ProbeResult | ActorStats | 'pong' | 'cancelled'> {
  if ('ping' in task) return 'pong'
  if ('stats' in task) return { connections: openConnections(), nice: threadPriority() } satisfies ActorStats
  if ('cancel' in task) {
    cancels.get(task.cancel)?.()
    return 'cancelled'
  }
  const { domain, userAgent = settings.userAgent, id, expect, check } = task
  const { timeoutMs } = settings
  const http = check === undefined || check.type === 'http'
  const options = {
    domain,
    dispatcher,
    timeoutMs,
    userAgent,
    checkTarget,
    onDeadline,
    expect,
    ...(check?.type === 'http' ? { request: check, assertions: check.assertions } : {})
  }
  const run = (cancelWith?: (cancel: () => void) => void): Promise<ProbeResult> => {
    if (http) return probe({ ...options, cancelWith })
    if (check.type === 'dns') return probeDnsRecord({ domain, spec: check, dns: settings.dns, timeoutMs })
    return probeSocket({ domain, spec: check, connector, timeoutMs, cancelWith })
  }
  if (id === undefined) return starts.run(task.lane ?? '', () => run())
  // A cancelled probe still waiting for its turn is never started; one under way ends as at its
  // deadline. Its answer is thrown away: whoever cancelled it no longer waits for it.
  let end: (() => void) | null = null
  let cancelled = false
  cancels.set(id, () => {
    cancelled = true
    end?.()
  })
  try {
    return await starts.run(task.lane ?? '', () => (cancelled ? Promise.resolve(CANCELLED) : run((cancel) => (end = cancel))))
  } finally {
    cancels.delete(id)
  }
}

const CANCELLED: ProbeResult = {
  status: 'error',
  http_code: 0,
  response_ms: 0,
  error: 'probe cancelled',
  code: null,
  final_url: null,
  timings: { dns: 0, connect: 0, tls: 0, first_byte: 0, total: 0 }
}
