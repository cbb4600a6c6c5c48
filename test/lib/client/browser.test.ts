import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { build } from 'esbuild'
import { chromiumMissing, launchChromium } from '../../helpers/browser.js'
import { ROOT } from '../../helpers/compiled.js'
import { startTrackedService } from '../../helpers/tracked-service.js'

// The client runs wherever fetch does: it bundles for a browser (esbuild, --platform=browser) with
// no Node module and no server module in it, and that bundle, loaded by a page in real headless
// Chromium, talks to the real service on loopback (real location actors probing a loopback target).

/** The client as a browser app would bundle it: ESM, one file, with esbuild's inputs. */
async function browserBundle() {
  const result = await build({
    entryPoints: ['lib/client/index.ts'],
    absWorkingDir: ROOT,
    bundle: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    write: false,
    metafile: true,
    logLevel: 'silent'
  })
  const code = result.outputFiles[0]?.text ?? ''
  return { code, inputs: Object.keys(result.metafile.inputs) }
}

t.test('the client bundles for the browser without a Node module or a server module', async (t) => {
  const { code, inputs } = await browserBundle()
  t.match(code, /^export \{[^}]*\bSiteStatusClient\b/m, 'the bundle exports the client')
  t.notMatch(code, /["']node:/, 'no node: import')
  t.notMatch(code, /\brequire\(/, 'no require()')
  const outside = inputs.filter((input) => !input.startsWith('lib/client/') && !input.startsWith('node_modules/openapi-fetch/'))
  t.same(outside, [], 'every module bundled is the client or openapi-fetch')

  // And by its sources, so that an import esbuild would resolve some other way is caught too.
  const dir = join(ROOT, 'lib/client')
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
    const specifiers = [...readFileSync(join(dir, file), 'utf8').matchAll(/^(?:import|export)[^'"]*? from '([^']+)'/gm)].map((m) => m[1])
    const foreign = specifiers.filter((s) => s !== 'openapi-fetch' && !/^\.\/[a-z-]+\.js$/.test(s ?? ''))
    t.same(foreign, [], `${relative(ROOT, join(dir, file))} imports only its neighbours and openapi-fetch`)
  }
})

const missing = chromiumMissing()
if (missing !== null) t.comment(missing)

t.test('a page in Chromium gets a site status and streams a batch through the bundled client', { skip: missing ?? false }, async (t) => {
  const { code } = await browserBundle()
  const tracked = await startTrackedService(t, { engine: 'sqlite', site: { domain: 'tracked.example.com', name: 'Tracked' }, env: {} })
  const origin = `http://127.0.0.1:${tracked.service.server.info.port}`
  const browser = await launchChromium(t)
  const context = await browser.newContext()
  t.teardown(() => context.close())
  // A page of the service's own origin (the API sends no CORS headers), served by the test, loading
  // the bundle as a module; every other request of the page reaches the service.
  await context.route(`${origin}/__client/**`, (route) =>
    route.fulfill(
      route.request().url().endsWith('.js')
        ? { contentType: 'text/javascript', body: code }
        : {
            contentType: 'text/html',
            body: '<!doctype html><title>client</title><script type="module">import * as c from "/__client/client.js"; window.siteStatus = c</script>'
          }
    )
  )
  const page = await context.newPage()
  const errors: string[] = []
  page.on('pageerror', (e) => errors.push(e.message))
  await page.goto(`${origin}/__client/index.html`)
  await page.waitForFunction(() => 'siteStatus' in window)

  const seen = await page.evaluate(
    async ({ key }) => {
      const { SiteStatusClient, SiteStatusError, isBatchCheckError } = (window as any).siteStatus
      const client = new SiteStatusClient({ baseUrl: location.origin, key })
      const status = await client.getStatus('tracked.example.com')
      const missing = await client.getStatus('untracked.example.com').catch((err: any) => ({
        own: err instanceof SiteStatusError,
        status: err.status,
        code: err.code
      }))
      const batch = client.checkMany(['tracked.example.com', 'Other.Example.com', 'https://other.example.com/', 'not a domain'])
      const lines: Array<[string, string]> = []
      for await (const line of batch) lines.push([line.domain, isBatchCheckError(line) ? line.code : line.status])
      return { status, missing, lines, summary: batch.summary, budget: client.budget, agent: navigator.userAgent }
    },
    { key: tracked.key }
  )
  t.match(seen.agent, /HeadlessChrome/, 'the calls ran in Chromium')
  t.match(seen.status, { domain: 'tracked.example.com', name: 'Tracked', url: `${tracked.config.publicUrl}/sites/tracked.example.com` })
  t.ok(
    ['up', 'down', 'unconfirmed', 'unavailable', 'pending'].includes(seen.status.status),
    `a status of the document's (${seen.status.status})`
  )
  t.same(seen.missing, { own: true, status: 404, code: 'not_found' }, "a refusal is the client's own error, in the page too")
  t.same(seen.lines.sort(), [
    ['not a domain', 'invalid_domain'],
    ['other.example.com', 'up'],
    ['tracked.example.com', 'up']
  ])
  t.same(seen.summary, { domains: 3, checked: 2, cached: 0, errors: 1 }, 'the summary, once the stream ended')
  t.match(seen.budget, { limit: 100_000, pending: 0 }, 'the budget learnt from the answers')
  t.equal(
    (await fetch(`${origin}/api/v1/rate_limit`, { headers: { authorization: `Bearer ${tracked.key}` } }).then((r) => r.json())).used,
    12,
    'two status reads and two distinct domains checked'
  )
  t.same(errors, [], 'no script errors')
})
