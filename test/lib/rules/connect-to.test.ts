import t from 'tap'
import { parseConnectTo } from '../../../config/index.js'
import { applyConnectTo } from '../../../lib/rules/connect-to.js'

// curl's --connect-to: the first entry whose HOST1 and PORT1 match wins; an empty field matches any
// host or port (HOST1, PORT1) or keeps the original (HOST2, PORT2); an entry that changes nothing
// does not stop the search.
const cases: Array<[string, string, string, number, { host: string; port: number }]> = [
  ['no rules', '', 'example.com', 443, { host: 'example.com', port: 443 }],
  ['exact host and port', 'example.com:443:127.0.0.1:8443', 'example.com', 443, { host: '127.0.0.1', port: 8443 }],
  ['host matches case-insensitively', 'Example.COM:443:127.0.0.1:8443', 'example.com', 443, { host: '127.0.0.1', port: 8443 }],
  ['another port does not match', 'example.com:443:127.0.0.1:8443', 'example.com', 80, { host: 'example.com', port: 80 }],
  ['another host does not match', 'example.com:443:127.0.0.1:8443', 'example.org', 443, { host: 'example.org', port: 443 }],
  ['wildcard host', ':443:127.0.0.1:8443', 'anything.test', 443, { host: '127.0.0.1', port: 8443 }],
  ['wildcard port', 'example.com::127.0.0.1:', 'example.com', 80, { host: '127.0.0.1', port: 80 }],
  ['empty HOST2 keeps the host', 'example.com:80::8080', 'example.com', 80, { host: 'example.com', port: 8080 }],
  ['the first match wins', ':443:127.0.0.2:1,example.com:443:127.0.0.3:2', 'example.com', 443, { host: '127.0.0.2', port: 1 }],
  [
    'a match that changes nothing lets the next rule apply',
    'example.com:443::,:443:127.0.0.4:9',
    'example.com',
    443,
    { host: '127.0.0.4', port: 9 }
  ],
  ['IPv6 HOST2 in brackets', ':443:[::1]:8443', 'example.com', 443, { host: '::1', port: 8443 }],
  ['IPv6 HOST1 in brackets', '[::1]:443:127.0.0.1:1', '[::1]', 443, { host: '127.0.0.1', port: 1 }]
]

t.test("CONNECT_TO rules apply with curl's meaning", async (t) => {
  for (const [name, raw, host, port, want] of cases) t.same(applyConnectTo(parseConnectTo(raw), host, port), want, name)
})
