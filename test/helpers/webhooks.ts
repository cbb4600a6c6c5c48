import http from 'node:http'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import FakeTimers from '@sinonjs/fake-timers'
import { Webhook } from 'standardwebhooks'
import { siteEvent, type NewEvent } from '../../lib/rules/events.js'
import type { Db } from '../../lib/store/db.js'
import { appendEvents, type EventRow } from '../../lib/store/events.js'

/** One request a receiver got. */
export interface Received {
  headers: http.IncomingHttpHeaders
  body: string
  /** What the receiver answered. */
  status: number
}

/**
 * A webhook receiver on 127.0.0.1 that answers each request with the next status of `script`
 * (the last one repeats), recording what it got.
 */
export async function receiver(
  t: { teardown(fn: () => unknown): void },
  script: number[] = [200]
): Promise<{ url: string; got: Received[]; arrived: () => Promise<Received> }> {
  const got: Received[] = []
  const waiting: Array<(r: Received) => void> = []
  const server = http.createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8').on('data', (c: string) => (body += c))
    req.on('end', () => {
      const status = script[Math.min(got.length, script.length - 1)] ?? 200
      const entry = { headers: req.headers, body, status }
      got.push(entry)
      res.writeHead(status, { 'content-type': 'text/plain' }).end('thanks')
      waiting.shift()?.(entry)
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => {
    server.closeAllConnections()
    server.close()
  })
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/hook`,
    got,
    arrived: () => new Promise((resolve) => waiting.push(resolve))
  }
}

/**
 * Verifies a delivery with the `standardwebhooks` package as a receiver would, its clock set to
 * `atMs` (the sender's clock in tests that move time forward): the package refuses timestamps
 * more than five minutes from its own now. Throws when the signature does not verify.
 */
export function verifyAt(atMs: number, secret: string, r: Received): unknown {
  const clock = FakeTimers.install({ now: atMs, toFake: ['Date'] })
  try {
    return new Webhook(secret).verify(r.body, r.headers as Record<string, string>)
  } finally {
    clock.uninstall()
  }
}

/** Appends events in a transaction of their own, as the code announcing a change does. */
export async function appendEvent(db: Db, ...events: NewEvent[]): Promise<EventRow[]> {
  return db.transaction((trx) =>
    appendEvents({ db: trx, events: events.map((e) => ({ type: e.type, siteId: e.siteId, data: JSON.stringify(e.data), at: e.at })) })
  )
}

/** A `site.added` event of a made-up site. */
export function added(domain: string, at: Date, id = 1): NewEvent {
  return siteEvent('added', { id, domain, name: domain }, at)
}
