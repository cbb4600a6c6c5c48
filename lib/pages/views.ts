import { existsSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { ResponseObject, ResponseToolkit, Server } from '@hapi/hapi'
import Inert from '@hapi/inert'
import Vision from '@hapi/vision'
import Handlebars from 'handlebars'

const here = dirname(fileURLToPath(import.meta.url))

/**
 * The folder holding `templates/` and `static/`. tsc copies no templates into dist/, so the build
 * (dist/lib/pages) reads them from the source tree (lib/pages), like the sources themselves do.
 */
export const PAGES_DIR = existsSync(join(here, 'templates')) ? here : resolve(here, '../../../lib/pages')

/**
 * Pages run no inline script and load nothing from elsewhere: the copy buttons' script and the
 * style sheet are our own static files, the chart is inline SVG, the badge is served by us. A
 * status page may show its owner's logo (`images` adds that one origin to `img-src`), and its script
 * connects to its own origin (`connect`).
 */
export function pageCsp({ images = [], connect = false }: { images?: readonly string[]; connect?: boolean } = {}): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    // A status page's script listens to its events and fetches the page again.
    ...(connect ? ["connect-src 'self'"] : []),
    "style-src 'self'",
    ["img-src 'self'", ...images].join(' '),
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'"
  ].join('; ')
}

export const PAGE_CSP = pageCsp()

/** Registers vision (Handlebars, which escapes every `{{value}}`) and inert for the static files. */
export async function registerPages(server: Server): Promise<void> {
  await server.register([Vision, Inert])
  server.views({
    engines: { hbs: Handlebars.create() },
    relativeTo: PAGES_DIR,
    path: 'templates',
    layout: true,
    isCached: true
  })
}

/** The headers every HTML page carries, errors included; `csp` when the page has its own. */
export function securePage(response: ResponseObject, csp = PAGE_CSP): ResponseObject {
  return response
    .header('content-security-policy', csp)
    .header('x-content-type-options', 'nosniff')
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'strict-origin-when-cross-origin')
    .header('cache-control', 'no-cache')
}

/** A page rendered through the layout, with its security headers. */
export function pageView(h: ResponseToolkit, template: string, context: Record<string, unknown>, status = 200): ResponseObject {
  return securePage(h.view(template, context).code(status))
}

const TITLES: Record<number, string> = { 400: 'Bad request', 404: 'Not found', 503: 'Temporarily unavailable' }

/** An error on an HTML route as an HTML page with the same status, message and headers the JSON error would have had. */
export function errorPage(h: ResponseToolkit, status: number, message: string, headers: Record<string, string>): ResponseObject {
  const title = TITLES[status] ?? (status >= 500 ? 'Something went wrong' : 'Error')
  const response = pageView(h, 'error', { title, status, message }, status)
  for (const [name, value] of Object.entries(headers)) response.header(name, value)
  return response
}
