import t from 'tap'
import { clientAddress } from '../../../lib/rules/client-address.js'

t.test("a request's client address: the peer, or what trusted proxies say", async (t) => {
  const proxies = ['10.0.0.0/8', '127.0.0.1']
  const rows: Array<[string, string, string | string[] | undefined, readonly string[], string]> = [
    ['no proxy trusted: the peer, whatever the header says', '127.0.0.1', '203.0.113.9', [], '127.0.0.1'],
    ['an untrusted peer: its header is not believed', '198.51.100.4', '203.0.113.9', proxies, '198.51.100.4'],
    ['a trusted peer without the header: the peer', '127.0.0.1', undefined, proxies, '127.0.0.1'],
    ['a trusted peer: the address it appended', '127.0.0.1', '203.0.113.9', proxies, '203.0.113.9'],
    ['what the client wrote to the left is not believed', '127.0.0.1', '192.0.2.1, 203.0.113.9', proxies, '203.0.113.9'],
    [
      'through two trusted proxies: the first untrusted from the right',
      '127.0.0.1',
      '192.0.2.1, 203.0.113.9, 10.1.2.3',
      proxies,
      '203.0.113.9'
    ],
    ['every hop trusted: the leftmost', '127.0.0.1', '10.0.0.5, 10.1.2.3', proxies, '10.0.0.5'],
    ['a malformed hop where the client should be: the last trusted hop', '127.0.0.1', 'evil, 10.1.2.3', proxies, '10.1.2.3'],
    ['a malformed header: the peer', '127.0.0.1', 'not an address', proxies, '127.0.0.1'],
    ['the header repeated: read as one list', '127.0.0.1', ['192.0.2.1', '203.0.113.9'], proxies, '203.0.113.9'],
    ['IPv6 clients', '127.0.0.1', '2001:db8::7', proxies, '2001:db8::7']
  ]
  for (const [name, peer, header, trusted, want] of rows) t.equal(clientAddress(peer, header, trusted), want, name)
})
