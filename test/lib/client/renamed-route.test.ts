import t from 'tap'
import { execFile } from 'node:child_process'
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { clientSchema, serviceDocument } from '../../../scripts/client-schema.js'
import { ROOT } from '../../helpers/compiled.js'

// The client's types are the document's: a copy of lib/client compiled by tsc against types
// generated from a document with one route renamed must fail, naming the route, while the same
// copy against the real document compiles. Both without Node's types, as a browser would build it.
// Two tsc runs, side by side: seconds.

/** lib/client copied into a directory of its own, its schema.ts generated from `document`. */
async function clientCopy(document: Record<string, unknown>): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'site-status-client-types-'))
  t.teardown(() => {
    rmSync(dir, { recursive: true, force: true })
  })
  const client = join(dir, 'lib/client')
  for (const file of readdirSync(join(ROOT, 'lib/client')).filter((f) => f.endsWith('.ts') && f !== 'schema.ts')) {
    cpSync(join(ROOT, 'lib/client', file), join(client, file))
  }
  writeFileSync(join(client, 'schema.ts'), await clientSchema(document))
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'))
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        lib: ['ES2022', 'DOM', 'DOM.Iterable'],
        types: [],
        strict: true,
        noUncheckedIndexedAccess: true,
        noEmit: true
      },
      files: ['lib/client/index.ts']
    })
  )
  return dir
}

/** tsc's report on `dir`: '' when it compiles. */
const typeCheck = (dir: string): Promise<string> =>
  promisify(execFile)(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', dir]).then(
    () => '',
    (err: unknown) => (err as { stdout?: string }).stdout ?? 'tsc failed'
  )

t.test('a route renamed in the OpenAPI document breaks the client compile; the document as it is compiles', async (t) => {
  const document = serviceDocument() as { paths: Record<string, unknown> }
  const renamed = {
    ...document,
    paths: Object.fromEntries(
      Object.entries(document.paths).map(([path, item]) => [path === '/api/v1/status/{domain}' ? '/api/v1/statuses/{domain}' : path, item])
    )
  }
  const [asItIs, afterRename] = await Promise.all([typeCheck(await clientCopy(document)), typeCheck(await clientCopy(renamed))])
  t.equal(asItIs, '', 'the client compiles against its document, without @types/node')
  t.match(
    afterRename,
    /lib\/client\/index\.ts\(\d+,\d+\): error TS2345: Argument of type '"\/api\/v1\/status\/\{domain\}"' is not assignable/
  )
  const call = readFileSync(join(ROOT, 'lib/client/index.ts'), 'utf8')
    .split('\n')
    .findIndex((line) => line.includes("'/api/v1/status/{domain}'"))
  const errors = [...afterRename.matchAll(/^(\S+)\((\d+),\d+\): error TS/gm)].map((m) => `${m[1]?.replace(/^.*\/lib\//, 'lib/')}:${m[2]}`)
  t.ok(errors.length > 0, 'errors were reported')
  t.same(new Set(errors), new Set([`lib/client/index.ts:${call + 1}`]), 'every error is on the one call of that route')
})
