import t from 'tap'
import { createPost } from '../../../lib/webhooks/post.js'
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
