import { workerData } from 'node:worker_threads'
import { checkHost, POLICY_REFUSAL } from '../lib/checks/target-policy.js'
import { probe, type ProbeResult } from './http-probe.js'
import { applyConnectTo, createLocationDispatcher, type ConnectToRule } from './location-dispatcher.js'

/** What the pool hands each actor thread once, at start. */
export interface ActorSettings {
  proxy: string | null
  connectTo: readonly ConnectToRule[]
  allowPrivate: boolean
  allowRanges: readonly string[]
  timeoutMs: number
  userAgent: string
}

/** A probe of one domain, or (`ping`) a readiness check that only proves the actor is up. */
export type ProbeTask = { domain: string } | { ping: true }

const settings = workerData as ActorSettings

/**
 * Every hop is judged where the connection will really go: the connect-to target if a rule
 * matches (HOST2's address, as the interface says), otherwise the hop's own name.
 */
async function checkTarget(host: string, port: number): Promise<string | null> {
  const dial = applyConnectTo(settings.connectTo, host, port)
  const verdict = await checkHost(dial.host, { allowPrivate: settings.allowPrivate, allowRanges: settings.allowRanges })
  return !verdict.ok && verdict.reason === 'non_public' ? POLICY_REFUSAL : null
}

// The actor's one dispatcher lives as long as the thread; each probe still opens a fresh connection.
const dispatcher = createLocationDispatcher({
  proxy: settings.proxy ?? undefined,
  connectTo: settings.connectTo,
  connectTimeoutMs: settings.timeoutMs
})

export default async function run(task: ProbeTask): Promise<ProbeResult | 'pong'> {
  if ('ping' in task) return 'pong'
  return probe({ domain: task.domain, dispatcher, timeoutMs: settings.timeoutMs, userAgent: settings.userAgent, checkTarget })
}
