/**
 * lib/heap-settings.ts: the old generation is collected once it grows half past what was alive,
 * not up to four times; set at run time, it takes effect (a child process churns objects that live
 * long enough to be promoted, with it and with the top of V8's own range set the same way), and an
 * operator's own setting is left alone.
 */
import t from 'tap'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { keepHeapCompact } from '../../lib/heap-settings.js'
import { compiled } from '../helpers/compiled.js'

const run = promisify(execFile)
const MODULE = compiled('lib/heap-settings.js')

// 400,000 live objects, then objects that die after 50 rounds, long enough to be promoted however
// large V8 makes the young generation (Node 24 sizes it by itself): the old generation's high-water
// mark shows how far V8 lets garbage pile up there (the whole heap's also counts the young
// generation). V8's own factor depends on how fast its collector ran against the program, which a
// loaded machine changes; the comparison is therefore with the top of that range (4x, the factor a
// fast collector earns) set at run time the same way. Were a setting made at run time ignored, both
// children would run with V8's own factor and come out alike.
const CHILD = `
const { keepHeapCompact } = await import(process.env.HEAP_MODULE)
const v8 = await import('node:v8')
const oldSpace = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'old_space').space_used_size
if (process.env.COMPACT === '1' && !keepHeapCompact()) throw new Error('not set')
if (process.env.COMPACT === '0') v8.setFlagsFromString('--heap-growing-percent=300')
const live = []
for (let i = 0; i < 400000; i++) live.push({ a: i, b: 'x' + i, c: [i] })
let max = 0
const ring = new Array(100000)
let k = 0
for (let round = 0; round < 800; round++) {
  for (let j = 0; j < 2000; j++) ring[k++ % ring.length] = { s: 'y'.repeat(100) + k, arr: new Array(20).fill(k) }
  max = Math.max(max, oldSpace())
  await new Promise((resolve) => setImmediate(resolve))
}
console.log(JSON.stringify({ maxMb: max / 2 ** 20, live: live.length }))
`

async function highWater(compact: boolean): Promise<number> {
  // Without the NODE_OPTIONS tap's process tracking puts into every child's environment (through
  // `env -u`, as tap sets it again on any it spawns): its module hooks run on a thread of their own,
  // which on Node 24 changed the figures.
  const node = [process.execPath, '--input-type=module', '-e', CHILD]
  const { stdout } = await run('env', ['-u', 'NODE_OPTIONS', ...node], {
    env: { ...process.env, HEAP_MODULE: MODULE, COMPACT: compact ? '1' : '0' }
  })
  return (JSON.parse(stdout.trim().split('\n').at(-1) as string) as { maxMb: number }).maxMb
}

t.test('set at run time, it keeps garbage from piling up in the old generation', async (t) => {
  const [wide, compact] = await Promise.all([highWater(false), highWater(true)])
  t.ok(compact < 0.6 * wide, `old-generation high-water mark ${compact.toFixed(0)} MB against ${wide.toFixed(0)} MB at V8's widest factor`)
})

t.test("an operator's own setting is left as it is", async (t) => {
  t.equal(keepHeapCompact(['--heap-growing-percent=300'], ''), false, 'on the command line')
  t.equal(keepHeapCompact([], '--max-old-space-size=4096 --heap_growing_percent=20'), false, 'in NODE_OPTIONS')
  t.equal(keepHeapCompact(['--max-old-space-size=4096'], '--enable-source-maps'), true, 'otherwise it is set')
})
