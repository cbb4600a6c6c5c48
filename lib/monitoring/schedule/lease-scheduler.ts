import { claimedOccurrence } from '../../rules/due-times.js'
import { isDatabaseUnavailable, isPoolSaturated, type Db } from '../../store/db.js'
import type { GateEntry, ScheduledSite } from './check-gate.js'
import { InstanceBeats } from './lease-beats.js'
import { claimDueChecks, keepOwnClaims, scheduleNewSites, takeOverClaims, type Claim, type PassedOver } from './lease-claims.js'
import { SiteIntervals } from './site-intervals.js'
import { GatedScheduler, type GatedSchedulerOptions } from './site-scheduler.js'

/** How a {@link LeaseScheduler} claims, runs and paces the checks of the sites it shares with other instances. */
export interface LeaseSchedulerOptions extends GatedSchedulerOptions<'list' | 'round'> {
  db: Db
  /** This instance's name in the claims (INSTANCE_ID). */
  owner: string
  /** Whether a claimed site is still tracked (the in-memory state knows it): a removed one is not checked. */
  tracked: (site: ScheduledSite) => boolean
  /** Claimed sites the in-memory state did not know: read the tracked sites now. */
  learn: () => Promise<void>
  /** How many sites are tracked, for the stats. */
  sites: () => number
  /** How often due checks are claimed, on average (each gap is drawn at random around it); default 500 ms. */
  claimEveryMs?: number
  /** `list`: the database cannot be reached (claims stop until it answers); `round`: a claim round failed otherwise; `check`: a check failed. */
  onError?: (err: unknown, what: 'list' | 'round' | 'check') => void
  /** The database answers again after a failed round. */
  onReconnect?: () => void
}

/** Checks claimed per statement at most. */
const CLAIM_BATCH = 1000
/** Claim statements per round at most (a backlog is claimed over a few rounds). */
const CLAIMS_PER_ROUND = 10
/** How often claims long over are forgotten (see `#forgetLapsed`). */
const FORGET_EVERY_MS = 5000
/** After a spell without the database, claims wait this long, so that the others write back what they checked meanwhile first. */
const RECONNECT_GRACE_MS = 1500
/** Rows changed this long before the last look are looked at again: a slow commit or a clock a little behind is still seen. */
const CHANGES_OVERLAP_MS = 2000

interface Owned {
  entry: GateEntry
  /** When this instance's claim ends: the site's next due time. */
  until: number
  /** Checked on past `until` without the database: to be written back once it answers. */
  continued: boolean
  /** Taken over by another instance while this one could not reach the database. */
  lost: boolean
}

interface Held {
  own: Owned
  dueAt: number
}

/**
 * The scheduler of an instance among several on one MySQL database. The schedule lives in the
 * sites' rows (a due time and a claim per site): every round (`claimEveryMs`) the instance claims
 * the checks due within the next moment, in batches (`SELECT ... FOR UPDATE SKIP LOCKED`), and
 * holds them until their due time; each check is claimed by exactly one instance, however many
 * run. A site's due times keep its phase, so a check is due at the same moment whichever instance
 * runs it.
 *
 * Each site is due once per its own interval (`interval_s`, read with its row), or `intervalMs`. A row
 * whose interval changed is rescheduled at its next round (`scheduleNewSites`).
 *
 * The same gate as a single instance's (see {@link GatedScheduler}) runs the claimed checks, so
 * overload behaves the same way: an instance claims no more than it has room for, leaving the rest
 * to the others; a check nobody could start within an interval of its due time is passed over
 * (counted shed by the instance that finds it) in favour of the next one.
 *
 * Instances beat ({@link InstanceBeats}); the claims of one not heard from for `deadAfterMs` are
 * taken over: a claimed check whose result never reached the site's row is run by the taker at once.
 * Without the database, an instance goes on checking the sites it claimed (or moved on) last, at
 * their phase, and writes the due times it reached back once the database answers.
 */
export class LeaseScheduler extends GatedScheduler<GateEntry, 'list' | 'round'> {
  readonly #o: Required<Pick<LeaseSchedulerOptions, 'db' | 'owner' | 'tracked' | 'learn' | 'sites' | 'claimEveryMs'>> &
    Pick<LeaseSchedulerOptions, 'onReconnect'>
  readonly #owned = new Map<number, Owned>()
  readonly #intervals = new SiteIntervals()
  /** When the first look at every row began; later rounds look at the rows changed since the last (see `scheduleNewSites`). */
  #firstLookAt: number | undefined
  #changesSince: number | undefined
  #held: Held[] = []
  #heldHead = 0
  #roundTimer: NodeJS.Timeout | undefined
  #round: Promise<void> | null = null
  #again = false
  #offline = false
  /** When the database answered again after a failed round; -Infinity when it never failed. */
  #reconnectedAt = -Infinity
  /** When the last round succeeded: claims ending before then were not prolonged by anyone else. */
  #lastOkAt = -Infinity
  #lastDeadCheckAt = -Infinity
  #lastForgetAt = -Infinity
  /** When the claim rounds began to fail; null while they succeed. */
  #failingSince: number | null = null
  readonly #beats: InstanceBeats

  constructor(opts: LeaseSchedulerOptions) {
    super(opts)
    const { db, owner, tracked, learn, sites, onReconnect } = opts
    this.#o = { db, owner, tracked, learn, sites, claimEveryMs: opts.claimEveryMs ?? 500, onReconnect }
    this.#beats = new InstanceBeats({ db, id: owner, intervalMs: this.intervalMs, now: this.now })
  }

  get #deadAfterMs(): number {
    return this.#beats.deadAfterMs
  }

  /** How far ahead checks are claimed: they wait here until due, so that they start on time. */
  get #lookaheadMs(): number {
    return Math.min(1000, this.intervalMs / 2)
  }

  async start(): Promise<void> {
    this.restartLoad(this.now())
    await this.refreshNow()
    if (this.stopped) return
    this.startTimers([{ everyMs: this.#deadAfterMs / 4, run: () => void this.#beat() }])
    this.#nextRound()
  }

  /**
   * Schedules the next claim round after a gap drawn at random between three quarters and five
   * quarters of `claimEveryMs`, never longer than the look-ahead (so that no due check waits for a
   * round). A check goes to the instance whose round comes first once it is within the look-ahead:
   * on a fixed period, instances started together kept the same phase, and the one whose rounds
   * came a few milliseconds earlier claimed nearly every check. Drawn gaps make the phases wander,
   * so each instance takes a share.
   */
  #nextRound(): void {
    if (this.stopped) return
    const { claimEveryMs } = this.#o
    const gap = Math.min(this.#lookaheadMs, claimEveryMs * (0.75 + 0.5 * Math.random()))
    this.#roundTimer = setTimeout(() => {
      void this.refreshNow()
      this.#nextRound()
    }, gap)
    this.#roundTimer.unref()
  }

  /** Claims no further check; the running checks end before {@link stop} resolves. */
  protected override windDown(): Promise<void> | null {
    clearTimeout(this.#roundTimer)
    return this.#round
  }

  /**
   * Says this instance is gone, so that the others take over its claims at once rather than once it
   * falls silent. Called once its checks are recorded: a claim whose check is recorded is only
   * handed over, one whose check never ran is run by the taker.
   */
  override retire(): Promise<void> {
    return this.#beats.retire()
  }

  protected override sites(): number {
    return this.#o.sites()
  }

  /**
   * The last minute's `due` is the schedule's load, every tracked site once its interval (all
   * instances together), not a count of what this instance came across: occurrences nobody had
   * room for are only found when they are passed over, an interval later and in bursts, so a count
   * of them misstated the load. The rest of the figures are this instance's own.
   */
  protected override duePerS(): number {
    return this.#intervals.duePerS
  }

  /** Runs a round now (or right after the one under way): new sites are scheduled, due checks claimed. */
  refreshNow(): Promise<void> {
    if (this.#round !== null) {
      this.#again = true
      return this.#round
    }
    const round = this.#claimRound().finally(() => {
      this.#round = null
      if (this.#again && !this.stopped) {
        this.#again = false
        void this.refreshNow()
      }
    })
    this.#round = round
    return round
  }

  async #claimRound(): Promise<void> {
    if (this.stopped) return
    const { db, owner } = this.#o
    const { intervalMs, onTimeMs } = this
    const now = this.now()
    try {
      if (this.#offline) await this.#writeBack()
      if (this.#offline) {
        this.#offline = false
        this.#reconnectedAt = now
        this.#o.onReconnect?.()
      }
      if (this.#beats.lastBeatAt === -Infinity) await this.#beat()
      let dead: string[] = []
      // Others are judged only while this instance's own beats get through in time: when its beats
      // are slow (a loaded machine, a slow database) the others' probably are too, and are no sign of death.
      // Right after a spell without the database, the others may not have beaten again yet.
      if (
        now - this.#lastDeadCheckAt >= this.#deadAfterMs / 4 &&
        now - this.#beats.lastBeatAt < this.#deadAfterMs / 2 &&
        now - this.#reconnectedAt >= this.#deadAfterMs
      ) {
        this.#lastDeadCheckAt = now
        dead = await this.#beats.dead(now)
      }
      await scheduleNewSites({ db, now, intervalMs, limit: CLAIM_BATCH, changedSince: this.#changesSince, intervals: this.#intervals })
      this.#firstLookAt ??= now
      this.#changesSince = Math.max(this.#firstLookAt, now - CHANGES_OVERLAP_MS)
      if (now - this.#reconnectedAt < RECONNECT_GRACE_MS) {
        this.#lastOkAt = now
        return
      }
      const claims: Claim[] = await takeOverClaims({ db, owner, dead, now, intervalMs, limit: CLAIM_BATCH })
      for (let i = 0; i < CLAIMS_PER_ROUND; i++) {
        const limit = Math.min(CLAIM_BATCH, this.#room() - claims.length)
        const horizon = now + this.#lookaheadMs
        const got = await claimDueChecks({ db, owner, now, horizon, intervalMs, limit, onTimeMs, passLimit: CLAIM_BATCH })
        claims.push(...got.claims)
        this.#countMissed(got.passed, now)
        this.#keepPassed(got.passed)
        // Room left and rows left: claim on; rows an interval late left: move them on.
        if ((got.claims.length < limit || limit <= 0) && got.passed.length < CLAIM_BATCH) break
      }
      this.#lastOkAt = now
      this.#failingSince = null
      await this.#hold(claims, now)
    } catch (err) {
      // Only a database that cannot be reached, for as long as it takes the others to count an
      // instance dead, stops the claims: then this instance goes on with the sites it claimed last.
      // Any other failure (a deadlock, a slow moment) is retried at the next round, with the claims
      // the database holds: going on alone then would check sites the others claim.
      this.#failingSince ??= now
      if (!isDatabaseUnavailable(err) || isPoolSaturated(db, err) || now - this.#failingSince < this.#deadAfterMs) {
        if (!this.#offline) this.report(err, 'round')
        return
      }
      if (!this.#offline) this.report(err, 'list')
      this.#offline = true
    }
  }

  /** Says this instance is alive; on a timer of its own, so that a slow claim round does not delay it. */
  async #beat(): Promise<void> {
    if (!this.stopped) await this.#beats.beat()
  }

  /**
   * Checks this instance may still take on: twice its slots, less what runs and waits. An instance
   * short of room leaves due checks in the database, for the others to claim.
   */
  #room(): number {
    const gate = this.gate
    return 2 * this.concurrency - gate.running - gate.queued - (this.#held.length - this.#heldHead)
  }

  /**
   * Counts the occurrences passed over as shed, when they fell due while this instance was up and
   * could claim them (nobody had room in time; a restart after a stop is not "behind").
   */
  #countMissed(passed: ReadonlyArray<{ missed: number; overdueAt: number }>, now: number): void {
    const since = Math.max(this.#reconnectedAt, this.#beats.startedAt.getTime())
    for (const p of passed) {
      if (p.overdueAt < since) continue
      // A row left for many intervals while this instance ran is counted for the last minute's worth at most.
      for (let i = 0; i < Math.min(p.missed, 100); i++) this.count(now, 'shed')
    }
  }

  /**
   * Rows this instance moved on without a claim stay its own to check should the database go away
   * before anyone claims their next occurrence ({@link continueOffline}): otherwise a site moved on in
   * the last round before an outage went unchecked until the database came back. They are kept in
   * memory only, holding no room, and get no claim in the database, where others read `lease_until`
   * as the end of a claimed check. Should this instance alone lose the database, another may claim
   * such a site meanwhile and both check it, until the write-back finds the claim is not this
   * instance's.
   */
  #keepPassed(passed: readonly PassedOver[]): void {
    for (const p of passed) {
      const entry = this.#entryFor(p.site, p.intervalMs)
      this.#owned.set(p.site.id, { entry, until: p.dueAt, continued: false, lost: false })
    }
  }

  /** The site's one gate entry: the one running or waiting, the one of its last claim, or a new one. */
  #entryFor(site: ScheduledSite, intervalMs: number): GateEntry {
    const entry = this.gate.busyWith(site.id) ?? this.#owned.get(site.id)?.entry ?? newEntry(site, intervalMs)
    entry.site = site
    entry.intervalMs = intervalMs
    return entry
  }

  async #hold(claims: readonly Claim[], now: number): Promise<void> {
    if (claims.length === 0) return
    if (claims.some((c) => !this.#o.tracked(c.site))) await this.#o.learn()
    this.#countMissed(claims, now)
    // A check that fell due before this instance could claim anything (it was stopped, or away from
    // the database) is due from then on: starting it is not late on this instance's account, or
    // every restart would read as `behind` for a minute.
    const since = Math.max(this.#reconnectedAt, this.#beats.startedAt.getTime())
    for (const claim of claims) {
      const entry = this.#entryFor(claim.site, claim.intervalMs)
      const own: Owned = { entry, until: claim.dueAt + claim.intervalMs, continued: false, lost: false }
      this.#owned.set(claim.site.id, own)
      this.#held.push({ own, dueAt: Math.max(claim.dueAt, since) })
    }
    this.#sortHeld()
  }

  #sortHeld(): void {
    this.#held = this.#held.slice(this.#heldHead).sort((a, b) => a.dueAt - b.dueAt)
    this.#heldHead = 0
  }

  protected override handDue(now: number): void {
    if (this.#offline) this.#continueOffline(now)
    for (let held = this.#held[this.#heldHead]; held !== undefined && held.dueAt <= now; held = this.#held[this.#heldHead]) {
      this.#heldHead++
      const { entry, lost } = held.own
      if (lost) continue
      if (!this.#o.tracked(entry.site)) {
        entry.removed = true
        continue
      }
      entry.removed = false
      // Held past a whole interval (the machine stalled, or a take-over came late): by now the next
      // check is due and claimed, so this one is shed rather than run in the next one's interval.
      if (now - held.dueAt >= entry.intervalMs) {
        this.shedBeforeGate(now)
        continue
      }
      this.gate.offer(entry, held.dueAt)
    }
    if (this.#heldHead > 1024 && this.#heldHead * 2 > this.#held.length) this.#sortHeld()
    this.#forgetLapsed(now)
  }

  /** Without the database nobody can claim: the sites this instance claimed last go on being checked here, at their phase. */
  #continueOffline(now: number): void {
    let added = false
    for (const own of this.#owned.values()) {
      if (own.lost || own.until > now + this.#lookaheadMs) continue
      // A claim that ended before the last good round was the others' to take, not this instance's to prolong.
      if (!own.continued && own.until <= this.#lastOkAt) continue
      const { intervalMs } = own.entry
      const dueAt = claimedOccurrence(own.until, now, intervalMs).dueAt
      own.until = dueAt + intervalMs
      own.continued = true
      this.#held.push({ own, dueAt })
      added = true
    }
    if (added) this.#sortHeld()
  }

  /** Writes the due times reached without the database back, for the claims this instance still holds. */
  async #writeBack(): Promise<void> {
    const continued = [...this.#owned.entries()].filter(([, own]) => own.continued && !own.lost)
    const kept = await keepOwnClaims({
      db: this.#o.db,
      owner: this.#o.owner,
      claims: continued.map(([id, own]) => ({ id, dueAt: own.until }))
    })
    for (const [id, own] of continued) {
      own.continued = false
      if (!kept.has(id)) own.lost = true
    }
  }

  /**
   * Claims long over are only kept while the database is away, for {@link continueOffline}. Looked
   * for every few seconds, not every tick: `#owned` holds every site claimed in the last two
   * intervals, and walking all of it four times a second was a noticeable share of the main
   * thread's allocations.
   */
  #forgetLapsed(now: number): void {
    if (this.#offline || now - this.#lastForgetAt < FORGET_EVERY_MS) return
    this.#lastForgetAt = now
    this.#owned.forEach((own, id) => {
      const { entry } = own
      if (own.until < now - 2 * entry.intervalMs - 10_000 && !entry.running && entry.waiting === null) this.#owned.delete(id)
    })
  }
}

function newEntry(site: ScheduledSite, intervalMs: number): GateEntry {
  return { site, intervalMs, running: false, waiting: null, removed: false }
}
