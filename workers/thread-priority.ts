import os from 'node:os'

/**
 * How many nice steps below the thread that started it a scheduler's location actor runs
 * (docs/decisions.md, Probing: "The scheduler's probes yield the CPU to the API").
 */
export const ACTOR_NICENESS = 10

/**
 * Lowers the calling thread's scheduling priority by `by` nice steps (at most to 19, the lowest) and
 * returns its nice value afterwards; null where that cannot be done for one thread alone.
 *
 * On Linux the nice value belongs to each thread, and `setpriority(PRIO_PROCESS, 0, ...)` (what
 * `os.setPriority(0, ...)` calls) changes the calling thread only; elsewhere (macOS, the BSDs) it
 * would lower the whole process, the main thread with it, so nothing is changed there. Lowering a
 * thread's own priority needs no privilege; a failure (a sandbox refusing it) leaves it as it was.
 * Threads the caller starts later inherit the value.
 */
export function lowerThreadPriority(by: number): number | null {
  if (process.platform !== 'linux') return null
  try {
    const nice = Math.min(19, os.getPriority(0) + by)
    os.setPriority(0, nice)
    return os.getPriority(0)
  } catch {
    return null
  }
}

/** The calling thread's nice value (its own on Linux), or null where it cannot be read. */
export function threadPriority(): number | null {
  try {
    return os.getPriority(0)
  } catch {
    return null
  }
}
