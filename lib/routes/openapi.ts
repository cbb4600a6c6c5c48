import type { ServerRoute } from '@hapi/hapi'
import { openApiDocument } from '../openapi/document.js'

/** `GET /api/v1/openapi.json`: no key, so that tools can read the description before anyone has one. */
export function openApiRoutes({ publicUrl }: { publicUrl: string }): ServerRoute[] {
  const body = JSON.stringify(openApiDocument({ publicUrl }))
  return [
    {
      method: 'GET',
      path: '/api/v1/openapi.json',
      options: { auth: false },
      handler: (_request, h) =>
        h
          .response(body)
          .type('application/json; charset=utf-8')
          .header('access-control-allow-origin', '*')
          .header('cache-control', 'public, max-age=300')
    }
  ]
}
