import { created, json, noContent, ok, scope, scopedErrors } from './operations.js'
import { ref, type Json } from './parts.js'
import { MAX_PAGE_HEARTBEATS, MAX_PAGE_MONITORS, MAX_PAGE_SITES } from '../rules/status-page-fields.js'

const slug: Json = {
  name: 'slug',
  in: 'path',
  required: true,
  description: "The page's slug: 1 to 64 lower-case letters, digits and hyphens (400 otherwise).",
  schema: { type: 'string', minLength: 1, maxLength: 2048 }
}

const pageTooLarge: Json = {
  description: 'The request body is over 64 KiB.',
  content: { 'application/json': { schema: ref('schemas', 'Error') } }
}

/** Errors of a write with a body: the body's own and the keyed ones. */
const bodyErrors = (...extra: string[]): Json => ({
  ...scopedErrors('BadRequest', ...extra, 'UnsupportedMediaType'),
  413: pageTooLarge
})

const TRACKED = `Every domain is normalised and must be tracked: the first that is not is named in a 400, as is a domain listed twice; at most ${MAX_PAGE_SITES} sites. A site that stops being tracked leaves its pages. \`heartbeats\` (optional) lists heartbeats by slug the same way, shown after the sites: an unknown slug is a 400; at most ${MAX_PAGE_HEARTBEATS}; a removed heartbeat leaves its pages. \`monitors\` (optional) lists tcp, tls and dns monitors by slug alike, at most ${MAX_PAGE_MONITORS}.`

/** Status pages: created, listed, changed and deleted with a key; what `/status/{slug}` publishes. */
export const pagePaths: Json = {
  '/api/v1/pages': {
    get: {
      operationId: 'listPages',
      tags: ['api'],
      summary: 'Every status page, by slug (costs 1)',
      security: scope('read'),
      responses: { 200: ok('The pages.', ref('schemas', 'StatusPageList')), ...scopedErrors() }
    },
    post: {
      operationId: 'createPage',
      tags: ['api'],
      summary: 'Create a status page (costs 1)',
      description: `A public page at \`/status/{slug}\` listing tracked sites in the order given, each with an optional display name. ${TRACKED} A slug taken is a 409.`,
      security: scope('manage'),
      requestBody: { required: true, content: json(ref('schemas', 'CreatePageRequest')) },
      responses: {
        201: created('Created: the page.', "The page's resource.", ref('schemas', 'StatusPageRecord')),
        ...bodyErrors('Conflict')
      }
    }
  },
  '/api/v1/pages/{slug}': {
    get: {
      operationId: 'getPage',
      tags: ['api'],
      summary: 'A status page (costs 1)',
      security: scope('read'),
      parameters: [slug],
      responses: { 200: ok('The page.', ref('schemas', 'StatusPageRecord')), ...scopedErrors('BadRequest', 'NotFound') }
    },
    patch: {
      operationId: 'changePage',
      tags: ['api'],
      summary: "Change a status page's title, description, logo or sites (costs 1)",
      description: `Keys absent are kept; null clears \`description\` or \`logo_url\`; \`sites\` replaces the list, in the order given. ${TRACKED}`,
      security: scope('manage'),
      parameters: [slug],
      requestBody: { required: true, content: json(ref('schemas', 'ChangePageRequest')) },
      responses: { 200: ok('The page as changed.', ref('schemas', 'StatusPageRecord')), ...bodyErrors('NotFound') }
    },
    delete: {
      operationId: 'deletePage',
      tags: ['api'],
      summary: 'Delete a status page (costs 1)',
      description: 'Its sites stay tracked; `/status/{slug}` answers 404 from now on.',
      security: scope('manage'),
      parameters: [slug],
      responses: { 204: noContent('Deleted.'), ...scopedErrors('BadRequest', 'NotFound') }
    }
  }
}
