import dc from 'node:diagnostics_channel'
import type { Socket } from 'node:net'
import { workerData } from 'node:worker_threads'
import real, { type ProbeTask } from '../../workers/location-actor.js'

/** Resolves once a TCP connection this thread dials next is established. */
function nextConnection(): Promise<void> {
  return new Promise((resolve) => {
    const onSocket = (message: unknown): void => {
      ;(message as { socket: Socket }).socket.once('connect', () => {
        dc.unsubscribe('net.client.socket', onSocket)
        resolve()
      })
    }
    dc.subscribe('net.client.socket', onSocket)
  })
}

/**
 * A location actor whose thread wedges when it has no proxy and is asked about a `wedge.` domain:
 * it first opens a connection (a probe of hang.site.test, whose target never answers), then blocks
 * its event loop for a minute, answering nothing, not even pings, as a thread stuck in a loop would.
 */
export default async function run(task: ProbeTask): Promise<unknown> {
  if ('domain' in task && task.domain.startsWith('wedge.') && (workerData as { proxy: string | null }).proxy === null) {
    const connected = nextConnection()
    void real({ domain: 'hang.site.test' })
    await connected
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60_000)
  }
  return real(task)
}
