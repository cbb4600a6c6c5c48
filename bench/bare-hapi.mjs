// The baselines: bare hapi answering a small JSON object for the status endpoint, and a constant
// SVG badge (drawn once at start, the size of a real one) for the badge endpoint. Nothing else.
import Hapi from '@hapi/hapi'
import { makeBadge } from 'badge-maker'

const server = Hapi.server({ port: 0, host: '127.0.0.1' })
server.route({ method: 'GET', path: '/api/v1/status/{domain}', handler: (request) => ({ domain: request.params.domain, status: 'up' }) })
const badge = makeBadge({ label: 'Site 1', message: 'up', color: 'green' })
server.route({ method: 'GET', path: '/api/badge/{domain}', handler: (_request, h) => h.response(badge).type('image/svg+xml') })
await server.start()
process.send({ ready: server.info.uri })
