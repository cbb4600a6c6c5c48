import { setTimeout as sleep } from 'node:timers/promises'

/** Polls `read` until `done` holds or `ms` have passed; returns the last value read. */
export async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, ms: number, everyMs = 100): Promise<T> {
  const end = Date.now() + ms
  let value = await read()
  while (!done(value) && Date.now() < end) {
    await sleep(everyMs)
    value = await read()
  }
  return value
}

/** Polls until `cond` holds; false when `ms` have passed first. */
export async function holds(cond: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  return until(
    async () => cond(),
    (v) => v,
    ms,
    50
  )
}
