import { checkDigest, isPlainWebCheck, type CheckSpec } from '../rules/check-spec.js'
import type { CheckStatus } from '../rules/consensus.js'
import { sameExpectations, type Expectations, type LocationExpectations } from '../rules/expectations.js'
import { isSlowCheck } from '../rules/slow.js'

/*
 * What an on-demand check asks besides its domain: the expectations its locations judge answers by,
 * and the key that keeps checks judged by different ones apart.
 */

/** What one check asks: a domain and, when given, the expectations (normal form) its answers are judged by. */
export interface Ask {
  /** The check's domain: a web site's, or a tracked monitor's identity (`monitor:<slug>`), which its result is recorded under. */
  domain: string
  /** The host probed: the domain, or a monitor's target. */
  target: string
  expect: Readonly<Expectations> | null
  /** What each location does (lib/rules/check-spec.ts); null: the plain web check. */
  check: CheckSpec | null
  /** What its result is kept and its run shared under ({@link checkKey}). */
  runKey: string
  /** Judged as the site's settings judge it: the result may be recorded for a tracked site. */
  record: boolean
}

/**
 * The key a check's result is kept and its probe run shared under, here and across instances: the
 * domain alone without expectations, as before they existed; else the domain and the expectations'
 * normal form, so that checks judged by different rules never answer for each other. A domain
 * holds no space, and JSON no raw newline (check-runs' messages split on the first one).
 */
export function checkKey(domain: string, expect: Readonly<Expectations> | null, check: CheckSpec | null = null): string {
  // A check's own request and assertions by their digest: a key never holds a secret header.
  const asked = check === null ? domain : `${domain} check:${checkDigest(check)}`
  if (expect === null) return asked
  return `${asked} expect:${JSON.stringify([expect.status, expect.body_contains, expect.max_response_ms])}`
}

/** The part of the expectations each location judges; undefined when that part sets nothing. */
export function judgedAtLocations(expect: Readonly<Expectations> | null): LocationExpectations | undefined {
  if (expect === null || (expect.status === null && expect.body_contains === null)) return undefined
  return { status: expect.status, body_contains: expect.body_contains }
}

/**
 * A check of `domain` asking `given` expectations, or (given none) the site's own `site` ones: a
 * tracked site's checks are judged by its settings, whoever asks. Only a check judged as the site's
 * settings judge it is recorded; one asking other expectations, or a check of its own (`check`,
 * other than the site's), is answered, never recorded. `siteCheck` is the tracked site's own
 * request and assertions, which a check asking none sends.
 */
export function ask(
  domain: string,
  given: Readonly<Expectations> | null = null,
  site: Readonly<Expectations> | null = null,
  check: CheckSpec | null = null,
  siteCheck: CheckSpec | null = null,
  target: string = domain
): Ask {
  const expect = given ?? site
  const asked = isPlainWebCheck(check) ? siteCheck : check
  const own = isPlainWebCheck(check) || (siteCheck !== null && checkDigest(check as CheckSpec) === checkDigest(siteCheck))
  const record = own && (given === null || (site !== null && sameExpectations(given, site)))
  const spec = isPlainWebCheck(asked) ? null : asked
  return { domain, target, expect, check: spec, runKey: checkKey(domain, expect, spec), record }
}

/** The result's `slow`, present only when the check gave `max_response_ms`: existing answers keep their fields. */
export function slowField(
  expect: Readonly<Expectations> | null,
  consensus: { status: CheckStatus; response_ms: number | null }
): { slow?: boolean } {
  const max = expect?.max_response_ms ?? null
  if (max === null) return {}
  return { slow: isSlowCheck({ status: consensus.status, response_ms: consensus.response_ms, max_response_ms: max }) }
}

export type { SharedRuns } from '../sharing/shared-runs.js'
