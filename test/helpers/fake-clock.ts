import { setImmediate as nextTurn } from 'node:timers/promises'
import FakeTimers, { type Clock, type FakeMethod } from '@sinonjs/fake-timers'
import type { Test } from 'tap'

export type StoppableClock = Clock & {
  /** Puts the real timers back (also done at the test's end). */
  stop: () => void
}

/**
 * A fake clock for the timers this thread sets from now on (`toFake`), for tests whose subject is a
 * deadline: the test moves the clock past it, while sockets, worker threads and setImmediate stay
 * real. A native timer set before the clock can still be cleared meanwhile.
 */
export function fakeClock(t: Test, toFake: FakeMethod[] = ['setTimeout', 'clearTimeout']): StoppableClock {
  const clock = FakeTimers.install({ toFake, shouldClearNativeTimers: true })
  let stopped = false
  const stop = (): void => {
    if (stopped) return
    stopped = true
    clock.uninstall()
  }
  t.teardown(stop)
  return Object.assign(clock, { stop })
}

/** The real setTimeout, taken before any test fakes it. */
const realSetTimeout = globalThis.setTimeout

/**
 * Resolves once `cond` holds, looking again after a turn of the event loop (its I/O included), then
 * every millisecond of the real clock (a fake one may be installed meanwhile): a wait for an event,
 * which does not spin a core that the threads it waits for may need.
 */
export async function turnsUntil(cond: () => boolean): Promise<void> {
  if (cond()) return
  await nextTurn()
  while (!cond()) {
    await new Promise((resolve) => {
      realSetTimeout(resolve, 1)
    })
  }
}

/** `pending`, with whether it has settled yet. */
export function watch<T>(pending: Promise<T>): { pending: Promise<T>; ended: () => boolean } {
  let ended = false
  const watched = pending.finally(() => {
    ended = true
  })
  return { pending: watched, ended: () => ended }
}
