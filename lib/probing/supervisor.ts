import { LRUCache } from 'lru-cache'
import type { ConnectToRule } from '../../config/index.js'
import { isRefusal, type Admission, type Ticket } from './admission.js'
import { CapacityError, TargetPolicyError } from './check-errors.js'
import { applyConnectTo } from '../rules/connect-to.js'
import { decide } from '../rules/consensus.js'
import type { Expectations, LocationExpectations } from '../rules/expectations.js'
import { shownCheck, type CheckSpec } from '../rules/check-spec.js'
import { ask, judgedAtLocations, slowField, type Ask, type SharedRuns } from './check-asks.js'
import { resultOf, reused, type CheckResult, type Outcome } from './check-result.js'

export type { SharedRuns } from './check-asks.js'
import type { LocationAnswer, LocationResult } from './locations/index.js'
import { FairStarts, SCHEDULED_LANE } from '../../workers/fair-starts.js'
import { checkHost } from '../net/host-check.js'
import type { Resolve } from '../net/resolver.js'
import { isPolicyRefusal, NON_PUBLIC_ERROR, POLICY_ERRORS, type TargetPolicy } from '../rules/target-policy.js'

export { CapacityError, TargetPolicyError } from './check-errors.js'
export { checkKey } from './check-asks.js'
export type { CheckResult, Outcome } from './check-result.js'

const UNCOUNTED: Ticket = { release: () => {} }

/**
 * Checks handed to the actors, or answered once they have, between two looks at the main thread's
 * I/O when several lanes wait (see {@link FairStarts}). Answering one (the verdict, the answer's
 * JSON and its write) takes a few hundred µs, so a full turn takes up to about 20 ms.
 */
export const CHECKS_PER_TURN = 64

const ready = (): Promise<void> => Promise.resolve()

/** Anything that can ask every location about a domain: the Piscina actors in production. */
export interface Prober {
  /** `lane`: whose check it is, {@link SCHEDULED_LANE} or a key's (see {@link laneOf}). */
  probeAll(
    domain: string,
    lane?: string,
    light?: boolean,
    signal?: AbortSignal,
    expect?: LocationExpectations,
    check?: CheckSpec
  ): Promise<LocationAnswer[]>
}

/**
 * The lane a check's work is taken in, on the main thread and in the actors
 * (workers/fair-starts.ts): the scheduler's, which goes first, or the key's own, so that one
 * key's backlog does not hold up another's check.
 */
export function laneOf(source: 'demand' | 'schedule', key: string | undefined): string {
  return source === 'schedule' ? SCHEDULED_LANE : `key:${key ?? ''}`
}

export interface SupervisorOptions {
  prober: Prober
  cacheTtlS: number
  /** The target policy a domain is judged by before any location is asked. */
  policy: TargetPolicy
  connectTo: readonly ConnectToRule[]
  now?: () => Date
  /** Resolves names for the target policy (the service passes its DNS_SERVERS resolver; default: the system's). */
  lookup?: Resolve
  /**
   * How long the policy's look-up of the name may take before the check goes on without it (the
   * probe deadline, PROBE_TIMEOUT_MS, in the service). The actors still judge every address they dial.
   */
  lookupTimeoutMs?: number
  /**
   * The recording seam: every fresh (not cached) result is handed here, but for on-demand checks
   * given expectations (judged by a rule that may not be the site's). The monitoring side records
   * it when the domain is tracked; failures there must not fail the check.
   */
  onResult?: (result: CheckResult, source: 'demand' | 'schedule') => void
  /** A tracked site's own expectations (normal form; null when it sets none or is not tracked). */
  siteExpect?: (domain: string) => Readonly<Expectations> | null
  /** A tracked site's own request and assertions (null: the plain web check, or not tracked). */
  siteCheck?: (domain: string) => CheckSpec | null
  /**
   * The host a tracked monitor's identity (`monitor:<slug>`) probes; null for anything else, whose
   * domain is its host. Only the scheduler asks about such an identity: no API takes one as a domain.
   */
  siteTarget?: (domain: string) => string | null
  /** MAX_CHECKS_IN_FLIGHT's gate; without one (some tests) every check is admitted. */
  admission?: Admission
  /** With REDIS_URL: on-demand results and their probe runs shared with the other instances. */
  shared?: SharedRuns<Outcome>
}

/** A probe run under way, and who waits for it. */
interface Run {
  outcome: Promise<Outcome>
  /** Batch checks waiting for it that may still give up ({@link CheckSupervisor.checkWhenFree}). */
  waiters: number
  /** Someone who never gives up waits for it too: a single check or the scheduler. */
  held: boolean
  /** Ends the run once nobody waits for it; only a run a batch started has one. */
  abort: AbortController | null
}

/**
 * Runs on-demand checks: reuses a result younger than the cache TTL, lets concurrent checks of
 * one domain share a single probe run, and merges the locations' answers into a verdict.
 */
export class CheckSupervisor {
  readonly #opts: SupervisorOptions
  readonly #policy: TargetPolicy
  readonly #cache: LRUCache<string, Outcome> | null
  readonly #inFlight = new Map<string, Run>()
  readonly #now: () => Date
  readonly #turns = new FairStarts({ perTurn: CHECKS_PER_TURN, priority: SCHEDULED_LANE })
  #purgedAt = performance.now()

  constructor(opts: SupervisorOptions) {
    this.#opts = opts
    this.#policy = opts.policy
    this.#now = opts.now ?? (() => new Date())
    this.#cache = opts.cacheTtlS > 0 ? new LRUCache<string, Outcome>({ max: 10_000, ttl: opts.cacheTtlS * 1000 }) : null
  }

  /** How many on-demand outcomes the cache holds, stale ones included. */
  cachedOutcomes(): number {
    return this.#cache?.size ?? 0
  }

  /**
   * Checks a normalised domain now from every location, on behalf of `key` (its share of the
   * capacity). Throws TargetPolicyError for a non-public target, and CapacityError, at once, when a
   * new probe run would exceed the capacity; a cached result or a run already under way costs none.
   * `expect`: the expectations (normal form) the locations judge the answers by.
   */
  async check(
    domain: string,
    { key, expect = null, check = null }: { key?: string; expect?: Readonly<Expectations> | null; check?: CheckSpec | null } = {}
  ): Promise<CheckResult> {
    const outcome = await this.#outcome(this.#ask(domain, expect, check), key)
    if (!outcome.ok) throw new TargetPolicyError(outcome.error)
    return outcome.result
  }

  /**
   * The scheduler's check: always probes, joining a run already under way for the domain. Returns
   * null when the policy refused it.
   */
  async probeNow(domain: string): Promise<CheckResult | null> {
    const outcome = await this.#shared(this.#ask(domain, null), 'schedule', undefined)
    return outcome.ok ? outcome.result : null
  }

  /**
   * A batch's check: as {@link check}, but a new probe run waits for a slot of the key's share
   * instead of being refused, and the wait ends when `signal` aborts (rejecting with its reason).
   * A run that nobody else waits for then ends too: its probes are cancelled, nothing is kept.
   */
  async checkWhenFree(
    domain: string,
    {
      key,
      signal,
      expect = null,
      check = null
    }: { key?: string; signal: AbortSignal; expect?: Readonly<Expectations> | null; check?: CheckSpec | null }
  ): Promise<CheckResult> {
    const asked = this.#ask(domain, expect, check)
    const cached = this.#cache?.get(asked.runKey)
    if (cached) return resultOf(reused(cached))
    let run = this.#inFlight.get(asked.runKey)
    if (run === undefined) {
      const admission = this.#opts.admission
      const ticket = admission === undefined ? UNCOUNTED : await admission.waitDemand(key, signal)
      // Another check may have started the run, or kept its result, while this one waited.
      run = this.#inFlight.get(asked.runKey)
      const kept = run === undefined ? this.#cache?.get(asked.runKey) : undefined
      if (run !== undefined || kept !== undefined) ticket.release()
      if (kept !== undefined) return resultOf(reused(kept))
      run ??= this.#start(asked, 'demand', key, ticket, new AbortController())
    }
    return this.#await(asked.runKey, run, signal)
  }

  /** Waits for a run on behalf of a check that may give up; the last to give up ends the run. */
  #await(runKey: string, run: Run, signal: AbortSignal): Promise<CheckResult> {
    if (signal.aborted) return Promise.reject(signal.reason as Error)
    run.waiters++
    return new Promise<CheckResult>((resolve, reject) => {
      const giveUp = (): void => {
        if (--run.waiters === 0 && !run.held && run.abort !== null) {
          run.abort.abort()
          if (this.#inFlight.get(runKey) === run) this.#inFlight.delete(runKey)
        }
        reject(signal.reason as Error)
      }
      signal.addEventListener('abort', giveUp, { once: true })
      run.outcome.then(
        (outcome) => {
          if (signal.aborted) return
          signal.removeEventListener('abort', giveUp)
          run.waiters--
          if (outcome.ok) resolve(outcome.result)
          else reject(new TargetPolicyError(outcome.error))
        },
        (err: unknown) => {
          signal.removeEventListener('abort', giveUp)
          reject(err instanceof Error ? err : new Error(String(err)))
        }
      )
    })
  }

  async #outcome(asked: Ask, key: string | undefined): Promise<Outcome> {
    const cached = this.#cache?.get(asked.runKey)
    if (cached) return reused(cached)
    return this.#shared(asked, 'demand', key)
  }

  /**
   * One probe run per domain at a time; everyone asking meanwhile gets its outcome. A new run takes
   * a slot of the capacity and holds it until the run ends, whether or not anyone still waits for it.
   * With other instances to share with, an on-demand check first looks for their result or run.
   */
  #shared(asked: Ask, source: 'demand' | 'schedule', key: string | undefined): Promise<Outcome> {
    let run = this.#inFlight.get(asked.runKey)
    if (run === undefined) {
      // Sharing with other instances, a slot is taken only to probe (see #runShared).
      const ticket = source === 'demand' && this.#opts.shared ? null : this.#admit(source, key)
      run = this.#start(asked, source, key, ticket, null)
    }
    run.held = true
    return run.outcome
  }

  /**
   * Starts a probe run of `domain` holding `ticket` (null: sharing with other instances, it takes
   * one only if it probes itself); the run is the domain's until it ends or is abandoned.
   */
  #start(asked: Ask, source: 'demand' | 'schedule', key: string | undefined, ticket: Ticket | null, abort: AbortController | null): Run {
    const shared = this.#opts.shared
    const signal = abort?.signal
    const outcome =
      source === 'demand' && shared ? this.#runShared(shared, asked, key, ticket, signal) : this.#run(asked, source, key, signal)
    const run: Run = { outcome, waiters: 0, held: false, abort }
    run.outcome = outcome.finally(() => {
      ticket?.release()
      if (this.#inFlight.get(asked.runKey) === run) this.#inFlight.delete(asked.runKey)
    })
    this.#inFlight.set(asked.runKey, run)
    return run
  }

  /**
   * The on-demand run across instances: another's cached result is reused (and kept here for the
   * rest of its TTL); otherwise this instance probes, or awaits the run another already started. A
   * slot of this instance's capacity is taken only to probe. A result cut short by the stop is not
   * handed to the others.
   */
  async #runShared(
    shared: SharedRuns<Outcome>,
    asked: Ask,
    key: string | undefined,
    ticket: Ticket | null,
    signal: AbortSignal | undefined
  ): Promise<Outcome> {
    const hit = await shared.cached(asked.runKey)
    if (hit) {
      this.#remember(asked.runKey, hit.value, hit.ttlMs)
      return reused(hit.value)
    }
    const { value, ran } = await shared.run(asked.runKey, async () => {
      const held = ticket ?? this.#admit('demand', key)
      try {
        const outcome = await this.#run(asked, 'demand', key, signal)
        return { value: outcome, share: !outcome.ok || !outcome.cut }
      } finally {
        held.release()
      }
    })
    if (!ran) this.#remember(asked.runKey, value)
    return value
  }

  #ask(domain: string, given: Readonly<Expectations> | null, check: CheckSpec | null = null): Ask {
    const target = this.#opts.siteTarget?.(domain) ?? domain
    return ask(domain, given, this.#opts.siteExpect?.(domain) ?? null, check, this.#opts.siteCheck?.(domain) ?? null, target)
  }

  #admit(source: 'demand' | 'schedule', key: string | undefined): Ticket {
    const admission = this.#opts.admission
    if (admission === undefined) return UNCOUNTED
    if (source === 'schedule') return admission.admitScheduled()
    const outcome = admission.admitDemand(key)
    if (isRefusal(outcome)) throw new CapacityError(outcome)
    return outcome
  }

  /** Whether a check just admitted is a light consumer's ({@link Admission.isLight}). */
  #light(source: 'demand' | 'schedule', key: string | undefined): boolean {
    const admission = this.#opts.admission
    if (source !== 'demand' || key === undefined || admission === undefined) return false
    return admission.isLight(key)
  }

  /** Runs a check just admitted: called right after its slot was taken, which the key's count includes. */
  async #run(asked: Ask, source: 'demand' | 'schedule', key: string | undefined, signal?: AbortSignal): Promise<Outcome> {
    const outcome = await this.#probe(asked, laneOf(source, key), this.#light(source, key), signal)
    // A check cut short (the service stopping, or nobody waiting any longer) says nothing about the
    // site: neither kept nor recorded.
    if (outcome.ok && outcome.cut) return outcome
    // Only on-demand results are kept for reuse: holding every scheduled result for a minute would
    // keep tens of thousands of objects alive at scale for checks that mostly never come.
    if (source === 'demand') this.#remember(asked.runKey, outcome)
    // A result judged by the check's own expectations is not the site's (judged by its settings):
    // it is answered, never recorded.
    if (outcome.ok && asked.record) this.#opts.onResult?.(outcome.result, source)
    return outcome
  }

  /**
   * lru-cache drops a stale entry only when it is read or evicted, so a stream of new domains
   * would fill the cache to its 10,000 entries of expired results. Purging the stale ones at most once a
   * TTL, when something new is stored, keeps it at about the domains of the last one or two TTLs,
   * with no timer to stop.
   */
  #remember(runKey: string, outcome: Outcome, ttlMs?: number): void {
    const cache = this.#cache
    if (!cache) return
    const now = performance.now()
    if (now - this.#purgedAt >= cache.ttl) {
      this.#purgedAt = now
      cache.purgeStale()
    }
    cache.set(runKey, outcome, ttlMs === undefined ? undefined : { ttl: Math.min(ttlMs, cache.ttl) })
  }

  /**
   * The check's work on this thread, handing it over and answering it, is done in its lane's turn:
   * a flood of one key's checks (thousands timing out together) does not hold up another's.
   */
  async #probe({ domain, target, expect, check }: Ask, lane: string, light: boolean, signal: AbortSignal | undefined): Promise<Outcome> {
    await this.#turns.run(lane, ready)
    const { connectTo, lookup, lookupTimeoutMs = 10_000, prober } = this.#opts
    const dial = applyConnectTo(connectTo, target, check !== null && check.type !== 'http' && check.type !== 'dns' ? check.port : 443)
    // A DNS check dials nothing: the location's resolvers are asked about the name.
    const verdict =
      check?.type === 'dns' ? { ok: true as const } : await checkHost(dial.host, this.#policy, { lookup, timeoutMs: lookupTimeoutMs })
    // A name that does not resolve (or not in time) is not refused here: the locations will report
    // it as down, and a direct location judges the very address it dials.
    if (!verdict.ok && verdict.reason === 'non_public') return { ok: false, error: NON_PUBLIC_ERROR }
    const checkedAt = this.#now()
    const answers = await prober.probeAll(target, lane, light, signal, judgedAtLocations(expect), check ?? undefined)
    await this.#turns.run(lane, ready)
    let cut = false
    const locations: LocationResult[] = []
    for (const answer of answers) {
      const { code } = answer
      if (isPolicyRefusal(code)) return { ok: false, error: POLICY_ERRORS[code] }
      cut ||= code === 'location_stopping' || code === 'location_cancelled'
      locations.push({ ...answer, code: code ?? null })
    }
    const consensus = decide(locations)
    return {
      ok: true,
      cut,
      result: {
        domain,
        status: consensus.status,
        locations_answered: consensus.locations_answered,
        locations_total: consensus.locations_total,
        response_ms: consensus.response_ms,
        cached: false,
        locations,
        checked_at: checkedAt.toISOString(),
        partial: consensus.partial,
        blocked: consensus.blocked,
        ...slowField(expect, consensus),
        ...(check === null ? {} : { check: shownCheck(check) })
      }
    }
  }
}
