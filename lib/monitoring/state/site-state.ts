import { setImmediate as nextTurn } from 'node:timers/promises'
import { randomUUID } from 'node:crypto'
import type { Db } from '../../store/db.js'
import type { CheckRecord } from '../../store/checks.js'
import { listTrackedIds, loadSiteStates, sitesVersion, type ChangedState, type StoredSiteState } from '../../store/site-states.js'
import type { SiteStatus } from '../../rules/consensus.js'
import { outageStep, type OutageSnapshot } from '../../rules/outages.js'
import { UPTIME_HORIZON_MS } from '../../rules/uptime.js'
import type { LocationResult } from '../../probing/locations/index.js'
import { applyOutageStep, type RecordedCheck } from './recorded-check.js'
import type { Expectations } from '../../rules/expectations.js'
import type { CheckSpec } from '../../rules/check-spec.js'
import { SiteChecks } from './site-checks.js'
import { setExpectations, sameSettings } from '../../rules/site-settings.js'
import { locationProbes, type LocationProbe, type SiteMetrics } from './location-probes.js'
import { MaintenanceWindows } from './site-maintenance.js'
import { downCause } from '../../rules/down-cause.js'
import { isMonitorDomain, monitorOf } from '../../rules/monitor.js'
export type { LocationProbe, SiteMetrics } from './location-probes.js'
import { SerialisedRecords } from './serialised-records.js'
import { indexAfter, sortedWebDomains } from './sorted-keys.js'
import {
  currentVerdict,
  isFresh,
  statusRecord,
  uptimeSource,
  verdictStatus,
  type CurrentStatus,
  type StatusRecord
} from './status-record.js'

/** A tracked site as the scheduler gets it: its own interval in seconds, null for CHECK_INTERVAL_S. */
export interface TrackedSite {
  id: number
  domain: string
  interval_s: number | null
}

/** The tracked sites are read in full at least this often, whatever their version says. */
const FULL_REFRESH_MS = 60_000
/** Sites gone through between two turns of the event loop (see `listPage`, `refresh`): a few ms. */
const COUNT_SLICE = 5000

/**
 * The tracked sites' current state, kept in memory and updated after every committed check, so the
 * status endpoint answers without touching the database. Sites added or removed by the operator
 * tool are noticed by `refresh`.
 */
export class SiteStates {
  /**
   * Written with every state this process records (`sites.state_by`): a token of its own, not the instance's name, which a
   * restarted or misconfigured instance may share. What it wrote is applied here already, so `StateSync` does not read it back.
   */
  readonly writer = randomUUID()
  readonly #byDomain = new Map<string, StoredSiteState>()
  readonly #byId = new Map<number, StoredSiteState>()
  /** Status records serialised for the status endpoint, by site id, until the state changes or a second passes. */
  readonly #serialised = new SerialisedRecords()
  /** Each site's newest applied check, per location, for `/metrics`; only checks this process recorded. */
  readonly #probes = new Map<number, LocationProbe[]>()
  /** Location labels, one string each however many results carry them. */
  readonly #labels = new Map<string, string>()
  /** The sites' maintenance windows, read with the list of sites (a change to them moves its version). */
  readonly #maintenance = new MaintenanceWindows()
  readonly #intervalMs: number
  readonly #publicUrl: string
  /** The tracked domains in order, kept until the set of sites changes. */
  #sorted: string[] | null = null
  /** The last list `refresh` returned, the sites' version it was read at, and when it was read in full. */
  #tracked: TrackedSite[] | null = null
  #version: string | null = null
  #fullAt = -Infinity
  /** Set by {@link changed}: the next refresh reads the list whatever the version says. */
  #stale = false
  /** The last refresh asked for: the next one starts when it has ended. */
  #refreshing: Promise<unknown> = Promise.resolve()

  readonly #checks: SiteChecks

  constructor({
    intervalMs,
    publicUrl,
    openCheck = (stored) => JSON.parse(stored) as CheckSpec
  }: {
    intervalMs: number
    publicUrl: string
    /** The service passes the SecretBox's opener (lib/monitoring/check-secrets.ts); without one a check is sent as stored. */
    openCheck?: (stored: string) => CheckSpec
  }) {
    this.#intervalMs = intervalMs
    this.#publicUrl = publicUrl
    this.#checks = new SiteChecks(openCheck)
  }

  #put(state: StoredSiteState): void {
    const old = this.#byId.get(state.site.id)
    if (old) this.#byDomain.delete(old.site.domain)
    this.#serialised.delete(state.site.id)
    this.#probes.delete(state.site.id)
    this.#sorted = null
    this.#byId.set(state.site.id, state)
    this.#byDomain.set(state.site.domain, state)
  }

  /**
   * Brings the set of tracked sites in line with the database; returns them. While the sites' version (see `sitesVersion`) has not
   * moved, the list is not read again and the same array is returned (the scheduler then skips its comparison): reading and comparing
   * tens of thousands of sites at every refresh held the main thread for a noticeable time. A full read still happens once a minute,
   * for changes made behind the store's back; its comparison gives the event loop a turn every {@link COUNT_SLICE} sites, so that
   * requests do not wait behind it. Calls run one after another, never interleaved.
   */
  refresh(db: Db, now: Date): Promise<TrackedSite[]> {
    const next = this.#refreshing.then(
      () => this.#refresh(db, now),
      () => this.#refresh(db, now)
    )
    this.#refreshing = next
    return next
  }

  async #refresh(db: Db, now: Date): Promise<TrackedSite[]> {
    const stale = this.#stale
    this.#stale = false
    const version = await sitesVersion({ db })
    if (!stale && this.#tracked !== null && version === this.#version && now.getTime() - this.#fullAt < FULL_REFRESH_MS) {
      return this.#tracked
    }
    const tracked = await listTrackedIds({ db })
    const seen = new Set<number>()
    const reload: number[] = []
    const listed: TrackedSite[] = []
    let n = 0
    for (const t of tracked) {
      seen.add(t.id)
      listed.push({ id: t.id, domain: t.domain, interval_s: t.interval_s })
      const known = this.#byId.get(t.id)
      // New, or removed and added again (a new tracking period): read its whole state.
      if (!known || known.site.added_at.getTime() !== t.added_at.getTime()) reload.push(t.id)
      else if (known.site.name !== t.name || !sameSettings(known.site, t) || known.site.target !== t.target) {
        const { name, interval_s, expect, check, kind, target } = t
        Object.assign(known.site, { name, interval_s, expect, check, kind, target })
        this.#serialised.delete(t.id)
      }
      if (++n % COUNT_SLICE === 0) await nextTurn()
    }
    for (const [id, state] of this.#byId) {
      if (!seen.has(id)) {
        this.#byId.delete(id)
        this.#checks.forget(id)
        this.#byDomain.delete(state.site.domain)
        this.#serialised.forget(id)
        this.#probes.delete(id)
        this.#sorted = null
      } else {
        this.#forgetOld(state, now)
      }
      if (++n % COUNT_SLICE === 0) await nextTurn()
    }
    for (let i = 0; i < reload.length; i += 500) {
      const since = new Date(now.getTime() - UPTIME_HORIZON_MS)
      for (const state of await loadSiteStates({ db, since, siteIds: reload.slice(i, i + 500) })) this.#put(state)
    }
    for (const id of await this.#maintenance.read(db)) this.#serialised.delete(id)
    this.#tracked = listed
    this.#version = version
    this.#fullAt = now.getTime()
    return this.#tracked
  }

  /** This process changed the tracked sites: the next refresh reads them in full (two changes may share a millisecond). */
  changed(): void {
    this.#stale = true
  }

  #forgetOld(state: StoredSiteState, now: Date): void {
    const horizon = now.getTime() - UPTIME_HORIZON_MS
    const first = state.outages[0]
    if (first?.ended_at && first.ended_at.getTime() < horizon) {
      state.outages = state.outages.filter((o) => o.ended_at === null || o.ended_at.getTime() >= horizon)
      this.#serialised.delete(state.site.id)
    }
  }

  /**
   * Takes the states another instance wrote (see `listChangedStates`): a row with a newer check than the one in memory replaces it; an
   * older or equal one (this instance's own, or a stale read) is ignored. Returns the sites whose outages that check may have opened or
   * closed, to be read again (a `down` with no outage open here, an `up` with one open).
   */
  syncStates(rows: readonly ChangedState[]): number[] {
    const reload: number[] = []
    for (const row of rows) {
      const state = this.#byId.get(row.id)
      const known = state?.site.checked_at ?? null
      if (!state || row.checked_at === null || (known !== null && row.checked_at.getTime() <= known.getTime())) continue
      const open = state.outages.some((o) => o.ended_at === null)
      if (outageStep(open, row.status) !== 'none') reload.push(row.id)
      Object.assign(state.site, {
        status: row.status,
        blocked: row.blocked,
        partial: row.partial,
        response_ms: row.response_ms,
        checked_at: row.checked_at,
        slow: row.slow,
        cause: row.cause
      })
      this.#serialised.delete(row.id)
    }
    return reload
  }

  /**
   * Replaces sites' states with ones read again from the database (outages included). A state read
   * before a newer check was applied here is not taken: its site's id is returned, to be read again.
   */
  adoptStates(stored: readonly StoredSiteState[]): number[] {
    const again: number[] = []
    for (const fresh of stored) {
      const state = this.#byId.get(fresh.site.id)
      if (!state || state.site.added_at.getTime() !== fresh.site.added_at.getTime()) continue
      const known = state.site.checked_at?.getTime() ?? -Infinity
      if ((fresh.site.checked_at?.getTime() ?? -Infinity) < known) {
        again.push(fresh.site.id)
        continue
      }
      state.site = { ...fresh.site, name: state.site.name, interval_s: state.site.interval_s, expect: state.site.expect }
      state.outages = fresh.outages
      state.lastOutage = fresh.lastOutage
      this.#serialised.delete(fresh.site.id)
    }
    return again
  }

  /** How many sites are tracked. */
  get size(): number {
    return this.#byDomain.size
  }

  has(domain: string): boolean {
    return this.#byDomain.has(domain)
  }

  siteId(domain: string): number | undefined {
    return this.#byDomain.get(domain)?.site.id
  }

  /** The site's outage record as committed: its newest check's time and its ongoing outage. */
  outageSnapshot(siteId: number): OutageSnapshot {
    const state = this.#byId.get(siteId)
    if (!state) return { checkedAt: null, open: null }
    return { checkedAt: state.site.checked_at, open: state.outages.find((o) => o.ended_at === null) ?? null }
  }

  /** Applies what `recordChecks` committed for a check to memory, not decided again: memory and database never disagree. */
  apply(check: CheckRecord, recorded: RecordedCheck): void {
    const state = this.#byId.get(check.siteId)
    if (!state || !recorded.current) return
    this.#serialised.delete(check.siteId)
    Object.assign(state.site, {
      status: check.status,
      blocked: check.blocked,
      partial: check.partial,
      response_ms: check.responseMs,
      checked_at: check.checkedAt,
      first_checked_at: state.site.first_checked_at ?? check.checkedAt,
      tls_expires_at: check.tls?.expiresAt ?? null,
      tls_issuer: check.tls?.issuer ?? null,
      slow: recorded.slow,
      cause: downCause(check.locations)
    })
    this.#probes.set(check.siteId, locationProbes(check.locations as Array<Partial<LocationResult>>, this.#labels))
    applyOutageStep(state, recorded)
  }

  /**
   * Calls `visit` for every tracked site with what `/metrics` shows of it, read at scrape time. The
   * probes of a stale check are left out, as its verdict is: a stale value must not look current.
   */
  eachForMetrics(now: Date, visit: (site: SiteMetrics) => void): void {
    for (const [id, { site, lastOutage }] of this.#byId) {
      const fresh = isFresh(site, now, this.#intervalMs)
      const status = verdictStatus(site, now, this.#intervalMs)
      visit({
        domain: site.domain,
        monitor: monitorOf(site),
        status,
        slow: site.slow && status === 'up',
        outageOngoing: lastOutage !== null && lastOutage.ended_at === null,
        maintenance: this.#maintenance.inForce(id, now),
        probes: fresh ? (this.#probes.get(id) ?? []) : []
      })
    }
  }

  /** A tracked site's own expectations, which its checks are judged by; null when it sets none or is not tracked. */
  expectations(domain: string): Readonly<Expectations> | null {
    const state = this.#byDomain.get(domain)
    return state ? setExpectations(state.site.expect) : null
  }

  /** The host a tracked monitor probes (its domain is its identity); null for a web site, or not tracked. */
  siteTarget(domain: string): string | null {
    return this.#byDomain.get(domain)?.site.target ?? null
  }

  /** A tracked site's own request and assertions, ready to send; null: the plain web check, or not tracked. */
  siteCheck(domain: string): CheckSpec | null {
    const state = this.#byDomain.get(domain)
    return state ? this.#checks.of(state.site) : null
  }

  /** The site's name and current verdict, with the same freshness rule as the status record. */
  current(domain: string, now: Date): CurrentStatus | null {
    const state = this.#byDomain.get(domain)
    if (!state) return null
    const { site } = state
    const { status, blocked, partial } = currentVerdict(site, now, this.#intervalMs)
    const maintenance = this.#maintenance.inForce(site.id, now)
    const cause = isFresh(site, now, this.#intervalMs) ? site.cause : null
    return { name: site.name, status, blocked, partial, slow: site.slow && status === 'up', maintenance, cause }
  }

  /** What uptime figures over any window up to the horizon are made of (badges). */
  uptimeSource(domain: string) {
    const state = this.#byDomain.get(domain)
    return state ? uptimeSource(state, this.#maintenance.of(state.site.id)) : null
  }

  /**
   * One page of the tracked sites, ordered by domain, with every site's current verdict counted. Only the page's sites get a whole
   * status record (uptime arithmetic, ISO dates): all of them, sorted at every render, held the main thread too long at 10,000 sites.
   */
  async listPage(
    now: Date,
    page: number,
    size: number
  ): Promise<{ total: number; counts: Record<SiteStatus, number>; records: StatusRecord[] }> {
    this.#sorted ??= sortedWebDomains(this.#byDomain.keys())
    const total = this.#sorted.length
    const records = this.#sorted.slice((page - 1) * size, page * size).map((domain) => this.statusRecord(domain, now) as StatusRecord)
    const counts: Record<SiteStatus, number> = { up: 0, down: 0, unconfirmed: 0, unavailable: 0, pending: 0 }
    // Every site at each render: no object per site (`currentVerdict` here was a measurable share of
    // the main thread's allocations) and a turn of the event loop between slices.
    let seen = 0
    for (const { site } of this.#byId.values()) {
      if (!isMonitorDomain(site.domain)) counts[verdictStatus(site, now, this.#intervalMs)]++
      if (++seen % COUNT_SLICE === 0) await nextTurn()
    }
    return { total, counts, records }
  }

  /**
   * Up to `limit` status records of the tracked sites whose domains sort after `after` (all when undefined), in domain order, and
   * whether more follow: keyset paging, so sites added or removed between pages never shift the sites not yet seen.
   */
  pageAfter(after: string | undefined, limit: number, now: Date): { records: StatusRecord[]; more: boolean } {
    this.#sorted ??= sortedWebDomains(this.#byDomain.keys())
    const sorted = this.#sorted
    const lo = after === undefined ? 0 : indexAfter(sorted, after)
    const records = sorted.slice(lo, lo + limit).map((domain) => this.statusRecord(domain, now) as StatusRecord)
    return { records, more: lo + limit < sorted.length }
  }

  /** How many serialised status records are kept (see {@link statusJson}). */
  get serialisedKept(): number {
    return this.#serialised.size
  }

  /** Every change to what a site's record may say, counted (a check applied here or elsewhere, a rename, a reload, maintenance read). */
  get changes(): number {
    return this.#serialised.changes
  }

  /** The count at the site's last change (no other site and no later tracking period share it); -1: not tracked. */
  changesOf(domain: string): number {
    const state = this.#byDomain.get(domain)
    return state === undefined ? -1 : this.#serialised.changesOf(state.site.id)
  }

  /**
   * The status record as JSON text, for the status endpoint: kept until the site's state changes (a check applied, a rename, a reload)
   * or a second has passed, so a client polling one site costs one record and one serialisation a second. Within that second only what
   * moves with the clock (an ongoing outage's duration, the uptime percentages, the freshness rule) can lag.
   */
  statusJson(domain: string, now: Date): string | null {
    const state = this.#byDomain.get(domain)
    if (!state) return null
    const at = now.getTime()
    const kept = this.#serialised.get(state.site.id, at)
    if (kept !== undefined) return kept
    const json = JSON.stringify(this.statusRecord(domain, now))
    this.#serialised.set(state.site.id, json, at)
    return json
  }

  statusRecord(domain: string, now: Date): StatusRecord | null {
    const state = this.#byDomain.get(domain)
    const maintenance = state && this.#maintenance.of(state.site.id)
    return state ? statusRecord(state, now, { intervalMs: this.#intervalMs, publicUrl: this.#publicUrl, maintenance }) : null
  }
}
