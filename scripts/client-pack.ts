/**
 * Packs the typed client alone as the package `site-status-api` (`npm run client:pack [DIR]`): its
 * modules and declarations under dist/lib/client/ (`exports` "./client", ESM only) and openapi-fetch
 * as its one dependency, so that a consumer installs no part of the service (no Hapi, no Knex, no
 * native module). Writes site-status-api-<version>.tgz into DIR (default dist/) and prints its path.
 */
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

const run = promisify(execFile)
const ROOT = fileURLToPath(new URL('../', import.meta.url))

interface RootPackage {
  name: string
  version: string
  license: string
  engines: Record<string, string>
  dependencies: Record<string, string>
}

const README = `# site-status-api (the client)

The typed client of the Site Status API: one method per operation of the service's OpenAPI
document, built on openapi-fetch, with the key's budget, retries on 429/503 and the streams.

\`\`\`ts
import { SiteStatusClient } from 'site-status-api/client'
const client = new SiteStatusClient({ baseUrl: 'https://status.example.net', key: 'ssk_...' })
console.log(await client.getStatus('example.com'))
\`\`\`

ESM only; TypeScript with \`"moduleResolution": "NodeNext"\` or \`"Bundler"\`. Runs in Node and in
browsers (bundled; from a page of the service's own origin, as the API sends no CORS headers). The
service itself is not in this package: see its repository's README.
`

/** Packs the client into `destination`; resolves to the tarball's path. */
export async function packClient(destination: string): Promise<string> {
  const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as RootPackage
  const stage = mkdtempSync(join(tmpdir(), 'site-status-client-pack-'))
  try {
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc')
    const options = ['--emitDeclarationOnly', 'false', '--declaration', '--sourceMap', 'false', '--outDir', join(stage, 'dist')]
    await run(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.client.json'), ...options])
    const types = './dist/lib/client/index.d.ts'
    const manifest = {
      name: root.name,
      version: root.version,
      description: 'The typed client of the Site Status API (openapi-fetch, budget, retries, streams); the service is not in this package.',
      license: root.license,
      type: 'module',
      sideEffects: false,
      engines: root.engines,
      exports: { './client': { types, default: './dist/lib/client/index.js' }, './package.json': './package.json' },
      dependencies: { 'openapi-fetch': root.dependencies['openapi-fetch'] }
    }
    writeFileSync(join(stage, 'package.json'), JSON.stringify(manifest, null, 2) + '\n')
    writeFileSync(join(stage, 'README.md'), README)
    mkdirSync(destination, { recursive: true })
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', destination], { cwd: stage })
    const [packed] = JSON.parse(stdout) as Array<{ filename: string }>
    if (packed === undefined) throw new Error('npm pack reported no tarball')
    return join(destination, packed.filename)
  } finally {
    rmSync(stage, { recursive: true, force: true })
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  console.log(await packClient(resolve(process.argv[2] ?? join(ROOT, 'dist'))))
}
