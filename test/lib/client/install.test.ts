import t from 'tap'
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { packClient } from '../../../scripts/client-pack.js'
import { ROOT } from '../../helpers/compiled.js'
import { answer, budget, standInApi } from '../../helpers/stand-in-api.js'

// What a consumer gets from the README's recipe: the client packed (`npm run client:pack`),
// installed from its tarball into a project of its own with `npm install --offline` (openapi-fetch
// and its one dependency packed from this project's node_modules beside it: no registry, and no
// reliance on what npm's cache happens to hold), type-checked by
// tsc with NodeNext and with Bundler resolution, and run by Node. Seconds: one pack, one install,
// two tsc runs side by side.
const run = promisify(execFile)

const CONSUMER = `import {
  SiteStatusClient,
  SiteStatusError,
  isBatchCheckError,
  type BatchCheckErrorCode,
  type LocationStatus,
  type SiteStatus,
  type SiteStatusErrorCode,
  type StatusRecord
} from 'site-status-api/client'

const client = new SiteStatusClient({ baseUrl: 'https://status.example.net', key: 'ssk_x' })

export async function statusOf(domain: string): Promise<SiteStatus> {
  const record: StatusRecord = await client.getStatus(domain)
  const known: 'up' | 'down' | 'unconfirmed' | 'unavailable' | 'pending' = record.status
  return known
}

export async function batch(domains: string[]): Promise<Array<BatchCheckErrorCode | LocationStatus[]>> {
  const out: Array<BatchCheckErrorCode | LocationStatus[]> = []
  for await (const line of client.checkMany(domains)) out.push(isBatchCheckError(line) ? line.code : line.locations.map((l) => l.status))
  return out
}

export async function thresholds(): Promise<Array<14 | 7 | 1>> {
  const seen: Array<14 | 7 | 1> = []
  for await (const event of client.streamEvents({ lastEventId: 41 })) if (event.type === 'certificate.expiring') seen.push(event.data.threshold_days)
  return seen
}

export const code = (e: unknown): SiteStatusErrorCode | undefined => (e instanceof SiteStatusError ? e.code : undefined)

// @ts-expect-error a status is a union of the document's values, not any string
export const sideways: StatusRecord['status'] = 'sideways'
// @ts-expect-error so is a location's
export const fine: LocationStatus = 'fine'
// @ts-expect-error and a batch error's code
export const oops: BatchCheckErrorCode = 'oops'
// @ts-expect-error a domain is a string: the methods are typed, not any
export const wrong = client.getStatus(42)
`

const tsconfig = (compilerOptions: Record<string, unknown>) =>
  JSON.stringify({
    compilerOptions: { target: 'ES2022', strict: true, noEmit: true, skipLibCheck: false, ...compilerOptions },
    files: ['consumer.ts']
  })

t.test('the packed client installs alone, type-checks under NodeNext and Bundler, and runs', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'site-status-install-'))
  t.teardown(() => {
    rmSync(dir, { recursive: true, force: true })
  })
  const tarball = await packClient(join(dir, 'packed'))
  const runtime = ['openapi-fetch', 'openapi-typescript-helpers'].map((name) => join(ROOT, 'node_modules', name))
  const packed = await run('npm', ['pack', '--json', '--pack-destination', join(dir, 'packed'), ...runtime])
  const dependencies = (JSON.parse(packed.stdout) as Array<{ filename: string }>).map((p) => join(dir, 'packed', p.filename))
  const consumer = join(dir, 'consumer')
  mkdirSync(consumer)
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }))
  await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--loglevel=error', ...dependencies, tarball], { cwd: consumer })
  t.same(
    readdirSync(join(consumer, 'node_modules')).filter((name) => !name.startsWith('.')),
    ['openapi-fetch', 'openapi-typescript-helpers', 'site-status-api'],
    'the client and its runtime dependency, nothing of the service'
  )
  t.same(
    readdirSync(join(consumer, 'node_modules/site-status-api')).sort(),
    ['README.md', 'dist', 'package.json'],
    'the package holds the client alone'
  )

  writeFileSync(join(consumer, 'consumer.ts'), CONSUMER)
  // A Node program, with Node's types; and a browser app's bundle, with the DOM's and no Node types.
  const nodeTypes = { typeRoots: [join(ROOT, 'node_modules/@types')], types: ['node'] }
  writeFileSync(join(consumer, 'tsconfig.nodenext.json'), tsconfig({ module: 'NodeNext', moduleResolution: 'NodeNext', ...nodeTypes }))
  writeFileSync(
    join(consumer, 'tsconfig.bundler.json'),
    tsconfig({ module: 'ESNext', moduleResolution: 'Bundler', lib: ['ES2022', 'DOM', 'DOM.Iterable'], types: [] })
  )
  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc')
  const check = (project: string) =>
    run(process.execPath, [tsc, '-p', join(consumer, project)]).then(
      () => '',
      (err: unknown) => (err as { stdout?: string }).stdout ?? 'tsc failed'
    )
  const [nodeNext, bundler] = await Promise.all([check('tsconfig.nodenext.json'), check('tsconfig.bundler.json')])
  t.equal(nodeNext, '', 'NodeNext: the consumer type-checks, the expected errors included')
  t.equal(bundler, '', 'Bundler: the same')

  // The installed package runs in Node from the consumer's own node_modules.
  const api = await standInApi(t)
  const script =
    "import { SiteStatusClient } from 'site-status-api/client'\n" +
    "const client = new SiteStatusClient({ baseUrl: process.argv[1], key: 'ssk_standin' })\n" +
    'console.log(JSON.stringify(await client.getRateLimit()))'
  const child = run(process.execPath, ['--input-type=module', '-e', script, api.url], { cwd: consumer })
  const req = await api.next()
  t.equal(req.url, '/api/v1/rate_limit', 'the installed client called the service')
  t.equal(req.headers.authorization, 'Bearer ssk_standin', 'with its key')
  answer(req, 200, { limit: 60, remaining: 60, used: 0, reset_seconds: 0, reset_at: '2026-11-22T06:25:07.123Z' }, budget(60, 60, 0))
  t.match(JSON.parse((await child).stdout), { limit: 60, remaining: 60 })
})
