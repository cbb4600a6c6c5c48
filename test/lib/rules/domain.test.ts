import t from 'tap'
import { DomainError, normaliseDomain, tryNormaliseDomain } from '../../../lib/rules/domain.js'
import type { DomainErrorCode } from '../../../lib/rules/domain.js'

// 63 + 1 + 63 + 1 + 63 + 1 + 61 = 253 characters.
const name253 = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`
const name254 = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(62)}`
const label63 = `${'x'.repeat(63)}.com`
const label64 = `${'x'.repeat(64)}.com`
// Each label is 57 characters in Unicode but 63 once converted to punycode.
const umlautLabel = 'ü'.repeat(57)

const accepted: Array<{ title: string; input: string; domain: string }> = [
  { title: 'a plain host is returned unchanged', input: 'example.com', domain: 'example.com' },
  { title: 'a multi-label host is returned unchanged', input: 'www.example.co.uk', domain: 'www.example.co.uk' },
  { title: 'upper case is lowered', input: 'WWW.Example.COM', domain: 'www.example.com' },
  { title: 'one trailing dot is stripped', input: 'example.com.', domain: 'example.com' },
  { title: 'an https URL with a bare slash is reduced to its host', input: 'https://Example.COM/', domain: 'example.com' },
  { title: 'an http URL without a slash is reduced to its host', input: 'http://example.com', domain: 'example.com' },
  { title: 'an upper-case scheme is accepted', input: 'HTTPS://example.com', domain: 'example.com' },
  { title: 'a host followed by a bare slash is accepted', input: 'example.com/', domain: 'example.com' },
  { title: 'a German IDN becomes punycode', input: 'bücher.de', domain: 'xn--bcher-kva.de' },
  { title: 'an upper-case German IDN becomes the same punycode', input: 'BÜCHER.de', domain: 'xn--bcher-kva.de' },
  { title: 'a Cyrillic domain becomes punycode', input: 'пример.рф', domain: 'xn--e1afmkfd.xn--p1ai' },
  { title: 'existing punycode is kept', input: 'xn--bcher-kva.de', domain: 'xn--bcher-kva.de' },
  { title: 'full-width letters and dots are mapped to ASCII', input: 'ｅｘａｍｐｌｅ．ｃｏｍ', domain: 'example.com' },
  { title: 'an ideographic full stop is mapped to a dot', input: 'example。com', domain: 'example.com' },
  { title: 'surrounding whitespace is trimmed', input: ' \t example.com \n', domain: 'example.com' },
  { title: 'whitespace around a URL is trimmed', input: '  https://example.com/  ', domain: 'example.com' },
  { title: 'hyphens and digits inside labels are fine', input: 'my-site2.example-1.com', domain: 'my-site2.example-1.com' },
  { title: 'a name whose last label only starts with digits is not an IP', input: '1.2.3.a1', domain: '1.2.3.a1' },
  { title: 'a 253-character name is accepted', input: name253, domain: name253 },
  { title: 'a 253-character name with a trailing dot is accepted', input: `${name253}.`, domain: name253 },
  { title: 'a 63-character label is accepted', input: label63, domain: label63 }
]

const rejected: Array<{ title: string; input: unknown; code: DomainErrorCode }> = [
  { title: 'a number is not a string', input: 42, code: 'not_a_string' },
  { title: 'an object is not a string', input: { domain: 'example.com' }, code: 'not_a_string' },
  { title: 'null is not a string', input: null, code: 'not_a_string' },
  { title: 'undefined is not a string', input: undefined, code: 'not_a_string' },
  { title: 'an empty string is empty', input: '', code: 'empty' },
  { title: 'a whitespace-only string is empty', input: ' \t\n ', code: 'empty' },
  { title: 'a scheme with no host is empty', input: 'https://', code: 'empty' },
  { title: 'a 254-character name is too long', input: name254, code: 'too_long' },
  {
    title: 'an IDN that exceeds 253 characters only as punycode is too long',
    input: Array(4).fill(umlautLabel).join('.'),
    code: 'too_long'
  },
  { title: 'a huge junk string is too long', input: 'a'.repeat(10_000), code: 'too_long' },
  { title: 'a huge string is too long before any other check', input: `${'x'.repeat(3000)}@example.com:8080`, code: 'too_long' },
  { title: 'a 64-character label is too long', input: label64, code: 'label_too_long' },
  { title: 'an IDN label over 63 characters as punycode is too long', input: `${'üä'.repeat(28)}.de`, code: 'label_too_long' },
  { title: 'an underscore is an invalid character', input: 'my_site.example.com', code: 'invalid_characters' },
  { title: 'an empty label is invalid', input: 'a..b.com', code: 'invalid_characters' },
  { title: 'two trailing dots leave an empty label', input: 'example.com..', code: 'invalid_characters' },
  { title: 'a leading dot is invalid', input: '.example.com', code: 'invalid_characters' },
  { title: 'a lone dot is invalid', input: '.', code: 'invalid_characters' },
  { title: 'a label starting with a hyphen is invalid', input: '-example.com', code: 'invalid_characters' },
  { title: 'a label ending with a hyphen is invalid', input: 'example-.com', code: 'invalid_characters' },
  { title: 'an inner space is invalid', input: 'exa mple.com', code: 'invalid_characters' },
  { title: 'a percent-encoded character is invalid', input: 'exa%41mple.com', code: 'invalid_characters' },
  { title: 'a backslash is invalid', input: 'example.com\\evil.com', code: 'invalid_characters' },
  { title: 'a wildcard is invalid', input: '*.example.com', code: 'invalid_characters' },
  { title: 'a one-dot leader that UTS-46 rejects is invalid', input: 'a\u2024b.com', code: 'invalid_characters' },
  { title: 'invalid punycode is invalid', input: 'xn--zz.com', code: 'invalid_characters' },
  { title: 'invalid punycode in an inner label is invalid', input: 'www.xn--zz.example.com', code: 'invalid_characters' },
  { title: 'punycode that decodes to plain ASCII is invalid', input: 'xn--abc-.com', code: 'invalid_characters' },
  { title: 'a full-width slash is invalid after mapping', input: 'example.com／evil', code: 'invalid_characters' },
  { title: 'a port on a bare host is rejected', input: 'example.com:8080', code: 'port' },
  { title: 'a port on a single-label host is reported as a port', input: 'localhost:8080', code: 'port' },
  { title: 'the default https port is still rejected', input: 'https://example.com:443/', code: 'port' },
  { title: 'the default http port is still rejected', input: 'http://example.com:80', code: 'port' },
  { title: 'an empty port is rejected', input: 'example.com:', code: 'port' },
  { title: 'a non-numeric port on a dotted host is a port', input: 'example.com:abc', code: 'port' },
  { title: 'a port before a path is reported as a port', input: 'example.com:8080/a', code: 'port' },
  { title: 'a user is rejected', input: 'user@example.com', code: 'userinfo' },
  { title: 'a user and password are rejected', input: 'user:pw@example.com', code: 'userinfo' },
  { title: 'userinfo in a URL is rejected', input: 'https://user:pw@example.com/', code: 'userinfo' },
  { title: 'a path is rejected', input: 'https://example.com/a', code: 'path' },
  { title: 'a path on a bare host is rejected', input: 'example.com/a/b', code: 'path' },
  { title: 'a query is rejected', input: 'https://example.com/?q=1', code: 'path' },
  { title: 'a query without a slash is rejected', input: 'example.com?q=1', code: 'path' },
  { title: 'a fragment is rejected', input: 'https://example.com#top', code: 'path' },
  { title: 'an at sign inside a path is a path, not userinfo', input: 'example.com/a@b', code: 'path' },
  { title: 'a protocol-relative URL is rejected', input: '//example.com', code: 'path' },
  { title: 'an ftp URL is rejected', input: 'ftp://x.com', code: 'scheme' },
  { title: 'a javascript URL is rejected', input: 'javascript:alert(1)', code: 'scheme' },
  { title: 'a file URL is rejected', input: 'file:///', code: 'scheme' },
  { title: 'a file URL with a single slash is rejected', input: 'file:/etc/passwd', code: 'scheme' },
  { title: 'an http URL without slashes is rejected', input: 'http:example.com', code: 'scheme' },
  { title: 'a dotted IPv4 address is an IP literal', input: '127.0.0.1', code: 'ip_literal' },
  { title: 'an IPv4 URL is an IP literal', input: 'http://192.168.0.1/', code: 'ip_literal' },
  { title: 'a decimal IPv4 spelling is an IP literal', input: '2130706433', code: 'ip_literal' },
  { title: 'an octal IPv4 spelling is an IP literal', input: '0177.0.0.1', code: 'ip_literal' },
  { title: 'a hex-dotted IPv4 spelling is an IP literal', input: '0x7f.0.0.1', code: 'ip_literal' },
  { title: 'a hex IPv4 spelling is an IP literal', input: '0x7f000001', code: 'ip_literal' },
  { title: 'a shortened IPv4 spelling is an IP literal', input: '127.1', code: 'ip_literal' },
  { title: 'an IPv4 address with a trailing dot is an IP literal', input: '127.0.0.1.', code: 'ip_literal' },
  { title: 'a name ending in a numeric label is an IP literal', input: 'example.1', code: 'ip_literal' },
  { title: 'a name ending in a hex label is an IP literal', input: 'example.0x7f', code: 'ip_literal' },
  { title: 'full-width digits mapping to IPv4 are an IP literal', input: '１２７.０.０.１', code: 'ip_literal' },
  { title: 'a bracketed IPv6 loopback is an IP literal', input: '[::1]', code: 'ip_literal' },
  { title: 'a bare IPv6 loopback is an IP literal', input: '::1', code: 'ip_literal' },
  { title: 'a bracketed IPv6 address is an IP literal', input: '[2001:db8::1]', code: 'ip_literal' },
  { title: 'a bare IPv6 address starting with a letter is an IP literal', input: 'fe80::1', code: 'ip_literal' },
  { title: 'an IPv6 address with a zone is an IP literal', input: 'fe80::1%eth0', code: 'ip_literal' },
  { title: 'an IPv6 URL is an IP literal', input: 'https://[::1]/', code: 'ip_literal' },
  { title: 'an IPv6 URL with a port is reported as an IP literal', input: 'http://[::1]:80/', code: 'ip_literal' },
  { title: 'localhost is a single label', input: 'localhost', code: 'single_label' },
  { title: 'an intranet name is a single label', input: 'intranet', code: 'single_label' },
  { title: 'a single label with a trailing dot is still a single label', input: 'intranet.', code: 'single_label' },
  { title: 'a single-label URL is a single label', input: 'https://intranet/', code: 'single_label' }
]

t.test('accepted domains are normalised', async (t) => {
  for (const { title, input, domain } of accepted) {
    t.test(title, async (t) => {
      t.equal(normaliseDomain(input), domain)
      t.same(tryNormaliseDomain(input), { ok: true, domain })
    })
  }
})

t.test('rejected domains fail with a stable code and a short message', async (t) => {
  for (const { title, input, code } of rejected) {
    t.test(title, async (t) => {
      const result = tryNormaliseDomain(input)
      if (result.ok) {
        t.fail(`expected ${code}, got ${JSON.stringify(result.domain)}`)
        return
      }
      t.type(result.error, DomainError)
      t.equal(result.error.code, code)
      t.match(result.error.message, /^domain /)
      t.ok(result.error.message.length < 200, 'message is shorter than 200 characters')
      t.throws(() => normaliseDomain(input), { name: 'DomainError', code, message: result.error.message })
    })
  }
})

t.test('error messages never echo the input', async (t) => {
  const junk = 'zq'.repeat(500) + '.com'
  for (const input of [junk, `https://${junk}/path`, `${junk}:8080`, `user@${junk}`, `zqzqzqzq_zqzq.com`]) {
    const result = tryNormaliseDomain(input)
    t.equal(result.ok, false, 'input is rejected')
    if (!result.ok) t.notMatch(result.error.message, /zqzq/, 'message does not contain the input')
  }
})

t.test('DomainError is an Error with a name and code', async (t) => {
  const error = new DomainError('port')
  t.ok(error instanceof Error)
  t.equal(error.name, 'DomainError')
  t.equal(error.code, 'port')
  t.equal(error.message, 'domain must not include a port')
})
