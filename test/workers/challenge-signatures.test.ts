import http from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import {
  CHALLENGE_SIGNATURES,
  CHALLENGE_STATUSES,
  matchChallenge,
  mayBeChallenge,
  type ChallengeSignature
} from '../../workers/challenge-signatures.js'
import { createLocationDispatcher, probe, type ProbeResult } from '../../workers/http-probe.js'
import { closedPort } from '../helpers/targets.js'

type Headers = Record<string, string>
interface Row {
  name: string
  status: number
  headers?: Headers
  body?: string
  want: { vendor: string; kind: string } | null
}

const akamaiErrorPage =
  '<HTML><HEAD><TITLE>Service Unavailable</TITLE></HEAD><BODY>An error occurred while processing your request.<p>Reference&#32;&#35;97&#46;1a2b3c&#46;1700000000&#46;abc<P>https&#58;&#47;&#47;errors&#46;edgesuite&#46;net&#47;97</BODY></HTML>'
const cloudflareOriginDown =
  '<html><head><title>example.com | 521: Web server is down</title></head><body><div id="cf-error-details" class="cf-error-details-wrapper">Web server is down</div></body></html>'
const pxPage =
  '<html><head><script>window._pxAppId = "PXabc123";</script><script src="//client.perimeterx.net/PXabc123/main.min.js"></script></head><body>Down for maintenance</body></html>'

// Every signature, and the markers that only name a vendor: those must never turn a 503 (or a 401)
// into a refusal, or a real outage behind that vendor would read as "not down".
const rows: Row[] = [
  {
    name: 'cf-mitigated: challenge alone',
    status: 403,
    headers: { 'cf-mitigated': 'challenge' },
    want: { vendor: 'cloudflare', kind: 'challenge' }
  },
  {
    name: 'cf-mitigated: challenge on a 503',
    status: 503,
    headers: { 'cf-mitigated': 'challenge' },
    want: { vendor: 'cloudflare', kind: 'challenge' }
  },
  { name: 'cf-mitigated: block', status: 403, headers: { 'cf-mitigated': 'block' }, want: { vendor: 'cloudflare', kind: 'denied' } },
  {
    name: 'Cloudflare interstitial body on a 503',
    status: 503,
    body: '<title>Just a moment...</title>',
    want: { vendor: 'cloudflare', kind: 'challenge' }
  },
  {
    name: 'Cloudflare managed challenge script',
    status: 403,
    body: '<script src="/cdn-cgi/challenge-platform/h/b/orchestrate/chl_page/v1"></script>',
    want: { vendor: 'cloudflare', kind: 'challenge' }
  },
  {
    name: 'Cloudflare block page',
    status: 403,
    body: '<title>Attention Required! | Cloudflare</title>',
    want: { vendor: 'cloudflare', kind: 'denied' }
  },
  {
    name: 'Cloudflare error layout on a 403 names the vendor',
    status: 403,
    body: cloudflareOriginDown,
    want: { vendor: 'cloudflare', kind: 'denied' }
  },
  { name: 'Cloudflare error layout on a 503 is an outage', status: 503, body: cloudflareOriginDown, want: null },
  {
    name: 'AWS WAF challenge action on its 202',
    status: 202,
    headers: { 'x-amzn-waf-action': 'challenge' },
    want: { vendor: 'aws-waf', kind: 'challenge' }
  },
  {
    name: 'AWS WAF CAPTCHA action on its 405',
    status: 405,
    headers: { 'x-amzn-waf-action': 'captcha' },
    want: { vendor: 'aws-waf', kind: 'challenge' }
  },
  {
    name: 'AWS WAF integration script',
    status: 403,
    body: '<script src="https://abc.token.awswaf.com/abc/challenge.js"></script>',
    want: { vendor: 'aws-waf', kind: 'challenge' }
  },
  { name: 'a 202 without the AWS header is nothing', status: 202, body: 'accepted', want: null },
  {
    name: 'AWS WAF challenge.js with awswaf after it',
    status: 503,
    body: '<script src="/x/challenge.js"></script><!-- awswaf -->',
    want: { vendor: 'aws-waf', kind: 'challenge' }
  },
  {
    name: 'awswaf before challenge.js is not the AWS marker',
    status: 503,
    body: 'awswaf <script src="/challenge.js"></script>',
    want: null
  },
  { name: 'Vercel challenge', status: 429, headers: { 'x-vercel-mitigated': 'challenge' }, want: { vendor: 'vercel', kind: 'challenge' } },
  { name: 'Vercel deny', status: 403, headers: { 'x-vercel-mitigated': 'deny' }, want: { vendor: 'vercel', kind: 'denied' } },
  {
    name: 'Vercel challenge on a 503',
    status: 503,
    headers: { 'x-vercel-mitigated': 'challenge' },
    want: { vendor: 'vercel', kind: 'challenge' }
  },
  {
    name: 'DataDome CAPTCHA page',
    status: 403,
    body: '<script src="https://ct.captcha-delivery.com/c.js"></script>',
    want: { vendor: 'datadome', kind: 'challenge' }
  },
  {
    name: 'DataDome header on a 403 names the vendor',
    status: 403,
    headers: { 'x-datadome': 'protected' },
    want: { vendor: 'datadome', kind: 'challenge' }
  },
  { name: 'DataDome header on a 503 is an outage', status: 503, headers: { 'x-datadome': 'protected' }, want: null },
  {
    name: 'Kasada challenge page',
    status: 429,
    body: '<script src="/149e9513-01fa-4fb0-aad4-566afd725d1b/2d206a39-8ed7-437e-a3be-862e0f06eea3/ips.js?tkrm_alpekz_s1.3=0"></script>',
    want: { vendor: 'kasada', kind: 'challenge' }
  },
  { name: 'Kasada header on a 503 is an outage', status: 503, headers: { 'x-kpsdk-ct': 'token' }, want: null },
  { name: 'PerimeterX CAPTCHA', status: 403, body: '<div id="px-captcha"></div>', want: { vendor: 'perimeterx', kind: 'challenge' } },
  { name: 'PerimeterX sensor on a 503 maintenance page is an outage', status: 503, body: pxPage, want: null },
  {
    name: 'Imperva challenge iframe',
    status: 503,
    body: '<iframe src="/_Incapsula_Resource?SWUDNSAI=31"></iframe>',
    want: { vendor: 'imperva', kind: 'challenge' }
  },
  {
    name: 'Imperva block page',
    status: 403,
    body: 'Request unsuccessful. Incapsula incident ID: 1234-5678',
    want: { vendor: 'imperva', kind: 'challenge' }
  },
  {
    name: 'Imperva header on a 503 is an outage',
    status: 503,
    headers: { 'x-iinfo': '9-1234-0 0NNN RT(1) q(0 -1 -1 -1) r(0 -1)' },
    want: null
  },
  { name: 'Imperva header on a 401 is no challenge', status: 401, headers: { 'x-iinfo': '9-1234-0' }, want: null },
  { name: 'Sucuri block header', status: 403, headers: { 'x-sucuri-block': 'BLK001' }, want: { vendor: 'sucuri', kind: 'denied' } },
  {
    name: 'Sucuri block page',
    status: 403,
    body: '<title>Sucuri WebSite Firewall - Access Denied</title>',
    want: { vendor: 'sucuri', kind: 'denied' }
  },
  {
    name: 'Akamai Bot Manager verification',
    status: 503,
    body: '<form id="bm-verify" method="post"></form>',
    want: { vendor: 'akamai', kind: 'challenge' }
  },
  { name: 'Akamai error page on a 403 names the vendor', status: 403, body: akamaiErrorPage, want: { vendor: 'akamai', kind: 'denied' } },
  { name: 'Akamai error page on a 503 is an outage', status: 503, body: akamaiErrorPage, want: null },
  { name: 'a plain 503 is no challenge', status: 503, body: 'Service Unavailable', want: null },
  {
    name: 'signatures only apply to refusal statuses',
    status: 200,
    headers: { 'cf-mitigated': 'challenge' },
    body: '<title>Just a moment...</title>',
    want: null
  },
  { name: 'a 500 with a challenge body is not judged', status: 500, body: '<title>Just a moment...</title>', want: null }
]

t.test('challenge signatures, vendor-only markers and statuses', async (t) => {
  for (const row of rows) {
    t.same(matchChallenge(row.status, row.headers ?? {}, row.body ?? ''), row.want, row.name)
  }
  t.ok(mayBeChallenge(503) && mayBeChallenge(202) && mayBeChallenge(405), 'statuses that may carry a challenge are looked at')
  t.notOk(mayBeChallenge(200) || mayBeChallenge(500), 'others are not')
})

// Through a real probe: the answer of `<label>.sig.test` is chosen by its label.
const pad = (n: number): string => 'x'.repeat(n)
const CAP = 64 * 1024
const answers: Record<string, { status: number; headers?: Headers; body: string }> = {
  headeronly: { status: 403, headers: { 'cf-mitigated': 'challenge' }, body: 'no markers here' },
  imperva503: { status: 503, headers: { 'x-iinfo': '9-1234-0 0NNN' }, body: 'Service Unavailable' },
  akamai503: { status: 503, body: akamaiErrorPage },
  interstitial503: { status: 503, body: '<!DOCTYPE html><title>Just a moment...</title>' },
  plain429: { status: 429, body: 'slow down' },
  plain401: { status: 401, headers: { 'www-authenticate': 'Basic realm="x"' }, body: 'auth' },
  vercel401: { status: 401, headers: { 'x-vercel-mitigated': 'challenge' }, body: '' },
  aws202: { status: 202, headers: { 'x-amzn-waf-action': 'challenge' }, body: '' },
  imperva200: { status: 200, headers: { 'x-iinfo': '9-1234-0' }, body: 'fine' },
  // The body is read up to 64 KiB: a marker inside it is seen, one just past it is not.
  inside: { status: 503, body: `${pad(CAP - 200)}_cf_chl_opt${pad(1000)}` },
  beyond: { status: 503, body: `${pad(CAP + 100)}_cf_chl_opt${pad(1000)}` }
}
const server = http.createServer((req, res) => {
  const a = answers[(req.headers.host ?? '').split('.')[0] ?? '']
  if (a === undefined) {
    res.writeHead(404).end()
    return
  }
  res.writeHead(a.status, { 'content-type': 'text/html', ...a.headers }).end(a.body)
})
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
const port = (server.address() as AddressInfo).port
const nowhere = await closedPort()
const connectTo = [
  { host1: null, port1: 443, host2: '127.0.0.1', port2: nowhere },
  { host1: null, port1: 80, host2: '127.0.0.1', port2: port }
]
const dispatcher = createLocationDispatcher({ connectTo })
t.teardown(async () => {
  await dispatcher.destroy()
  await new Promise((resolve) => server.close(resolve))
})

const run = (label: string): Promise<ProbeResult> =>
  probe({ domain: `${label}.sig.test`, dispatcher, timeoutMs: 5000, userAgent: 'site-status-probe/test', connectTo })

t.test('probes judge refusals and outages behind bot defences', async (t) => {
  const cases: Array<[string, { status: string; http_code: number; error: string | null }]> = [
    ['headeronly', { status: 'blocked', http_code: 403, error: 'blocked: challenge (cloudflare)' }],
    ['imperva503', { status: 'down', http_code: 503, error: 'http: 503' }],
    ['akamai503', { status: 'down', http_code: 503, error: 'http: 503' }],
    ['interstitial503', { status: 'blocked', http_code: 503, error: 'blocked: challenge (cloudflare)' }],
    ['plain429', { status: 'blocked', http_code: 429, error: 'blocked: http 429' }],
    ['plain401', { status: 'up', http_code: 401, error: null }],
    ['vercel401', { status: 'blocked', http_code: 401, error: 'blocked: challenge (vercel)' }],
    ['aws202', { status: 'blocked', http_code: 202, error: 'blocked: challenge (aws-waf)' }],
    ['imperva200', { status: 'up', http_code: 200, error: null }],
    ['inside', { status: 'blocked', http_code: 503, error: 'blocked: challenge (cloudflare)' }],
    ['beyond', { status: 'down', http_code: 503, error: 'http: 503' }]
  ]
  for (const [label, want] of cases) t.match(await run(label), want, label)
})

/**
 * The constructs that let a backtracking engine (V8's) take more than linear time on a body:
 * unbounded repetition (`*`, `+`, `{n,}`), backreferences and lookarounds. Without them a pattern
 * tries a bounded number of steps at each position of the text (at most its own length).
 */
function backtrackingConstructs(re: RegExp): string[] {
  const found: string[] = []
  const src = re.source
  let inClass = false
  for (let i = 0; i < src.length; i++) {
    const c = src[i] as string
    if (c === '\\') {
      const next = src[i + 1] ?? ''
      if (!inClass && /[1-9k]/.test(next)) found.push(`\\${next}`)
      i++
    } else if (inClass) {
      if (c === ']') inClass = false
    } else if (c === '[') {
      inClass = true
    } else if (c === '*' || c === '+') {
      found.push(c)
    } else if (c === '{' && /^\{\d*,\}/.test(src.slice(i))) {
      found.push(/^\{\d*,\}/.exec(src.slice(i))?.[0] as string)
    } else if (c === '(' && /^\(\?<?[=!]/.test(src.slice(i))) {
      found.push(/^\(\?<?[=!]/.exec(src.slice(i))?.[0] as string)
    }
  }
  return found
}

/** A pattern that counts the characters of text it is handed to search. */
class Counted extends RegExp {
  readonly #tally: { chars: number }
  constructor(re: RegExp, tally: { chars: number }) {
    super(re.source, re.flags)
    this.#tally = tally
  }
  override exec(text: string): RegExpExecArray | null {
    this.#tally.chars += text.length - (this.global || this.sticky ? this.lastIndex : 0)
    return super.exec(text)
  }
}

/** The signatures with every body pattern counting into `tally`. */
function counted(tally: { chars: number }): ChallengeSignature[] {
  return CHALLENGE_SIGNATURES.map((sig) => ({
    ...sig,
    ...(sig.body === undefined ? {} : { body: new Counted(sig.body, tally) }),
    ...(sig.inOrder === undefined ? {} : { inOrder: [new Counted(sig.inOrder[0], tally), new Counted(sig.inOrder[1], tally)] as const })
  }))
}

// `challenge\.js.*awswaf` rescanned the rest of the body from each of 5,000 occurrences of its first
// marker: about 330 ms of an actor's thread per such answer, past every probe deadline. Bodies come
// from anyone, so judging one must take time linear in its length: bench/challenge-signatures.mjs
// times it; these two tests state it in counts.
const fill = (unit: string, size: number) => unit.repeat(Math.ceil(size / unit.length)).slice(0, size)
const UNITS = ['challenge.js ', 'Reference&#32;&#35;', 'errors&#46;edgesuite', 'a', '<title>Just a moment..']
const STATUSES = [...CHALLENGE_STATUSES, 202, 405]

t.test('every body pattern takes linear time: literals and alternations, no repetition to backtrack', async (t) => {
  t.same(backtrackingConstructs(/challenge\.js.*awswaf/i), ['*'], 'the pattern that once took 330 ms is caught')
  t.same(backtrackingConstructs(/(a+)\1(?=b)x{2,}[*+]\d{2}/), ['+', '\\1', '(?=', '{2,}'], 'and so is every other such construct')
  for (const sig of CHALLENGE_SIGNATURES) {
    for (const re of [sig.body, ...(sig.inOrder ?? [])]) {
      if (re !== undefined) t.same(backtrackingConstructs(re), [], `${sig.vendor} ${String(re)}`)
    }
  }
})

t.test('judging a body searches its text a bounded number of times: twice the body, twice the work', async (t) => {
  const judge = (size: number): number => {
    const tally = { chars: 0 }
    const signatures = counted(tally)
    for (const status of STATUSES) for (const unit of UNITS) matchChallenge(status, {}, fill(unit, size), signatures)
    return tally.chars
  }
  const half = judge(32_768)
  const whole = judge(65_536)
  t.ok(half > 0, `${half} characters searched for the 32 KiB bodies`)
  t.ok(whole <= 2 * half + 1024, `${whole} for the 64 KiB ones: at most twice as many`)
  const patterns = CHALLENGE_SIGNATURES.reduce((n, sig) => n + (sig.body === undefined ? 0 : 1) + (sig.inOrder?.length ?? 0), 0)
  t.ok(whole <= patterns * STATUSES.length * UNITS.length * 65_536, `each of the ${patterns} body patterns searches a body once at most`)
})
