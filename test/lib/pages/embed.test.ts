import t from 'tap'
import { embedCode, pageBadgeEmbeds, pageEmbedCode, siteBadgeEmbeds } from '../../../lib/pages/embed.js'

t.test('embed code for a plain name', async (t) => {
  t.same(embedCode({ publicUrl: 'https://status.example.net', domain: 'shop.example.com', name: 'The Shop' }), {
    html: '<img src="https://status.example.net/api/badge/shop.example.com" alt="The Shop status">',
    markdown:
      '[![The Shop status](https://status.example.net/api/badge/shop.example.com)](https://status.example.net/sites/shop.example.com)',
    url: 'https://status.example.net/api/badge/shop.example.com'
  })
})

t.test("a hostile name cannot break out of the snippet's syntax", async (t) => {
  const code = embedCode({
    publicUrl: 'http://127.0.0.1:3000',
    domain: 'x.example.com',
    name: '"><script>alert(1)</script> [a](b) \\ &amp;\n'
  })
  t.equal(
    code.html,
    '<img src="http://127.0.0.1:3000/api/badge/x.example.com" alt="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt; [a](b) \\ &amp;amp;  status">'
  )
  t.equal(
    code.markdown,
    String.raw`[!["><script>alert(1)</script> \[a\](b) \\ &amp;  status](http://127.0.0.1:3000/api/badge/x.example.com)](http://127.0.0.1:3000/sites/x.example.com)`,
    'brackets and backslashes escaped, a line break flattened (Markdown renderers escape the alt text as HTML)'
  )
})

t.test("a status page's embed code shows the page badge and links to the page", async (t) => {
  t.same(pageEmbedCode({ publicUrl: 'https://status.example.net', slug: 'acme', title: 'Acme [prod] "live"' }), {
    html: '<img src="https://status.example.net/api/badge/page/acme" alt="Acme [prod] &quot;live&quot; status">',
    markdown: String.raw`[![Acme \[prod\] "live" status](https://status.example.net/api/badge/page/acme)](https://status.example.net/status/acme)`,
    url: 'https://status.example.net/api/badge/page/acme'
  })
})

t.test("a site's page offers its uptime, response-time and chart badges, each with its embed code", async (t) => {
  const embeds = siteBadgeEmbeds({ publicUrl: 'https://status.example.net', domain: 'shop.example.com', name: 'The [Shop]' })
  t.same(
    embeds.map((e) => [e.id, e.preview, e.alt]),
    [
      ['uptime', '/api/badge/shop.example.com/uptime', 'The [Shop] uptime, last 30 days'],
      ['response-time', '/api/badge/shop.example.com/response-time', 'The [Shop] response time, last 24 hours'],
      ['chart', '/api/badge/shop.example.com/chart.svg', 'The [Shop] response-time chart, last 24 hours']
    ]
  )
  t.match(embeds[0], {
    title: 'Uptime, last 30 days',
    url: 'https://status.example.net/api/badge/shop.example.com/uptime',
    html: '<img src="https://status.example.net/api/badge/shop.example.com/uptime" alt="The [Shop] uptime, last 30 days">',
    markdown: String.raw`[![The \[Shop\] uptime, last 30 days](https://status.example.net/api/badge/shop.example.com/uptime)](https://status.example.net/sites/shop.example.com)`
  })
})

t.test("a status page offers the page's uptime and response-time badges", async (t) => {
  const embeds = pageBadgeEmbeds({ publicUrl: 'https://status.example.net', slug: 'acme', title: 'Acme "live"' })
  t.same(
    embeds.map((e) => [e.id, e.html]),
    [
      ['uptime', '<img src="https://status.example.net/api/badge/page/acme/uptime" alt="Acme &quot;live&quot; uptime, last 30 days">'],
      [
        'response-time',
        '<img src="https://status.example.net/api/badge/page/acme/response-time" alt="Acme &quot;live&quot; response time, last 24 hours">'
      ]
    ]
  )
  t.match(embeds[1]?.markdown, /\]\(https:\/\/status\.example\.net\/status\/acme\)$/, 'linking to the page')
})
