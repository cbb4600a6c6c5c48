import { domainToASCII, domainToUnicode } from 'node:url'

export type DomainErrorCode =
  | 'not_a_string'
  | 'empty'
  | 'too_long'
  | 'label_too_long'
  | 'invalid_characters'
  | 'port'
  | 'userinfo'
  | 'path'
  | 'scheme'
  | 'ip_literal'
  | 'single_label'

// Messages are fixed per code so the (possibly huge or hostile) input is never echoed to clients.
const MESSAGES: Record<DomainErrorCode, string> = {
  not_a_string: 'domain must be a string',
  empty: 'domain must not be empty',
  too_long: 'domain must be at most 253 characters long',
  label_too_long: 'domain labels (the parts between dots) must be at most 63 characters long',
  invalid_characters: 'domain may contain only letters, digits, hyphens and dots; labels must not be empty or start or end with a hyphen',
  port: 'domain must not include a port',
  userinfo: 'domain must not include a username or password',
  path: 'domain must not include a path, query string or fragment',
  scheme: 'domain must be a hostname or an http:// or https:// URL',
  ip_literal: 'domain must be a hostname, not an IP address',
  single_label: 'domain must be a fully qualified name such as example.com'
}

export class DomainError extends Error {
  readonly code: DomainErrorCode

  constructor(code: DomainErrorCode) {
    super(MESSAGES[code])
    this.name = 'DomainError'
    this.code = code
  }
}

export type DomainResult = { ok: true; domain: string } | { ok: false; error: DomainError }

// Cheap cap so a 10 KB paste never reaches the URL machinery.
const MAX_RAW_LENGTH = 2048
const MAX_DOMAIN_LENGTH = 253
const MAX_LABEL_LENGTH = 63

const SCHEME_WITH_SLASHES = /^([a-z][a-z0-9+.-]*):\/\//i
const SCHEME_PREFIX = /^[a-z][a-z0-9+.-]*$/i
const IPV6_LIKE = /^[0-9a-f]*:[0-9a-f]*:[0-9a-f:.]*(?:%.*)?$/i
// Anything ASCII outside LDH and '.' is rejected before domainToASCII, which would
// otherwise percent-decode it or silently truncate at '/' and '\'.
const BAD_ASCII = /[^a-z0-9.\-\u0080-\uffff]/i
const PLAIN = /^[a-z0-9.-]+$/
const LDH_LABEL = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/

// An xn-- label must decode to Unicode that encodes back to it. Node 20's domainToASCII refuses one
// that does not; Node 24's passes it through unchanged ("xn--zz"), as its domainToUnicode does.
function isPunycodeLabel(label: string): boolean {
  const unicode = domainToUnicode(label)
  return unicode !== '' && unicode !== label && domainToASCII(unicode) === label
}

// WHATWG "ends in a number": such hosts are parsed as IPv4 (127.1, 0x7f000001, 2130706433).
function endsInNumber(host: string): boolean {
  const labels = host.split('.')
  if (labels.length > 1 && labels[labels.length - 1] === '') labels.pop()
  return /^(?:\d+|0x[0-9a-f]*)$/i.test(labels[labels.length - 1] ?? '')
}

export function normaliseDomain(input: unknown): string {
  if (typeof input !== 'string') throw new DomainError('not_a_string')
  if (input.length > MAX_RAW_LENGTH) throw new DomainError('too_long')
  const raw = input.trim()
  if (raw === '') throw new DomainError('empty')

  let rest = raw
  const scheme = SCHEME_WITH_SLASHES.exec(raw)
  if (scheme) {
    if (!/^https?$/i.test(scheme[1] ?? '')) throw new DomainError('scheme')
    rest = raw.slice(scheme[0].length)
  }

  const end = rest.search(/[/?#]/)
  const authority = end === -1 ? rest : rest.slice(0, end)
  const tail = end === -1 ? '' : rest.slice(end)

  if (authority.includes('@')) throw new DomainError('userinfo')
  if (authority.startsWith('[') || IPV6_LIKE.test(authority)) throw new DomainError('ip_literal')

  const colon = authority.indexOf(':')
  if (colon !== -1) {
    // Without '//', "javascript:x" or "http:example.com" is a scheme while
    // "localhost:8080" or "example.com:abc" is a port: schemes have no dots, ports start with a digit.
    const before = authority.slice(0, colon)
    const after = rest.slice(colon + 1)
    const looksLikeScheme = !scheme && SCHEME_PREFIX.test(before) && !before.includes('.') && after !== '' && !/^\d/.test(after)
    throw new DomainError(looksLikeScheme ? 'scheme' : 'port')
  }

  if (tail !== '' && tail !== '/') throw new DomainError('path')
  if (authority === '') throw new DomainError('empty')
  if (BAD_ASCII.test(authority)) throw new DomainError('invalid_characters')
  if (endsInNumber(authority)) throw new DomainError('ip_literal')

  // Plain lower-case LDH text is already what UTS-46 would return; only punycode needs its check.
  let ascii = PLAIN.test(authority) && !authority.includes('xn--') ? authority : domainToASCII(authority)
  if (ascii === '') throw new DomainError('invalid_characters')
  if (ascii.endsWith('.')) ascii = ascii.slice(0, -1)
  // UTS-46 can map non-ASCII digits and dots into an IPv4 literal, so check again.
  if (endsInNumber(ascii)) throw new DomainError('ip_literal')
  if (ascii.length > MAX_DOMAIN_LENGTH) throw new DomainError('too_long')

  const labels = ascii.split('.')
  for (const label of labels) {
    if (label.length > MAX_LABEL_LENGTH) throw new DomainError('label_too_long')
    if (!LDH_LABEL.test(label)) throw new DomainError('invalid_characters')
    if (label.startsWith('xn--') && !isPunycodeLabel(label)) throw new DomainError('invalid_characters')
  }
  if (labels.length < 2) throw new DomainError('single_label')
  return ascii
}

/**
 * Whether a URL's host (as the URL parser leaves it: lower case, punycode) is a plain name of
 * letters, digits, hyphens and dots, or a bracketed IPv6 address: nothing that could end or widen a
 * header value it is written into (a CSP source), as `*`, `;`, `,` or a quote can.
 */
export function isPlainHost(host: string): boolean {
  return /^(?:[a-z0-9-]+\.)*[a-z0-9-]+$/.test(host) || /^\[[0-9a-f:.]+\]$/.test(host)
}

export function tryNormaliseDomain(input: unknown): DomainResult {
  try {
    return { ok: true, domain: normaliseDomain(input) }
  } catch (error) {
    // Only validation failures become results; anything else is a bug and should surface.
    if (error instanceof DomainError) return { ok: false, error }
    throw error
  }
}
