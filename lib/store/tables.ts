import type { Expectations } from '../rules/expectations.js'
import type { DownCause } from '../rules/down-cause.js'

/** Row shapes as the store hands them out (timestamps already Dates). */

export interface ApiKeyRow {
  id: number
  name: string
  key_hash: string
  rate_limit: number | null
  /** The stored scope list, comma-separated (`read,check`). */
  scopes: string
  created_at: Date
  revoked_at: Date | null
}

export type SiteStatus = 'up' | 'down' | 'unconfirmed' | 'unavailable'

export interface SiteRow {
  id: number
  /** A web site's domain; a monitor's identity, `monitor:<slug>` (lib/rules/monitor-fields.ts). */
  domain: string
  name: string
  /** `http` for a web site; `tcp`, `tls` or `dns` for a monitor (`heartbeat` rows are never read as sites). */
  kind: string
  /** The host a monitor probes; null for a web site (its domain is). */
  target: string | null
  added_at: Date
  removed_at: Date | null
  status: SiteStatus
  blocked: boolean
  partial: boolean
  response_ms: number | null
  checked_at: Date | null
  /** The current tracking period's first recorded check: monitored time starts here. */
  first_checked_at: Date | null
  /** The certificate the newest check saw: its `notAfter` and issuer (null: none seen). */
  tls_expires_at: Date | null
  tls_issuer: string | null
  /** The site's own check interval in seconds; null: CHECK_INTERVAL_S. */
  interval_s: number | null
  /** The site's expectations, each null when not set (see lib/rules/expectations.ts). */
  expect: Expectations
  /** The site's own request and assertions as stored (see SiteSettings.check); null: the plain web check. */
  check: string | null
  /** The slow rule's state: whether the site is slow now (see lib/rules/slow.ts). */
  slow: boolean
  /** Why its newest check was not clean (lib/rules/down-cause.ts); null when every location saw it up. */
  cause: DownCause | null
}
