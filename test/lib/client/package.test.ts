import t from 'tap'
import { execFile } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { SiteStatusClient, SiteStatusError } from 'site-status-api/client'
import { compiled, ROOT } from '../../helpers/compiled.js'
import { migratedDb } from '../../helpers/db.js'
import { testServer } from '../../helpers/server.js'

// What a consumer of the package gets from `import ... from 'site-status-api/client'`: the
// compiled module (package.json `exports`, through the package's self-reference here) and its
// declarations.

t.test('site-status-api/client is the compiled client, and it talks to the service', async (t) => {
  t.equal(import.meta.resolve('site-status-api/client'), compiled('lib/client/index.js'), 'resolved to dist/ through exports')
  const { db } = await migratedDb('sqlite', t)
  const { server, issueKey } = await testServer({ db })
  await server.start()
  t.teardown(() => server.stop())
  const client = new SiteStatusClient({ baseUrl: `http://127.0.0.1:${server.info.port}`, key: await issueKey({ limit: 50 }) })
  t.match(await client.getRateLimit(), { limit: 50, remaining: 50 })
  const refused = await client.getStatus('untracked.example.com').catch((err: unknown) => err)
  t.ok(refused instanceof SiteStatusError, 'its errors are its SiteStatusError')
  t.match(refused, { status: 404, code: 'not_found' })
})

t.test("the declarations tsconfig.client.json emits type a consumer's code through exports (two tsc runs, seconds)", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'site-status-consumer-'))
  t.teardown(() => {
    rmSync(dir, { recursive: true, force: true })
  })
  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc')
  const pkg = join(dir, 'node_modules/site-status-api')
  mkdirSync(pkg, { recursive: true })
  cpSync(join(ROOT, 'package.json'), join(pkg, 'package.json'))
  // The client's runtime dependency and its types, where npm would install them beside the package.
  for (const dep of ['openapi-fetch', 'openapi-typescript-helpers'])
    symlinkSync(join(ROOT, 'node_modules', dep), join(dir, 'node_modules', dep))
  await promisify(execFile)(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.client.json'), '--outDir', join(pkg, 'dist')])

  writeFileSync(
    join(dir, 'consumer.ts'),
    [
      "import { SiteStatusClient, SiteStatusError, type CheckResult, type SiteStatusErrorCode } from 'site-status-api/client'",
      "const client = new SiteStatusClient({ baseUrl: 'https://status.example.net', key: 'ssk_x' })",
      "export const check: Promise<CheckResult> = client.checkDomain('example.com')",
      'export const code = (e: SiteStatusError): SiteStatusErrorCode => e.code',
      "export const lines = async () => { for await (const line of client.checkMany(['a.example.com'])) return line.domain }",
      '// @ts-expect-error a domain is a string: the methods are typed, not any',
      'export const wrong = client.getStatus(42)'
    ].join('\n')
  )
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        target: 'ES2022',
        strict: true,
        noEmit: true,
        typeRoots: [join(ROOT, 'node_modules/@types')],
        types: ['node']
      },
      files: ['consumer.ts']
    })
  )
  const checked = await promisify(execFile)(process.execPath, [tsc, '-p', dir]).then(
    () => '',
    (err: unknown) => (err as { stdout?: string }).stdout ?? 'tsc failed'
  )
  t.equal(checked, '', 'the consumer type-checks against the declarations alone')
})
