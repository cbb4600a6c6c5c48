import type { Metric } from 'prom-client'

type Kind = 'gauge' | 'counter'

/** One series of a collected metric: its labels and value. */
export interface Sample {
  labels: Record<string, string>
  value: number
}

/**
 * A metric whose series are read from another part's own counters at scrape time (the admission's
 * refusals, the dispatcher's outcomes), not kept a second time in prom-client: the part stays the
 * one source of the number, and nothing is counted twice. The registry only asks a metric for
 * `get()` (and `reset()`), so this answers those directly.
 */
class CollectedMetric {
  readonly aggregator = 'sum'

  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: Kind,
    readonly read: () => Sample[]
  ) {}

  get(): { name: string; help: string; type: Kind; aggregator: string; values: Sample[] } {
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values: this.read() }
  }

  reset(): void {}
}

/** A metric for a registry's `registerMetric`, its series read by `read` on every scrape. */
export function collectedMetric(name: string, help: string, type: Kind, read: () => Sample[]): Metric {
  return new CollectedMetric(name, help, type, read) as unknown as Metric
}
