import Boom from '@hapi/boom'
import type { ServerRoute } from '@hapi/hapi'
import Joi from 'joi'
import { requireScope } from '../auth.js'
import { changePage, createPage, noPage, refusalMessage, type PageRefusal } from '../monitoring/status-pages.js'
import { newPageSchema, pageChangeSchema, pageUrl, slugSchema, type NewPage, type PageChange } from '../rules/status-page-fields.js'
import type { Db } from '../store/db.js'
import { deleteStatusPage, findStatusPage, listStatusPages, type StoredStatusPage } from '../store/status-pages.js'

/**
 * The largest page body: 100 sites with a long domain and name each, the description and the logo
 * URL come to about 50 KB of JSON.
 */
export const MAX_PAGE_BODY_BYTES = 64 * 1024

const slugParams = Joi.object({ slug: slugSchema.required() })

/** A page as the API shows it: its fields, its sites, heartbeats and monitors in order with the name the page gives them, its public address. */
export interface PageRecord {
  slug: string
  title: string
  description: string | null
  logo_url: string | null
  sites: Array<{ domain: string; name: string | null }>
  heartbeats: Array<{ slug: string; name: string | null }>
  monitors: Array<{ slug: string; name: string | null }>
  url: string
  created_at: string
  changed_at: string
}

export function pageRecord(page: StoredStatusPage, publicUrl: string): PageRecord {
  return {
    slug: page.slug,
    title: page.title,
    description: page.description,
    logo_url: page.logo_url,
    sites: page.sites.map((s) => ({ domain: s.domain, name: s.display_name })),
    heartbeats: page.heartbeats.map((h) => ({ slug: h.slug, name: h.display_name })),
    monitors: page.monitors.map((m) => ({ slug: m.slug, name: m.display_name })),
    url: pageUrl(publicUrl, page.slug),
    created_at: page.created_at.toISOString(),
    changed_at: page.changed_at.toISOString()
  }
}

/** A write that came to nothing, as an answer: the use case's words, the status its reason calls for. */
function refusal(outcome: PageRefusal, slug: string): Boom.Boom {
  const message = refusalMessage(outcome, slug)
  if (outcome.reason === 'not_tracked' || outcome.reason === 'no_heartbeat' || outcome.reason === 'no_monitor')
    return Boom.badRequest(message)
  return outcome.reason === 'slug_taken' ? Boom.conflict(message) : Boom.notFound(message)
}

/**
 * Status pages as a resource (docs/decisions.md, Status pages: the management API): created,
 * changed and deleted with `manage`, read with `read`. The public page is made from what is stored
 * here; a page lists tracked sites only, and a site that stops being tracked leaves its pages.
 */
export function statusPageRoutes({
  db,
  now,
  publicUrl,
  forget = () => {}
}: {
  db: Db
  now: () => Date
  publicUrl: string
  /** Says a page was created, changed or deleted here, so that its public answers show it at once. */
  forget?: (slug: string) => void
}): ServerRoute[] {
  const body = { allow: 'application/json', maxBytes: MAX_PAGE_BODY_BYTES }
  return [
    {
      method: 'POST',
      path: '/api/v1/pages',
      options: { auth: requireScope('manage'), payload: body, validate: { payload: newPageSchema } },
      handler: async (request, h) => {
        const page = request.payload as NewPage
        const outcome = await createPage({ db, page, now: now() })
        if (!outcome.ok) throw refusal(outcome, page.slug)
        forget(page.slug)
        return h.response(pageRecord(outcome.page, publicUrl)).code(201).location(`/api/v1/pages/${page.slug}`)
      }
    },
    {
      method: 'GET',
      path: '/api/v1/pages',
      options: { auth: requireScope('read') },
      handler: async () => ({ pages: (await listStatusPages({ db })).map((p) => pageRecord(p, publicUrl)) })
    },
    {
      method: 'GET',
      path: '/api/v1/pages/{slug}',
      options: { auth: requireScope('read'), validate: { params: slugParams } },
      handler: async (request) => {
        const { slug } = request.params as { slug: string }
        const page = await findStatusPage({ db, slug })
        if (page === null) throw Boom.notFound(noPage(slug))
        return pageRecord(page, publicUrl)
      }
    },
    {
      method: 'PATCH',
      path: '/api/v1/pages/{slug}',
      options: { auth: requireScope('manage'), payload: body, validate: { params: slugParams, payload: pageChangeSchema } },
      handler: async (request) => {
        const { slug } = request.params as { slug: string }
        const outcome = await changePage({ db, slug, change: request.payload as PageChange, now: now() })
        if (!outcome.ok) throw refusal(outcome, slug)
        forget(slug)
        return pageRecord(outcome.page, publicUrl)
      }
    },
    {
      method: 'DELETE',
      path: '/api/v1/pages/{slug}',
      options: { auth: requireScope('manage'), validate: { params: slugParams } },
      handler: async (request, h) => {
        const { slug } = request.params as { slug: string }
        if (!(await deleteStatusPage({ db, slug }))) throw Boom.notFound(noPage(slug))
        forget(slug)
        return h.response().code(204)
      }
    }
  ]
}
