// The baselines: bare hapi answering the same bytes as the service, nothing else. For the status
// endpoint, the JSON object in BARE_STATUS_BODY (the bench passes one of the service's own status
// records, so both answer the same bytes; hapi serialises it per request, as it does ours), or
// a small object when none is given. For badges, BARE_BADGES: a JSON list of
// { path, body, headers } taken from one of the service's own answers (bench/badge), each served
// from memory with the same headers, ETag included (hapi answers a matching If-None-Match with 304
// here too); without it, a constant SVG badge drawn once at start on `/api/badge/{domain}`. For
// pings, `OK` as text on `/ping/{token}`.
import Hapi from '@hapi/hapi'
import { makeBadge } from 'badge-maker'

const server = Hapi.server({ port: 0, host: '127.0.0.1' })
const statusBody = process.env.BARE_STATUS_BODY ? JSON.parse(process.env.BARE_STATUS_BODY) : null
server.route({
  method: 'GET',
  path: '/api/v1/status/{domain}',
  handler: (request) => statusBody ?? { domain: request.params.domain, status: 'up' }
})
const badges = process.env.BARE_BADGES
  ? JSON.parse(process.env.BARE_BADGES)
  : [
      {
        path: '/api/badge/{domain}',
        body: makeBadge({ label: 'Site 1', message: 'up', color: 'green' }),
        headers: { 'content-type': 'image/svg+xml' }
      }
    ]
for (const { path, body, headers } of badges) {
  // hapi sets these two itself, as it does for ours.
  const { 'content-type': type, 'content-length': _length, 'accept-ranges': _ranges, ...rest } = headers
  server.route({
    method: 'GET',
    path,
    handler: (_request, h) => {
      const response = h.response(body).type(type)
      Object.assign(response.headers, rest)
      return response
    }
  })
}
// A heartbeat's ping as the service answers one, without its transaction (bench/heartbeats).
server.route({
  method: 'GET',
  path: '/ping/{token}',
  handler: (_request, h) => h.response('OK').type('text/plain; charset=utf-8').header('cache-control', 'no-store')
})
await server.start()
process.send({ ready: server.info.uri })
