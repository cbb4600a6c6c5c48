/**
 * lib/heap-settings.ts: the old generation is collected once it grows half past what was alive,
 * not up to four times; set at run time, it takes effect, and an operator's own setting is left
 * alone. V8 says which growing factor each new limit of the old generation was worked out with
 * (`--trace-gc-verbose`): that is read, not a high-water mark, which depends as much on how fast
 * the collector's threads get the CPU (on a loaded machine Node 24 let a compact heap reach 2.5
 * times what was alive while its marking lagged).
 */
import t from 'tap'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { HEAP_GROWING_PERCENT, keepHeapCompact } from '../../lib/heap-settings.js'
import { compiled } from '../helpers/compiled.js'

const run = promisify(execFile)
const MODULE = compiled('lib/heap-settings.js')

// 400,000 live objects, then objects that live long enough to be promoted, so that the old
// generation is collected several times. WIDE sets 300 % at run time the same way, the top of V8's
// own range: were a setting made at run time ignored, V8's own factor would show in both.
const CHILD = `
const { keepHeapCompact } = await import(process.env.HEAP_MODULE)
const v8 = await import('node:v8')
if (process.env.WIDE === '1') v8.setFlagsFromString('--heap-growing-percent=300')
else if (!keepHeapCompact()) throw new Error('not set')
v8.setFlagsFromString('--trace-gc-verbose')
const live = []
for (let i = 0; i < 400000; i++) live.push({ a: i, b: 'x' + i, c: [i] })
const ring = new Array(100000)
let k = 0
for (let round = 0; round < 300; round++) {
  for (let j = 0; j < 2000; j++) ring[k++ % ring.length] = { s: 'y'.repeat(100) + k, arr: new Array(20).fill(k) }
  await new Promise((resolve) => setImmediate(resolve))
}
`

/**
 * The factor of each old-generation limit V8 worked out: Node 20 prints it after the limit
 * ("Limit: old size: A KB, new limit: B KB (1.5)"), Node 24 on the line before it ("factor 1.5
 * based on ...", which Node 20 prints with its own factor, before the setting applies).
 */
function factors(trace: string): number[] {
  const found: number[] = []
  let stated: number | undefined
  for (const line of trace.split('\n')) {
    const before = /\[HeapController\] factor (\d+\.\d) based on/.exec(line)
    if (before) stated = Number(before[1])
    const limit = /\[HeapController\] Limit: old size: \d+ KB, new limit: \d+ KB(?: \((\d+\.\d)\))?/.exec(line)
    if (limit) found.push(limit[1] === undefined ? (stated ?? NaN) : Number(limit[1]))
  }
  return found
}

async function limitFactors(wide: boolean): Promise<number[]> {
  // Without the NODE_OPTIONS tap's process tracking puts into every child's environment (through
  // `env -u`, as tap sets it again on any it spawns): its module hooks' thread is not the service's.
  const node = [process.execPath, '--input-type=module', '-e', CHILD]
  const { stdout } = await run('env', ['-u', 'NODE_OPTIONS', ...node], {
    env: { ...process.env, HEAP_MODULE: MODULE, WIDE: wide ? '1' : '0' },
    maxBuffer: 16 * 1024 * 1024
  })
  return factors(stdout)
}

t.test('set at run time, every new limit of the old generation is half past what was alive', async (t) => {
  const [compact, wide] = await Promise.all([limitFactors(false), limitFactors(true)])
  t.ok(compact.length >= 2, `the old generation was collected ${compact.length} times`)
  t.same(new Set(compact), new Set([1 + HEAP_GROWING_PERCENT / 100]), `each limit worked out with ${compact.join(', ')}`)
  t.ok(wide.length >= 1, `and at 300 % (${wide.length} times)`)
  t.same(new Set(wide), new Set([4]), `with 4.0 each: the factor follows what was set at run time (${wide.join(', ')})`)
})

t.test("an operator's own setting is left as it is", async (t) => {
  t.equal(keepHeapCompact(['--heap-growing-percent=300'], ''), false, 'on the command line')
  t.equal(keepHeapCompact([], '--max-old-space-size=4096 --heap_growing_percent=20'), false, 'in NODE_OPTIONS')
  t.equal(keepHeapCompact(['--max-old-space-size=4096'], '--enable-source-maps'), true, 'otherwise it is set')
})
