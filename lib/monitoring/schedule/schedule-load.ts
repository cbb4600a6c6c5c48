/** What a scheduler did over the last minute (less just after it started). */
export interface ScheduleLoad {
  /** Seconds the figures cover: 60 once the scheduler has run a minute. */
  seconds: number
  /** Checks that fell due, whatever became of them. */
  due: number
  /** Checks started. */
  started: number
  /** Started more than `onTimeMs` after their due time. */
  late: number
  /** Due again while the previous check still ran or waited: not started twice. */
  skipped: number
  /** Could not start within one interval of their due time: dropped, never started. */
  shed: number
  /** `due` per second. */
  duePerS: number
  /** `started` per second. */
  runPerS: number
  /** See {@link isBehind}. */
  behind: boolean
}

/** Share of the checks started in a minute that may be late before the schedule counts as behind. */
export const LATE_SHARE = 0.01

/**
 * Behind means the instance does not keep up with its sites: over the last minute at least one check
 * was shed, or more than {@link LATE_SHARE} of the checks started were late. A check skipped because
 * the site's previous one still runs is a slow target, not a busy instance, so it does not count.
 */
export function isBehind({ shed, late, started }: Pick<ScheduleLoad, 'shed' | 'late' | 'started'>): boolean {
  return shed > 0 || late > started * LATE_SHARE
}

/** What /healthz says of the schedule. */
export const scheduleHealth = (load: Pick<ScheduleLoad, 'behind'>): 'ok' | 'behind' => (load.behind ? 'behind' : 'ok')

const KINDS = ['due', 'started', 'late', 'skipped', 'shed'] as const
export type LoadEvent = (typeof KINDS)[number]

/** Per-second counts of scheduler events over a sliding minute: the last 60 whole seconds and the current one. */
export class LoadWindow {
  readonly #bucketMs: number
  readonly #buckets: Array<{ at: number; counts: number[] }>
  readonly #since: number

  constructor({ since, windowMs = 60_000, bucketMs = 1000 }: { since: number; windowMs?: number; bucketMs?: number }) {
    this.#bucketMs = bucketMs
    this.#since = since
    this.#buckets = Array.from({ length: Math.ceil(windowMs / bucketMs) + 1 }, () => ({ at: -1, counts: KINDS.map(() => 0) }))
  }

  add(now: number, kind: LoadEvent): void {
    const at = Math.floor(now / this.#bucketMs)
    const bucket = this.#buckets[at % this.#buckets.length] as { at: number; counts: number[] }
    if (bucket.at !== at) {
      bucket.at = at
      bucket.counts.fill(0)
    }
    ;(bucket.counts[KINDS.indexOf(kind)] as number)++
  }

  /**
   * The figures at `now`. `duePerS`, when given, is the schedule's known load (checks due a second),
   * which then stands for the counted `due`: see `LeaseScheduler.load`.
   */
  read(now: number, duePerS?: number): ScheduleLoad {
    const at = Math.floor(now / this.#bucketMs)
    const totals = KINDS.map(() => 0)
    for (const bucket of this.#buckets) {
      if (bucket.at > at - this.#buckets.length && bucket.at <= at)
        bucket.counts.forEach((n, i) => {
          totals[i] = (totals[i] as number) + n
        })
    }
    const [counted, started, late, skipped, shed] = totals as [number, number, number, number, number]
    // Whole buckets plus the part of the current one gone by: a minute and up to a second more.
    const windowS = ((this.#buckets.length - 1) * this.#bucketMs + (now - at * this.#bucketMs)) / 1000
    const seconds = Math.max(1, Math.min(windowS, (now - this.#since) / 1000))
    const perS = (n: number): number => Math.round((n / seconds) * 10) / 10
    const due = duePerS === undefined ? counted : Math.round(duePerS * seconds)
    return {
      seconds: Math.round(seconds),
      due,
      started,
      late,
      skipped,
      shed,
      duePerS: duePerS === undefined ? perS(due) : Math.round(duePerS * 10) / 10,
      runPerS: perS(started),
      behind: isBehind({ shed, late, started })
    }
  }
}

/** How often at most a scheduler says it is behind. */
const WARN_EVERY_MS = 60_000

/**
 * The warning both schedulers give: `onBehind` with the last minute's figures while that minute is
 * behind, at most once a minute. A failing handler does not stop the scheduler.
 */
export class BehindWarning {
  readonly #onBehind: ((load: ScheduleLoad) => void) | undefined
  #warnedAt = -Infinity

  constructor(onBehind: ((load: ScheduleLoad) => void) | undefined) {
    this.#onBehind = onBehind
  }

  /** Warns if the scheduler's figures (`read`) say it is behind and the last warning is a minute old. */
  check(now: number, read: () => ScheduleLoad): void {
    if (this.#onBehind === undefined || now - this.#warnedAt < WARN_EVERY_MS) return
    const load = read()
    if (!load.behind) return
    this.#warnedAt = now
    try {
      this.#onBehind(load)
    } catch {
      // A failing handler must not stop the scheduler.
    }
  }
}
