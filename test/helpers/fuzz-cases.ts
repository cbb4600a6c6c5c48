import type { ServerInjectOptions, ServerInjectResponse } from '@hapi/hapi'
import { tryNormaliseDomain } from '../../lib/rules/domain.js'
import { LOGO_NAMES } from '../../lib/badge/logos.js'

/** The seed of the run; a failure names the case number, so the same seed replays it exactly. */
export const FUZZ_SEED = Number(process.env.FUZZ_SEED ?? 20261122)

export interface FuzzCase {
  kind: string
  request: ServerInjectOptions
  /**
   * An HTML page route (`/`, `/sites/{domain}`): its own errors are HTML pages, the documented
   * exception to JSON; errors from routing (405, a path no route has) are still JSON.
   */
  page?: true
  /** The status the case must get, when its generator knows it; otherwise only the shape is checked. */
  status?: number | number[] | ((res: ServerInjectResponse) => number | number[])
}

/** mulberry32: small, fast and seedable, so every run sends the same requests. */
function rng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let x = Math.imul(a ^ (a >>> 15), 1 | a)
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
}

const TRACKED = 'tracked.example.com'
const MAX_BODY = 4096

/** Domain texts decisions.md rejects, and tricks with Unicode that must not slip through. */
const BAD_DOMAINS = [
  '',
  ' ',
  'localhost',
  'intranet',
  'intranet.',
  '.',
  '..',
  'a..b.com',
  '.example.com',
  'example.com..',
  '-a.com',
  'a-.com',
  'example.com:8080',
  'example.com:',
  'https://example.com:443/',
  'user@example.com',
  'user:pw@example.com',
  'https://a@b.com/',
  'https://example.com/path',
  'example.com/a',
  'example.com?q=1',
  'https://example.com#x',
  '//example.com',
  'ftp://example.com',
  'javascript:alert(1)',
  'file:///etc/passwd',
  'data:text/html,x',
  'gopher://example.com',
  'http:example.com',
  '127.0.0.1',
  '10.0.0.1',
  '169.254.169.254',
  '2130706433',
  '0177.0.0.1',
  '0x7f.0.0.1',
  '0x7f000001',
  '127.1',
  'example.1',
  '[::1]',
  '::1',
  'fe80::1',
  'fe80::1%eth0',
  '[::ffff:127.0.0.1]',
  'https://[::1]/',
  '１２７.０.０.１',
  'my_site.example.com',
  'exa mple.com',
  'exa%41mple.com',
  'example.com\\evil.com',
  '*.example.com',
  'xn--zz.com',
  'example.com／evil',
  'a\u2024b.com',
  'a'.repeat(64) + '.com',
  ('a'.repeat(62) + '.').repeat(5) + 'com',
  'x'.repeat(10_240),
  'example.com\u0000',
  '\u0000',
  'exam\u202eple.com',
  'exa\u200bmple.com',
  'exa\u200dmple.com',
  'example.com\u180e',
  '\ud800.com',
  'a.\udfff',
  '😀',
  'ex\u0301.com\u0301',
  'example\u3002com\u3002\u3002',
  '\u2028example.com',
  'example.com\t.x',
  '<script>alert(1)</script>',
  "'; drop table sites; --",
  '${jndi:ldap://x}',
  '%00',
  '%2e%2e%2f',
  '../../etc/passwd'
]
const GOOD_DOMAINS = ['example.com', 'www.example.co.uk', 'bücher.de', 'EXAMPLE.COM.', 'https://example.com/', TRACKED]
const METHODS = ['PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'PROPFIND', 'FOO', 'LINK', 'MKCOL']
const GET_PATHS = ['/api/v1/rate_limit', '/api/v1/outages', `/api/v1/status/${TRACKED}`, '/healthz']
const CONTENT_TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=xyz',
  'application/xml',
  'image/png',
  'application/jsonx',
  'text/json',
  'application/octet-stream',
  'text/html',
  'application/ld+json'
]
/** Badge routes and HTML pages, which take no key. */
const PUBLIC_PATHS = [`/api/badge/${TRACKED}`, `/api/badge/${TRACKED}/endpoint`, `/sites/${TRACKED}`, '/']
const BADGE_STYLES = ['flat', 'flat-square', 'plastic', 'for-the-badge']
const BAD_STYLES = [
  '',
  'FLAT',
  'flat ',
  ' flat',
  'social',
  'flat-squared',
  'for the badge',
  'flat\u0000',
  'plastic%',
  '0',
  'x'.repeat(2000)
]
const MAX_LABEL = 64
const JUNK = 'abcXYZ019 -_.~!$&\'()*+,;=:@"<>\\^`{|}%éß\u00ff'

export function* fuzzCases(count: number, key: string, seed = FUZZ_SEED): Generator<FuzzCase> {
  const random = rng(seed)
  const int = (n: number): number => Math.floor(random() * n)
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)] as T
  const junk = (max: number, alphabet = JUNK): string => Array.from({ length: int(max) + 1 }, () => alphabet[int(alphabet.length)]).join('')
  const auth = { authorization: `Bearer ${key}` }
  const json = { ...auth, 'content-type': 'application/json' }
  const domainText = (): string => {
    const r = random()
    if (r < 0.5) return pick(BAD_DOMAINS)
    if (r < 0.6) return pick(GOOD_DOMAINS)
    if (r < 0.8)
      return pick(GOOD_DOMAINS)
        .split('')
        .map((ch) => (random() < 0.1 ? junk(0) : ch))
        .join('')
    return junk(40)
  }
  const domainStatus = (text: string, valid: number | number[]): number | number[] => (tryNormaliseDomain(text).ok ? valid : 400)
  const check = (payload: string, headers: Record<string, string> = json): ServerInjectOptions => ({
    method: 'POST',
    url: '/api/v1/check',
    headers,
    payload
  })
  const tooBig = (payload: string): boolean => Buffer.byteLength(payload) > MAX_BODY

  const kinds: Array<[number, () => FuzzCase]> = [
    [
      8,
      () => ({ kind: 'method', request: { method: pick(METHODS), url: pick([...GET_PATHS, '/api/v1/check']), headers: auth }, status: 405 })
    ],
    [4, () => ({ kind: 'method', request: { method: 'POST', url: pick(GET_PATHS), headers: json, payload: '{}' }, status: 405 })],
    [4, () => ({ kind: 'method', request: { method: 'GET', url: '/api/v1/check', headers: auth }, status: 405 })],
    [
      8,
      () => ({
        kind: 'path',
        request: {
          url: `${pick(['/api/v1/', '/api/v2/', '/', '/api/', '/healthz/', '/api/v1/status/a/'])}${junk(30, 'abcxyz019-_~')}z`,
          headers: auth
        },
        status: 404
      })
    ],
    [4, () => ({ kind: 'path', request: { url: `/api/v1/${junk(20, 'ab%zZ9')}`, headers: auth }, status: [400, 404] })],
    [2, () => ({ kind: 'path', request: { url: `/${'a'.repeat(int(10_000) + 100)}`, headers: auth }, status: 404 })],
    [
      10,
      () => {
        const value = pick([
          () => junk(60, 'abcdefABCDEF0123456789 -_.+/=!'),
          () => `Bearer ${junk(60, 'abcdefABCDEF0123456789-_')}`,
          () => `Bearer ssk_${junk(42, 'abcdefABCDEF0123456789-_').padEnd(43, 'Q')}`,
          () => `Basic ${Buffer.from(`user:${junk(10)}`).toString('base64')}`,
          () => `Bearer ${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`,
          () => `Bearer ${key}${junk(5, 'abc')}`,
          () => `${pick(['Token', 'Key', 'Digest', 'Bearerx', ''])} ${key}`,
          () => `Bearer ${'k'.repeat(10_240)}`,
          () => 'Bearer',
          () => 'Bearer ',
          () => ''
        ])()
        return { kind: 'auth', request: { url: pick(GET_PATHS.slice(0, 3)), headers: { authorization: value } }, status: 401 }
      }
    ],
    [3, () => ({ kind: 'auth', request: { url: pick(GET_PATHS.slice(0, 3)) }, status: 401 })],
    [
      10,
      () => {
        const valid = JSON.stringify({ domain: pick(GOOD_DOMAINS) })
        const payload = pick([
          () => valid.slice(0, int(valid.length)),
          () => junk(200),
          () => pick(['[]', '[{"domain":"example.com"}]', '1', '"example.com"', 'null', 'true', '{}', '{"Domain":"example.com"}']),
          () => JSON.stringify({ domain: pick([1, true, null, [], {}, 1.5, ['example.com'], { host: 'example.com' }]) }),
          () => JSON.stringify({ domain: 'example.com', [junk(8, 'abcxyz_')]: pick([1, 'x', null]) }),
          () => '{"__proto__": {"polluted": true}, "domain": "example.com"}',
          () => '{"constructor": {"prototype": {"polluted": true}}, "domain": "example.com"}',
          () => `{"domain": ${'{"a":'.repeat(int(1500) + 1)}1${'}'.repeat(1)}`,
          () => `{"domain": ${'['.repeat(int(3000) + 1)}`,
          () => JSON.stringify({ domain: 'a'.repeat(MAX_BODY + int(40_000)) }),
          () => junk(MAX_BODY + int(10_000)),
          () => '{"domain": "example.com",}',
          () => "{'domain': 'example.com'}",
          () => '\ufeff{"domain": "example.com"}x'
        ])()
        return { kind: 'body', request: check(payload), status: tooBig(payload) ? 413 : 400 }
      }
    ],
    [
      5,
      () => ({
        kind: 'content-type',
        request: check(JSON.stringify({ domain: 'example.com' }), { ...auth, 'content-type': pick(CONTENT_TYPES) }),
        status: 415
      })
    ],
    [
      14,
      () => {
        const text = domainText()
        const payload = JSON.stringify({ domain: text })
        return { kind: 'domain-check', request: check(payload), status: tooBig(payload) ? 413 : domainStatus(text, 200) }
      }
    ],
    [
      10,
      () => {
        const text = domainText()
        let url: string
        try {
          url = `/api/v1/status/${encodeURIComponent(text)}`
        } catch {
          url = '/api/v1/status/%ZZ'
        } // lone surrogates cannot be encoded
        // '', '.' and '..' leave no domain segment once the URL's dot segments are resolved: no such route.
        const parsed = tryNormaliseDomain(text)
        const status = ['', '.', '..'].includes(text)
          ? 404
          : url.endsWith('%ZZ')
            ? [400, 404]
            : domainStatus(text, parsed.ok && parsed.domain === TRACKED ? 200 : 404)
        return { kind: 'domain-status', request: { url, headers: auth }, status }
      }
    ],
    [
      10,
      () => {
        const params = new URLSearchParams()
        // Set inside add(), which the compiler's narrowing does not follow.
        let bad = false as boolean
        let maybe = false as boolean
        const add = (name: string, value: string, invalid: boolean | 'maybe'): void => {
          params.append(name, value)
          if (invalid === 'maybe') maybe = true
          else bad ||= invalid
        }
        if (random() < 0.6) {
          const [v, invalid] = pick<[string, boolean | 'maybe']>([
            ['1', false],
            ['50', false],
            ['200', false],
            ['0', true],
            ['201', true],
            ['-1', true],
            ['1.5', true],
            ['abc', true],
            ['', true],
            ['99999999999999999999', true],
            ['NaN', true],
            ['Infinity', true],
            ['1,2', true],
            ['1e2', 'maybe'],
            [' 5', 'maybe'],
            ['0x10', 'maybe'],
            ['٣', true]
          ])
          add('limit', v, invalid)
        }
        if (random() < 0.5) {
          const [v, invalid] = pick<[string, boolean]>([
            ['0', false],
            ['1', false],
            ['2', true],
            ['true', true],
            ['yes', true],
            ['', true],
            [' 1', true],
            ['01', true]
          ])
          add('ongoing', v, invalid)
        }
        if (random() < 0.3) {
          const d = domainText()
          add('domain', d, d.length > 2048 || !tryNormaliseDomain(d).ok)
        }
        if (random() < 0.2) add('cursor', junk(30), 'maybe')
        if (random() < 0.2) add(pick(['foo', 'limit[]', '__proto__', 'offset', 'page', 'LIMIT']), junk(5), true)
        if (random() < 0.1) {
          add('limit', '10', true)
          add('limit', '20', true)
        }
        const status = maybe ? [200, 400] : bad ? 400 : 200
        return { kind: 'query', request: { url: `/api/v1/outages?${params.toString()}`, headers: auth }, status }
      }
    ],
    [
      6,
      () => {
        const headers: Record<string, string> = { ...auth }
        for (let i = int(20); i >= 0; i--) headers[`x-${junk(10, 'abcdefghij-')}`] = junk(int(2) ? 50 : 20_000, 'abcXYZ019 -_.;=')
        if (random() < 0.3) headers.accept = pick(['application/xml', 'text/html', '*/*;q=0', 'image/*', junk(20, 'abc/;=')])
        if (random() < 0.3) headers['accept-encoding'] = pick(['gzip', 'br', 'identity;q=0', junk(10, 'abc,;=')])
        if (random() < 0.3) headers['content-type'] = pick(CONTENT_TYPES)
        return { kind: 'headers', request: { url: pick(GET_PATHS), headers }, status: 200 }
      }
    ],
    [
      8,
      () => {
        const base = pick<ServerInjectOptions>([
          { url: `/api/v1/status/${TRACKED}`, headers: auth },
          { url: '/api/v1/outages?limit=10&ongoing=1', headers: auth },
          check(JSON.stringify({ domain: 'example.com' }))
        ])
        const mutate = (s: string): string =>
          s
            .split('')
            .map((ch) => (random() < 0.08 ? junk(0) : ch))
            .join('')
        const text = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v))
        const url = mutate(text(base.url)).replace(/^[^/]/, '/')
        return {
          kind: 'mutation',
          request: { ...base, url, ...(base.payload === undefined ? {} : { payload: mutate(text(base.payload)) }) }
        }
      }
    ]
  ]
  // Badges: a domain of any shape and `style`/`label` valid, invalid, repeated or alongside unknown
  // parameters. Any valid domain gets a badge (tracked or not); an invalid one or option is a 400.
  const badgeQuery = (): { query: string; bad: boolean } => {
    const params = new URLSearchParams()
    let bad = false
    if (random() < 0.6) {
      if (random() < 0.6) params.append('style', pick(BADGE_STYLES))
      else {
        params.append('style', pick([...BAD_STYLES, junk(12)]))
        bad ||= !BADGE_STYLES.includes(params.get('style') ?? '')
      }
    }
    if (random() < 0.6) {
      const label = pick([
        () => junk(int(MAX_LABEL) + 1),
        () => pick(['', 'status', 'My Shop', 'Bücher 📚', 'a\u202eb', '<script>alert(1)</script>', '"quoted" & <b>']),
        () => 'l'.repeat(MAX_LABEL + 1 + int(5000)),
        () => `${junk(10)}${pick(['\u0000', '\n', '\r', '\t', '\u001b', '\u007f', '\u0085'])}${junk(5)}`
      ])()
      params.append('label', label)
      bad ||= label.length > MAX_LABEL || /\p{Cc}/u.test(label)
    }
    if (random() < 0.1) {
      params.append(pick(['style', 'label']), 'flat')
      bad ||= params.getAll('style').length > 1 || params.getAll('label').length > 1
    }
    if (random() < 0.3) {
      const logo = pick([...LOGO_NAMES, 'github', 'https://example.com/x.svg', junk(8)])
      params.append('logo', logo)
      if (random() < 0.1) params.append('logo', pick(LOGO_NAMES))
      bad ||= !(LOGO_NAMES as readonly string[]).includes(logo) || params.getAll('logo').length > 1
    }
    if (random() < 0.2) params.append(pick(['foo', 'color', '__proto__', 'cacheSeconds']), junk(8))
    const query = params.toString()
    return { query: query === '' ? '' : `?${query}`, bad }
  }
  /** A figure badge's own parameters: `window`, and for a response time `thresholds`, valid or not. */
  const figureQuery = (responseTime: boolean): { query: string; bad: boolean } => {
    const params = new URLSearchParams()
    let bad = false
    if (random() < 0.6) {
      const window = pick(['24h', '7d', '30d', '90d', '1y', '', '24H', junk(4)])
      params.append('window', window)
      bad ||= !['24h', '7d', '30d', '90d'].includes(window)
    }
    if (responseTime && random() < 0.4) {
      const thresholds = pick(['300,1000,3000', '1,2,60000', '3,2,1', '0,1,2', '1,2,60001', '1,2', junk(10)])
      params.append('thresholds', thresholds)
      bad ||= !['300,1000,3000', '1,2,60000'].includes(thresholds)
    }
    return { query: params.toString(), bad }
  }
  /** A domain text as a path segment, and what the path resolves to when it has no segment left. */
  const segment = (text: string): string => {
    try {
      return encodeURIComponent(text)
    } catch {
      return '%ZZ'
    } // lone surrogates cannot be encoded
  }
  const pageShape = { page: true } as const
  kinds.push(
    [
      8,
      () => {
        const text = domainText()
        const { query, bad } = badgeQuery()
        const seg = segment(text)
        // '' and '.' leave /api/badge/, '..' leaves /api/: no such route.
        const status = ['', '.', '..'].includes(text) ? 404 : seg === '%ZZ' ? [400, 404] : bad ? 400 : domainStatus(text, 200)
        return { kind: 'badge', request: { url: `/api/badge/${seg}${query}` }, status }
      }
    ],
    [
      4,
      () => {
        const text = domainText()
        const { query, bad } = badgeQuery()
        const seg = segment(text)
        // '.' leaves /api/badge/endpoint: the SVG route for the name "endpoint", which is no domain.
        const status =
          text === '' || text === '..' ? 404 : text === '.' ? 400 : seg === '%ZZ' ? [400, 404] : bad ? 400 : domainStatus(text, 200)
        return { kind: 'badge-endpoint', request: { url: `/api/badge/${seg}/endpoint${query}` }, status }
      }
    ],
    [
      4,
      () => {
        // Paths that collapse ('', '.', '..') are the other badges' cases.
        const text = pick([() => domainText(), () => TRACKED])()
        const shown = ['', '.', '..'].includes(text) ? TRACKED : text
        const figure = pick(['uptime', 'uptime/endpoint', 'response-time', 'response-time/endpoint'])
        const options = badgeQuery()
        const own = figureQuery(figure.startsWith('response-time'))
        const query = [options.query.replace(/^\?/, ''), own.query].filter((q) => q !== '').join('&')
        const seg = segment(shown)
        const status = seg === '%ZZ' ? [400, 404] : options.bad || own.bad ? 400 : domainStatus(shown, 200)
        return { kind: 'badge-figure', request: { url: `/api/badge/${seg}/${figure}${query === '' ? '' : `?${query}`}` }, status }
      }
    ],
    [
      6,
      () => {
        const text = domainText()
        const seg = segment(text)
        const parsed = tryNormaliseDomain(text)
        // '' and '.' leave /sites/ (no such route), '..' leaves / (the site list).
        const status =
          text === '' || text === '.'
            ? 404
            : text === '..'
              ? 200
              : seg === '%ZZ'
                ? [400, 404]
                : !parsed.ok
                  ? 400
                  : parsed.domain === TRACKED
                    ? 200
                    : 404
        const query = random() < 0.2 ? `?${pick(['page=2', 'x=1', 'domain=a', junk(10, 'abc=&')])}` : ''
        return { kind: 'page-site', request: { url: `/sites/${seg}${query}` }, status, ...pageShape }
      }
    ],
    [
      3,
      () => {
        const [page, status] = pick<[string | string[] | undefined, number]>([
          [undefined, 200],
          ['1', 200],
          ['2', 404],
          ['999999', 404],
          ['0', 400],
          ['-1', 400],
          ['1.5', 400],
          ['abc', 400],
          ['', 400],
          ['1e3', 400],
          [' 1', 400],
          ['01', 400],
          ['1000000', 400],
          ['٣', 400],
          ['0x1', 400],
          ['9'.repeat(400), 400],
          [['1', '2'], 400]
        ])
        const params = new URLSearchParams()
        for (const p of page === undefined ? [] : [page].flat()) params.append('page', p)
        if (random() < 0.2) params.append(pick(['sort', 'q', '__proto__']), junk(6))
        const query = params.toString()
        return { kind: 'page-index', request: { url: `/${query === '' ? '' : `?${query}`}` }, status, ...pageShape }
      }
    ],
    [4, () => ({ kind: 'method', request: { method: pick([...METHODS, 'POST']), url: pick(PUBLIC_PATHS) }, status: 405 })]
  )
  const total = kinds.reduce((sum, [w]) => sum + w, 0)
  for (let i = 0; i < count; i++) {
    let r = random() * total
    const make = kinds.find(([w]) => (r -= w) < 0)?.[1] ?? (kinds[0] as [number, () => FuzzCase])[1]
    yield make()
  }
}
