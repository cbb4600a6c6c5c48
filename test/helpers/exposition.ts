/** One sample line of a Prometheus text exposition. */
export interface ExposedSample {
  name: string
  labels: Record<string, string>
  value: number
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g

/** The samples of a text exposition (comments skipped); throws on a line it cannot read. */
export function parseExposition(text: string): ExposedSample[] {
  const samples: ExposedSample[] = []
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const m = LINE.exec(line)
    if (!m) throw new Error(`not an exposition line: ${line}`)
    const labels: Record<string, string> = {}
    for (const [, name, value] of (m[2] ?? '').matchAll(LABEL)) labels[name as string] = (value as string).replace(/\\(.)/g, '$1')
    samples.push({ name: m[1] as string, labels, value: Number(m[3]) })
  }
  return samples
}

/** The samples named `name` whose labels include `labels`. */
export function samplesOf(samples: readonly ExposedSample[], name: string, labels: Record<string, string> = {}): ExposedSample[] {
  return samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
}
