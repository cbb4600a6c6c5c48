// The baselines: bare hapi answering the same body as the service, nothing else. For the status
// endpoint, the JSON object in BARE_STATUS_BODY (the bench passes one of the service's own status
// records, so both answer the same bytes; hapi serialises it per request, as it does ours), or
// a small object when none is given; for the badge endpoint, a constant SVG badge drawn once at
// start, the size of a real one.
import Hapi from '@hapi/hapi'
import { makeBadge } from 'badge-maker'

const server = Hapi.server({ port: 0, host: '127.0.0.1' })
const statusBody = process.env.BARE_STATUS_BODY ? JSON.parse(process.env.BARE_STATUS_BODY) : null
server.route({
  method: 'GET',
  path: '/api/v1/status/{domain}',
  handler: (request) => statusBody ?? { domain: request.params.domain, status: 'up' }
})
const badge = makeBadge({ label: 'Site 1', message: 'up', color: 'green' })
server.route({ method: 'GET', path: '/api/badge/{domain}', handler: (_request, h) => h.response(badge).type('image/svg+xml') })
await server.start()
process.send({ ready: server.info.uri })
