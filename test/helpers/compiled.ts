import { readdirSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { build } from 'esbuild'

/** The project root. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/**
 * The location actors, and every `site-status` process a test starts, run compiled JavaScript from
 * dist/ (a thread or process started with tsx's loader took seconds more). The tap `before` hook
 * writes it from the current sources with esbuild (no type check: that is lint's) before every
 * run, a whole suite or one file, so no test ever runs a stale build. The tests' own files are
 * compiled too: on Node 24 the test processes load both from there (test/hooks/typescript.mjs).
 */
const SOURCES = ['lib', 'workers', 'config', 'migrations', 'test']

function typescriptFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts'))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)))
}

export async function compileForTests(): Promise<void> {
  await build({
    entryPoints: SOURCES.flatMap(typescriptFiles),
    absWorkingDir: ROOT,
    outdir: 'dist',
    outbase: '.',
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: true,
    logLevel: 'error'
  })
}

/** The file URL of a compiled module, by its path under dist/. */
export const compiled = (path: string): string => pathToFileURL(join(ROOT, 'dist', path)).href

/** The location actor as production runs it, compiled. */
export const ACTOR_FILE = compiled('workers/location-actor.js')
/** An actor that answers pings but never a probe when it has no proxy (test/helpers/silent-actor.ts). */
export const SILENT_ACTOR_FILE = compiled('test/helpers/silent-actor.js')
/** An actor whose thread wedges on a `wedge.` domain (test/helpers/wedged-actor.ts). */
export const WEDGED_ACTOR_FILE = compiled('test/helpers/wedged-actor.js')
/** The `site-status` command, compiled (what `npm start` and the package's bin run). */
export const CLI_FILE = 'dist/lib/cli/index.js'

/**
 * How a test starts actor threads: the compiled actor, with no Node options. A thread inherits the
 * test process's (tsx and tap's loaders), of no use to compiled actors, and three threads then took
 * 7 s to start instead of 1.5 s. Spread into `new LocationPools({ ... })`.
 */
export const TEST_POOL = { actorFile: ACTOR_FILE, execArgv: [] as string[] }

/**
 * The actors of a test service (createProbing's and startService's options): one per location,
 * which the scheduler's and light consumers' probes share. A test about those lanes asks for their
 * actors itself.
 */
export const TEST_ACTORS = { actorFile: TEST_POOL.actorFile, actorExecArgv: TEST_POOL.execArgv, scheduledActors: false, lightActors: false }
