/**
 * Results and probe runs shared by several instances (lib/sharing/check-runs.ts, on Redis). Both
 * answer without the other instances whenever they cannot reach them: `cached` with null, `run` by
 * calling `probe` itself.
 */
export interface SharedRuns<T> {
  /** A result another instance (or this one) keeps for reuse, with its remaining time; `domain` is a check's key (lib/probing/check-asks.ts `checkKey`). */
  cached(domain: string): Promise<{ value: T; ttlMs: number } | null>
  /**
   * Calls `probe` unless another instance is running a probe of `domain`, whose result is then
   * awaited (`ran: false`); `share` says whether the result may be reused by others.
   */
  run(domain: string, probe: () => Promise<{ value: T; share: boolean }>): Promise<{ value: T; ran: boolean }>
}
