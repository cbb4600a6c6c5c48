import t from 'tap'
import { createPost, errorText } from '../../../lib/webhooks/post.js'
import { classify } from '../../../workers/probe-errors.js'
import { X509_ERROR_CODES } from '../../../workers/tls-errors.js'
import { receiver } from '../../helpers/webhooks.js'

t.test('the target policy judges the address dialled at send time (a name that turned private is not fetched)', async (t) => {
  const r = await receiver(t)
  const port = new URL(r.url).port
  // The name resolved to a public address when the webhook was made; now it answers loopback.
  const outbound = createPost({ policy: { allowPrivate: false }, lookup: async () => ['127.0.0.1'], userAgent: 'test' })
  t.teardown(() => outbound.close())
  const byName = await outbound.post({ url: `http://rebind.example.com:${port}/hook`, headers: {}, body: '{}' })
  t.same(byName, { status: null, error: 'policy: url resolves to a non-public address' })
  const byAddress = await outbound.post({ url: r.url, headers: {}, body: '{}' })
  t.same(byAddress, { status: null, error: 'policy: url resolves to a non-public address' })
  t.equal(r.got.length, 0, 'the receiver was never reached')
})

t.test('redirects are answers, not followed; a refused port is a connect error', async (t) => {
  const r = await receiver(t, [302])
  const outbound = createPost({ policy: { allowPrivate: true }, userAgent: 'test' })
  t.teardown(() => outbound.close())
  t.same(await outbound.post({ url: r.url, headers: {}, body: '{}' }), { status: 302, error: null })
  t.equal(r.got.length, 1)
  t.same(await outbound.post({ url: 'http://127.0.0.1:1/hook', headers: {}, body: '{}' }), { status: null, error: 'connect: ECONNREFUSED' })
})

t.test('a delivery error reads as a probe error does: one classifier for both', async (t) => {
  const coded = (code: string): Error => Object.assign(new Error('10.1.2.3 said no'), { code })
  const codes = [
    ...X509_ERROR_CODES,
    'ERR_TLS_CERT_ALTNAME_INVALID',
    'ERR_SSL_WRONG_VERSION_NUMBER',
    'ENOTFOUND',
    'ECONNREFUSED',
    'EAI_AGAIN'
  ]
  for (const code of codes) t.equal(errorText(coded(code), false), classify(coded(code), 15_000, false, false).error, code)
  t.equal(errorText(coded('UNABLE_TO_VERIFY_LEAF_SIGNATURE'), false), 'tls: UNABLE_TO_VERIFY_LEAF_SIGNATURE')
  t.equal(errorText(new Error('10.1.2.3 said no'), false), 'http: ERROR', 'no code: the message, which may hold addresses, is never shown')
  t.equal(errorText(coded('ECONNRESET'), true), 'timeout: no response in 15000 ms')
})
