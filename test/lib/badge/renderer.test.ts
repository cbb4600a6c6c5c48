import t from 'tap'
import { gunzipSync } from 'node:zlib'
import { LOGO_NAMES, LOGOS } from '../../../lib/badge/logos.js'
import { BadgeRenderer } from '../../../lib/badge/renderer.js'

const up = { label: 'Shop', message: 'up', color: 'green' as const }

t.test('a badge is drawn once and then served from memory', async (t) => {
  const renderer = new BadgeRenderer()
  const first = renderer.svg(up, 'flat')
  t.match(first.body, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/)
  t.match(first.body, /<title>Shop: up<\/title>/)
  t.match(first.body, /fill="#67ac09"/, "shields.io's green")
  t.equal(gunzipSync(first.gzip).toString(), first.body, 'the gzipped body is the same badge')
  t.match(first.etag, /^[A-Za-z0-9_-]{32}$/)
  t.equal(renderer.renders, 1)
  for (let i = 0; i < 100; i++) t.equal(renderer.svg({ ...up }, 'flat'), first, 'the same object, not a new drawing')
  t.equal(renderer.renders, 1, 'a hundred hits, one drawing')

  const plastic = renderer.svg(up, 'plastic')
  t.not(plastic.etag, first.etag, 'another style is another badge with another ETag')
  t.equal(renderer.svg({ ...up, message: 'down', color: 'red' }, 'flat').body.includes('down'), true)
  t.equal(renderer.renders, 3)
})

t.test('text from site names is escaped and control characters dropped', async (t) => {
  const renderer = new BadgeRenderer()
  const { body } = renderer.svg({ label: '<script>alert(1)</script>\u0007', message: 'up', color: 'green' }, 'flat')
  t.notMatch(body, /<script>/)
  t.match(body, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/)
  t.notOk(body.includes('\u0007'), 'no BEL character')
})

t.test("the endpoint form is shields.io's JSON", async (t) => {
  const renderer = new BadgeRenderer()
  t.same(JSON.parse(renderer.endpoint(up).body), { schemaVersion: 1, label: 'Shop', message: 'up', color: 'green', cacheSeconds: 300 })
  t.same(JSON.parse(renderer.endpoint(up, 'for-the-badge').body), {
    schemaVersion: 1,
    label: 'Shop',
    message: 'up',
    color: 'green',
    cacheSeconds: 300,
    style: 'for-the-badge'
  })
  t.not(renderer.endpoint(up).etag, renderer.svg(up, 'flat').etag)
})

t.test('the cache is bounded: labels come from URLs', async (t) => {
  const renderer = new BadgeRenderer({ maxBytes: 50_000 })
  const first = renderer.svg({ ...up, label: 'label 0' }, 'flat')
  for (let i = 1; i < 100; i++) {
    renderer.svg({ ...up, label: `label ${i}` }, 'flat')
    t.ok(renderer.bytes <= 50_000, `within the bound after ${i + 1} labels`)
  }
  t.equal(renderer.renders, 100)
  const again = renderer.svg({ ...up, label: 'label 0' }, 'flat')
  t.equal(renderer.renders, 101, 'a badge dropped when the cache filled is drawn again')
  t.equal(again.body, first.body, 'identically')
  t.equal(again.etag, first.etag)
})

t.test('a logo is part of what is drawn: inline in the SVG, as logoSvg in the JSON', async (t) => {
  const renderer = new BadgeRenderer()
  const plain = renderer.svg(up, 'flat')
  const pulse = renderer.svg(up, 'flat', false, 'pulse')
  t.not(pulse.etag, plain.etag, 'another badge')
  t.match(pulse.body, new RegExp(`<image [^>]*href="${LOGOS.pulse.dataUrl.replace(/[+/]/g, '\\$&')}"`))
  t.equal(renderer.svg(up, 'flat', false, 'pulse'), pulse, 'kept like any other')
  t.not(renderer.svg(up, 'flat', false, 'bolt').etag, pulse.etag, 'each logo its own badge')
  t.match(JSON.parse(renderer.endpoint(up, undefined, false, 'globe').body), { logoSvg: LOGOS.globe.svg })
  for (const name of LOGO_NAMES) {
    const svg = LOGOS[name].svg
    t.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" viewBox="0 0 14 14"/, `${name}: an SVG document`)
    t.notMatch(svg, /<script|href|url\(/, `${name}: nothing active, nothing fetched`)
    t.equal(Buffer.from(LOGOS[name].dataUrl.split(',')[1] ?? '', 'base64').toString(), svg, `${name}: its data URL is itself`)
  }
})
