// Event streams and webhook receivers for bench/monitor (BENCH_STREAMS, BENCH_WEBHOOKS): opens the
// streams on `GET /api/v1/events` (10 a key, the most one key may hold), registers webhooks that
// point at a loopback receiver in this process, and measures for every event how long after it
// happened it reached each stream and each receiver. An event happened at its check's time (an
// outage's start or end) or at its `at` (site events), so the figure includes recording the check.
import http from 'node:http'

/** When an event happened, from its type and payload; null when it says nothing usable. */
function happenedAt(type, data) {
  if (type === 'outage.opened') return Date.parse(data.started_at)
  if (type === 'outage.closed') return Date.parse(data.ended_at)
  if (typeof data?.at === 'string') return Date.parse(data.at)
  return null
}

export async function startPush({ uri, streamKeys, manageKey, streams, webhooks }) {
  const latency = { stream: [], webhook: [] }
  const counts = { streamEvents: 0, deliveries: 0, duplicates: 0, badSignatures: 0, streamsOpen: 0, streamsRefused: 0, streamsEnded: 0 }
  const delivered = new Set()
  /** Per event id: how many receivers and streams got it. */
  const reached = { webhook: new Map(), stream: new Map() }
  const note = (map, id) => map.set(id, (map.get(id) ?? 0) + 1)

  const receiver = http.createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (d) => (body += d))
    req.on('end', () => {
      const at = Date.now()
      const id = `${req.url} ${req.headers['webhook-id']}`
      if (delivered.has(id)) counts.duplicates++
      else note(reached.webhook, Number(req.headers['webhook-id']))
      delivered.add(id)
      if (!String(req.headers['webhook-signature'] ?? '').startsWith('v1,')) counts.badSignatures++
      try {
        const message = JSON.parse(body)
        const t = Date.parse(message.timestamp)
        if (Number.isFinite(t)) latency.webhook.push(at - t)
      } catch {
        // Counted as a delivery all the same; the latency needs a body.
      }
      counts.deliveries++
      res.writeHead(204).end()
    })
  })
  receiver.keepAliveTimeout = 0
  await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  const receiverPort = receiver.address().port

  for (let i = 0; i < webhooks; i++) {
    const res = await fetch(`${uri}/api/v1/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${manageKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `http://127.0.0.1:${receiverPort}/hook/${i}` })
    })
    if (res.status !== 201) throw new Error(`creating webhook ${i}: ${res.status} ${await res.text()}`)
  }

  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity })
  const requests = []
  const opened = []
  for (let i = 0; i < streams; i++) {
    const key = streamKeys[i % streamKeys.length]
    opened.push(
      new Promise((resolve) => {
        const req = http.get(`${uri}/api/v1/events`, { agent, headers: { authorization: `Bearer ${key}` } }, (res) => {
          if (res.statusCode !== 200) {
            counts.streamsRefused++
            res.resume()
            resolve()
            return
          }
          counts.streamsOpen++
          resolve()
          let buffer = ''
          res.setEncoding('utf8')
          res.on('data', (chunk) => {
            buffer += chunk
            for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
              const frame = buffer.slice(0, end)
              buffer = buffer.slice(end + 2)
              let type = null
              let data = null
              for (const line of frame.split('\n')) {
                if (line.startsWith('id: ')) note(reached.stream, Number(line.slice(4)))
                else if (line.startsWith('event: ')) type = line.slice(7)
                else if (line.startsWith('data: ')) data = line.slice(6)
              }
              if (type === null || data === null) continue
              counts.streamEvents++
              const t = happenedAt(type, JSON.parse(data))
              if (t !== null) latency.stream.push(Date.now() - t)
            }
          })
          res.on('end', () => counts.streamsEnded++)
          res.on('error', () => {})
        })
        req.on('error', () => {
          counts.streamsRefused++
          resolve()
        })
        requests.push(req)
      })
    )
  }
  await Promise.all(opened)

  return {
    stats: () => ({ ...counts, latency, reached }),
    close: async () => {
      for (const req of requests) req.destroy()
      agent.destroy()
      await new Promise((resolve) => receiver.close(resolve))
    }
  }
}

/** The p-th percentile of a list of numbers (nearest rank), NaN when empty. */
export function percentile(values, p) {
  if (values.length === 0) return NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
}
