import { workerData } from 'node:worker_threads'
import real, { type ProbeTask } from '../../workers/location-actor.js'

/** A location actor that answers pings (and stats) but never answers a probe when it has no proxy: a hung location. */
export default async function run(task: ProbeTask): Promise<unknown> {
  if (!('domain' in task)) return real(task)
  if ((workerData as { proxy: string | null }).proxy === null) return new Promise(() => {})
  return real(task)
}
