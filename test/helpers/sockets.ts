import type { Piscina } from 'piscina'
import type { Test } from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import type { ActorStats } from '../../workers/location-actor.js'
import type { CheckStack } from './check-stack.js'

export const total = (counts: number[]): number => counts.reduce((x, y) => x + y, 0)
export const zeros = (counts: number[]): number[] => counts.map(() => 0)

/** Polls `counts` (open connections at each server) until all are 0 or `ms` pass; returns the last seen and when. */
export async function settle(counts: () => number[], ms = 3000): Promise<{ seen: number[]; afterMs: number }> {
  const started = Date.now()
  let seen = counts()
  while (total(seen) > 0 && Date.now() - started < ms) {
    await sleep(20)
    seen = counts()
  }
  return { seen, afterMs: Date.now() - started }
}

/** The TCP connections each location's actor dialled and still holds (the actors' `stats` task). */
export async function actorConnections(stack: CheckStack): Promise<number[]> {
  const [pools, scheduledPools, lightPools] = (['demand', 'scheduled', 'light'] as const).map((cls) => stack.pools.actors(cls)) as [
    Piscina[],
    Piscina[],
    Piscina[]
  ]
  // An actor whose thread has not started (a light consumers' one before its first check) holds none.
  const held = async (pool: (typeof pools)[number]) =>
    pool.threads.length === 0 ? 0 : ((await pool.run({ stats: true })) as ActorStats).connections
  // Each location's actors together: the on-demand one, and the scheduler's and the light
  // consumers' when it has actors of their own.
  return Promise.all(
    pools.map(async (pool, i) => {
      const mine = new Set([pool, scheduledPools[i] as typeof pool, lightPools[i] as typeof pool])
      return total(await Promise.all([...mine].map(held)))
    })
  )
}

/**
 * No connection left open anywhere: at the servers and in the actors, each within a short while. An
 * actor counts a connection until its socket's own 'close' event, which on a loaded machine can
 * come a moment after the server saw the connection end: its count is polled like the servers'.
 */
export async function noLeaks(t: Test, stack: CheckStack, counts: () => number[], what: string): Promise<void> {
  const { seen, afterMs } = await settle(counts)
  t.same(seen, zeros(seen), `${what}: every connection at the targets and proxies is closed (${afterMs} ms after the answer)`)
  const started = Date.now()
  let held = await actorConnections(stack)
  while (total(held) > 0 && Date.now() - started < 3000) {
    await sleep(20)
    held = await actorConnections(stack)
  }
  t.same(held, zeros(held), `${what}: no actor holds a connection (${Date.now() - started} ms after that)`)
}
