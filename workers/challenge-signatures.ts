/**
 * Bot-challenge and WAF block-page signatures, as described in the vendors' public docs and
 * commonly observed markers. A match turns an otherwise ordinary 4xx/503 into `blocked`: the
 * site answered, but refused the automated check, so it says nothing about the site being down.
 */

export type ChallengeKind = 'challenge' | 'denied'

export interface ChallengeSignature {
  vendor: string
  kind: ChallengeKind
  /** Response header (lower case) whose value must match `value`. */
  header?: { name: string; value: RegExp }
  /**
   * Marker searched in the first bytes of the body (read as latin1). Bodies come from anyone, so
   * every pattern must take linear time: literals and alternations of literals, never `.*` between
   * two markers (each occurrence of the first would rescan the rest of the body); that is `inOrder`.
   */
  body?: RegExp
  /** Two markers, the second somewhere after the first: two linear scans instead of `a.*b`. */
  inOrder?: readonly [RegExp, RegExp]
  /** Statuses this signature applies to, beyond the default {@link CHALLENGE_STATUSES}. */
  extraStatuses?: readonly number[]
  /**
   * The marker shows which vendor fronts the site, but is sent on its ordinary answers too (a
   * header on every response, an error page that also reports origin failures). It only names the
   * vendor of a 403 or 429, which are refusals anyway; a 503 or 401 carrying it is judged as if it
   * had no signature, so that a real outage behind that vendor still reads as down.
   */
  vendorOnly?: true
}

/** Statuses a challenge or block page normally comes with. */
export const CHALLENGE_STATUSES: ReadonlySet<number> = new Set([401, 403, 429, 503])
/** Statuses that are refusals with or without a signature (decisions.md): a marker only names the vendor. */
const REFUSALS: ReadonlySet<number> = new Set([403, 429])

// Order matters: the first match names the vendor, so specific header markers come first.
export const CHALLENGE_SIGNATURES: readonly ChallengeSignature[] = [
  // Cloudflare sends cf-mitigated only on answers its challenge or block rules produced.
  { vendor: 'cloudflare', kind: 'challenge', header: { name: 'cf-mitigated', value: /^challenge$/i } },
  { vendor: 'cloudflare', kind: 'denied', header: { name: 'cf-mitigated', value: /^block$/i } },
  {
    vendor: 'cloudflare',
    kind: 'challenge',
    body: /<title>Just a moment\.\.\.<\/title>|_cf_chl_opt|\/cdn-cgi\/challenge-platform\/|cf-chl-/i
  },
  { vendor: 'cloudflare', kind: 'denied', body: /Attention Required! \| Cloudflare/i },
  // The layout of every Cloudflare error page, its "origin is down" pages among them.
  { vendor: 'cloudflare', kind: 'denied', body: /cf-error-details/i, vendorOnly: true },
  // AWS WAF answers a Challenge with 202 and a CAPTCHA with 405 (AWS WAF developer guide).
  {
    vendor: 'aws-waf',
    kind: 'challenge',
    header: { name: 'x-amzn-waf-action', value: /^(challenge|captcha)$/i },
    extraStatuses: [202, 405]
  },
  { vendor: 'aws-waf', kind: 'challenge', body: /AwsWafIntegration|awswaf\.com/i, inOrder: [/challenge\.js/i, /awswaf/i] },
  { vendor: 'vercel', kind: 'challenge', header: { name: 'x-vercel-mitigated', value: /^challenge$/i } },
  { vendor: 'vercel', kind: 'denied', header: { name: 'x-vercel-mitigated', value: /^deny$/i } },
  // DataDome's block page loads its CAPTCHA from captcha-delivery.com; its header marks every answer it passed.
  { vendor: 'datadome', kind: 'challenge', body: /captcha-delivery\.com|dd_cookie_test/i },
  { vendor: 'datadome', kind: 'challenge', header: { name: 'x-datadome', value: /./ }, vendorOnly: true },
  { vendor: 'kasada', kind: 'challenge', body: /KPSDK|\/ips\.js\?/ },
  { vendor: 'kasada', kind: 'challenge', header: { name: 'x-kpsdk-ct', value: /./ }, vendorOnly: true },
  { vendor: 'perimeterx', kind: 'challenge', body: /_pxCaptcha|px-captcha|captcha\.px-cdn\.net/i },
  // The sensor script that a protected site embeds in its ordinary pages too.
  { vendor: 'perimeterx', kind: 'challenge', body: /_pxAppId|perimeterx/i, vendorOnly: true },
  { vendor: 'imperva', kind: 'challenge', body: /_Incapsula_Resource|Incapsula incident ID/i },
  { vendor: 'imperva', kind: 'challenge', header: { name: 'x-iinfo', value: /./ }, vendorOnly: true },
  { vendor: 'sucuri', kind: 'denied', header: { name: 'x-sucuri-block', value: /./ } },
  { vendor: 'sucuri', kind: 'denied', body: /Sucuri WebSite Firewall|sucuri\.net\/privacy-policy/i },
  { vendor: 'akamai', kind: 'challenge', body: /bm-verify/i },
  // Akamai's error page ("Reference #...") reports its origin's failures as well as its refusals,
  // and its Bot Manager cookies are named in ordinary pages' scripts.
  { vendor: 'akamai', kind: 'denied', body: /errors(\.|&#46;)edgesuite(\.|&#46;)net|Reference&#32;&#35;\d/i, vendorOnly: true },
  { vendor: 'akamai', kind: 'challenge', body: /_abck|ak_bmsc/i, vendorOnly: true }
]

const ANY_CHALLENGE_STATUS: ReadonlySet<number> = new Set([
  ...CHALLENGE_STATUSES,
  ...CHALLENGE_SIGNATURES.flatMap((s) => s.extraStatuses ?? [])
])

/** Whether any signature applies to this status at all: most answers need no look at the body. */
export function mayBeChallenge(status: number): boolean {
  return ANY_CHALLENGE_STATUS.has(status)
}

export interface ChallengeMatch {
  vendor: string
  kind: ChallengeKind
}

type Headers = Record<string, string | string[] | undefined>

function headerValues(headers: Headers, name: string): string[] {
  const v = headers[name]
  return v === undefined ? [] : Array.isArray(v) ? v : [v]
}

/**
 * The first of `signatures` (in their order) matching this response, or null. `bodyText` is the
 * capped body as latin1.
 */
export function matchChallenge(
  status: number,
  headers: Headers,
  bodyText: string,
  signatures: readonly ChallengeSignature[] = CHALLENGE_SIGNATURES
): ChallengeMatch | null {
  for (const sig of signatures) {
    if (!CHALLENGE_STATUSES.has(status) && !sig.extraStatuses?.includes(status)) continue
    if (sig.vendorOnly === true && !REFUSALS.has(status)) continue
    const header = sig.header
    const byHeader = header !== undefined && headerValues(headers, header.name).some((v) => header.value.test(v.trim()))
    const byBody = (sig.body !== undefined && sig.body.test(bodyText)) || (sig.inOrder !== undefined && inOrder(bodyText, sig.inOrder))
    if (byHeader || byBody) return { vendor: sig.vendor, kind: sig.kind }
  }
  return null
}

/** Whether `second` occurs somewhere after the first occurrence of `first`. */
function inOrder(text: string, [first, second]: readonly [RegExp, RegExp]): boolean {
  const found = first.exec(text)
  return found !== null && second.test(text.slice(found.index + found[0].length))
}
