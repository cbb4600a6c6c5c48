// The baseline for the status endpoint: bare hapi answering a small JSON object, nothing else.
import Hapi from '@hapi/hapi'

const server = Hapi.server({ port: 0, host: '127.0.0.1' })
server.route({ method: 'GET', path: '/api/v1/status/{domain}', handler: (request) => ({ domain: request.params.domain, status: 'up' }) })
await server.start()
process.send({ ready: server.info.uri })
