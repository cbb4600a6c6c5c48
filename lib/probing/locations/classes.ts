import { SCHEDULED_LANE } from '../../../workers/fair-starts.js'
import { ACTOR_NICENESS } from '../../../workers/thread-priority.js'

/**
 * Whose probe it is, which decides which of a location's actors runs it: an on-demand check
 * (`demand`), the scheduler's (`scheduled`), or a light consumer's on-demand check (`light`: a key
 * with few checks in flight, lib/probing/admission.ts `Admission.isLight`).
 */
export type ServiceClass = 'demand' | 'scheduled' | 'light'

export const SERVICE_CLASSES: readonly ServiceClass[] = ['demand', 'scheduled', 'light']

/**
 * How long a light consumers' actor may stay without a probe before its thread stops (the next
 * light check starts it again): a service that never serves on-demand checks, or not for a while,
 * does not keep a thread's memory per location for them.
 */
export const LIGHT_ACTOR_IDLE_MS = 5 * 60_000

/** How one class of service is run by a location's actors. */
export interface ClassOfService {
  /**
   * Whether it has an actor of its own (a thread per location); otherwise the on-demand actor runs
   * its probes. Off for `scheduled` and `light` when the service is told so (tests, small machines).
   */
  own: boolean
  /** Nice steps below the thread that started the actor: background work yields the CPU to the API. */
  niceness: number
  /** How long its actor stays without a probe before its thread stops; null: never. */
  idleMs: number | null
  /**
   * Whether its actor starts with the service (start-up waits for it); otherwise with its first
   * probe, and until it has answered, its probes go to the on-demand actor.
   */
  startsWithService: boolean
}

/**
 * The one table of the classes of service (docs/decisions.md, Probing): the scheduler's probes run
 * on actors of their own at a lower priority, so that the API and on-demand checks go first when
 * the machine is short of CPU; light consumers' checks run on actors of their own at the API's
 * priority, so they never wait in the event loop of an actor busy with another consumer's
 * thousands; those threads start with the first such check and stop when idle.
 */
export function classesOfService({
  scheduled = true,
  light = true,
  lightIdleMs = LIGHT_ACTOR_IDLE_MS
}: { scheduled?: boolean; light?: boolean; lightIdleMs?: number } = {}): Readonly<Record<ServiceClass, ClassOfService>> {
  return Object.freeze({
    demand: { own: true, niceness: 0, idleMs: null, startsWithService: true },
    scheduled: { own: scheduled, niceness: ACTOR_NICENESS, idleMs: null, startsWithService: true },
    light: { own: light, niceness: 0, idleMs: lightIdleMs, startsWithService: false }
  })
}

/** The class of a check's probe, from its lane and whether it is a light consumer's. */
export function classOf(lane: string | undefined, light: boolean): ServiceClass {
  return lane === SCHEDULED_LANE ? 'scheduled' : light ? 'light' : 'demand'
}
