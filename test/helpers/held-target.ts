import http from 'node:http'
import type { Test } from 'tap'
import { serveOnLoopback } from './targets.js'

/**
 * A loopback target for checks that must stay under way: `*.held.test` are held open until the test
 * releases them (or the probe gives up on them); everything else answers 200 at once. Arrivals, and
 * held requests closed before they were answered, are kept in order.
 */
export async function heldTarget(t: Test) {
  const arrivals: string[] = []
  const held = new Map<string, http.ServerResponse[]>()
  const closes: string[] = []
  const listeners = new Set<() => void>()
  const server = http.createServer((req, res) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '')
    arrivals.push(host)
    if (host.endsWith('.held.test')) {
      held.set(host, [...(held.get(host) ?? []), res])
      res.once('close', () => {
        if (!res.writableFinished) closes.push(host)
        for (const l of listeners) l()
      })
    } else {
      res.writeHead(200).end('ok')
    }
    for (const l of listeners) l()
  })
  const port = await serveOnLoopback(t, server)
  /** Resolves once `cond` holds, tested at every arrival and close. */
  const when = (cond: () => boolean): Promise<void> =>
    new Promise((resolve) => {
      const test = (): void => {
        if (!cond()) return
        listeners.delete(test)
        resolve()
      }
      listeners.add(test)
      test()
    })
  return {
    port,
    arrivals,
    closes,
    when,
    seen: (host: string): number => arrivals.filter((h) => h === host).length,
    release: (host: string): void => {
      for (const res of held.get(host) ?? []) if (!res.writableEnded) res.writeHead(200).end('ok')
    }
  }
}
