// How every test process loads TypeScript (package.json tap.node-arg).
//
// On Node 24.13 or newer: synchronous module hooks in the process's own thread. A relative `.js`
// import of a project file that exists only as `.ts` resolves to the `.ts` file, and a `.ts` file
// is served as the JavaScript the tap `before` hook compiled into dist/ from the current sources
// (test/helpers/compiled.ts), transformed here with esbuild only when that copy is missing or
// older than its source. URLs stay those of the sources, as under tsx, so `import.meta.url` and
// stack traces (through the source maps) name them. V8's compile cache on disk is on for the test
// process and every process it starts. On older Node (the fast suite's Node 20), tsx.
//
// Against tsx on Node 24, this takes a typical route test from about 2.0 s of CPU to 1.2 s
// (docs/decisions.md, "The test suite").
import module from 'node:module'
import { readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const [major = 0, minor = 0] = process.versions.node.split('.').map(Number)
const syncHooks = typeof module.registerHooks === 'function' && (major > 24 || (major === 24 && minor >= 13))

if (!syncHooks) {
  await import('tsx')
} else {
  const ROOT = fileURLToPath(new URL('../../', import.meta.url))
  const ROOT_URL = pathToFileURL(ROOT).href
  const CACHE = join(ROOT, 'node_modules/.cache/site-status/v8')
  process.env.NODE_COMPILE_CACHE ??= CACHE
  module.enableCompileCache?.(process.env.NODE_COMPILE_CACHE)

  const mtime = (path) => {
    try {
      return statSync(path).mtimeMs
    } catch {
      return -1
    }
  }
  const ownFile = (url) => url.startsWith(ROOT_URL) && !url.includes('/node_modules/') && !url.startsWith(`${ROOT_URL}dist/`)

  let transformSync
  /** The JavaScript of a project `.ts` file: the before hook's compiled copy while it is current. */
  const javascriptOf = (path) => {
    const out = join(ROOT, 'dist', relative(ROOT, path)).replace(/\.ts$/, '.js')
    const compiled = mtime(out)
    if (compiled >= 0 && compiled >= mtime(path)) {
      // Its source map, named by absolute URL: the module's URL is the source's, not dist's.
      return readFileSync(out, 'utf8').replace(
        /\/\/# sourceMappingURL=(\S+)\s*$/,
        (_, map) => `//# sourceMappingURL=${pathToFileURL(join(out, '..', map)).href}\n`
      )
    }
    transformSync ??= module.createRequire(import.meta.url)('esbuild').transformSync
    const source = readFileSync(path, 'utf8')
    return transformSync(source, { loader: 'ts', format: 'esm', platform: 'node', target: 'node22', sourcemap: 'inline', sourcefile: path })
      .code
  }

  module.registerHooks({
    resolve(specifier, context, nextResolve) {
      if (specifier.startsWith('.') && specifier.endsWith('.js') && context.parentURL !== undefined && ownFile(context.parentURL)) {
        const url = new URL(specifier, context.parentURL)
        if (mtime(fileURLToPath(url)) < 0) {
          const ts = new URL(url.href.replace(/\.js$/, '.ts'))
          if (mtime(fileURLToPath(ts)) >= 0) return { url: ts.href, format: 'module', shortCircuit: true }
        }
      }
      return nextResolve(specifier, context)
    },
    load(url, context, nextLoad) {
      if (url.endsWith('.ts') && ownFile(url)) return { format: 'module', source: javascriptOf(fileURLToPath(url)), shortCircuit: true }
      return nextLoad(url, context)
    }
  })
}
