import t from 'tap'
import sax from 'sax'
import { statusPageFeed, xmlText } from '../../../lib/pages/status-page-feed.js'
import type { StatusPageView } from '../../../lib/pages/status-page-view.js'

t.test('text is escaped for XML, and what XML 1.0 cannot carry is dropped', async (t) => {
  const rows: Array<[string, string]> = [
    ['plain', 'plain'],
    ['A & B <c> "d" \'e\'', 'A &amp; B &lt;c&gt; &quot;d&quot; &apos;e&apos;'],
    ['&amp; stays text', '&amp;amp; stays text'],
    ['bell\u0007 and nul\u0000 and \ufffe', 'bell and nul and '],
    ['tab\tnew\nline\r', 'tab\tnew\nline\r'],
    ['bücher 日本 😀', 'bücher 日本 😀']
  ]
  for (const [input, want] of rows) t.equal(xmlText(input), want, JSON.stringify(input))
})

t.test('a feed with hostile names is still well-formed and says them whole', async (t) => {
  const hostile = 'Shop]]></title><script>x</script>\u0007'
  const view: StatusPageView = {
    slug: 'x',
    title: '<b>Acme</b> & "Co"',
    description: null,
    logo_url: null,
    state: 'major outage',
    generated_at: '2026-11-28T12:00:00.000Z',
    updated_at: '2026-11-28T11:00:00.000Z',
    sites: [],
    heartbeats: [],
    monitors: [],
    incidents: [
      { id: 7, domain: 'shop.example.com', name: hostile, started_at: '2026-11-28T11:00:00.000Z', ended_at: null, duration_seconds: 3600 }
    ]
  }
  const xml = statusPageFeed(view, 'https://status.example.net')
  const texts: string[] = []
  const parser = sax.parser(true, { xmlns: true })
  const names: string[] = []
  parser.onopentag = (tag) => names.push(tag.name)
  parser.ontext = (text) => texts.push(text)
  parser.onerror = (err) => {
    throw err
  }
  parser.write(xml).close()
  t.ok(texts.includes('<b>Acme</b> & "Co"'), 'the title, whole')
  t.ok(texts.includes('Shop]]></title><script>x</script> is down'), 'the entry title, whole, the bell dropped')
  t.notMatch(xml, /<subtitle/, 'no description: no subtitle')
  t.match(xml, '<id>tag:status.example.net,2026:status/x/outage/7</id>')
  t.same(
    names,
    ['feed', 'id', 'title', 'updated', 'link', 'link', 'author', 'name', 'generator'].concat([
      'entry',
      'id',
      'title',
      'published',
      'updated',
      'link',
      'content'
    ]),
    'no element smuggled in'
  )
})
