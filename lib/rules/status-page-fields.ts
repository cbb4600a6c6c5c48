import Joi from 'joi'
import { isPlainHost, tryNormaliseDomain } from './domain.js'
import { parseSiteName, SiteNameError } from './site-name.js'
import { validated, type Validated } from './validated.js'

/**
 * What a status page may be made of, as the pages API and the operator tool both judge it: one
 * set of schemas, so that a 400 and a usage error say the same words. Values that pass are in their
 * normal form (domains normalised, names and title trimmed, the logo URL as the URL parser writes it).
 */

export const MAX_SLUG_LENGTH = 64
export const MAX_TITLE_LENGTH = 200
export const MAX_DESCRIPTION_LENGTH = 1000
export const MAX_LOGO_URL_LENGTH = 2048
/** Sites a page may list: the page's view reads each one's 90 days, so this bounds one render. */
export const MAX_PAGE_SITES = 100
/** Heartbeats a page may list, bounded as its sites are. */
export const MAX_PAGE_HEARTBEATS = 100
/** Monitors (tcp, tls, dns) a page may list, bounded as its sites are. */
export const MAX_PAGE_MONITORS = 100

/** A site as a page lists it: a tracked domain and the name the page shows for it (null: the site's own). */
export interface PageSiteInput {
  domain: string
  name: string | null
}

/** A heartbeat as a page lists it: its slug and the name the page shows for it (null: the heartbeat's own). */
export interface PageHeartbeatInput {
  slug: string
  name: string | null
}

/** A monitor as a page lists it: its slug and the name the page shows for it (null: the monitor's own). */
export interface PageMonitorInput {
  slug: string
  name: string | null
}

/** A new page, validated. */
export interface NewPage {
  slug: string
  title: string
  description: string | null
  logo_url: string | null
  sites: PageSiteInput[]
  /** Absent: none (a body without the key, as before heartbeats could be listed). */
  heartbeats?: PageHeartbeatInput[]
  /** Absent: none, as `heartbeats`. */
  monitors?: PageMonitorInput[]
}

/**
 * A change of a page: absent keys are kept; null clears `description` or `logo_url`; `sites`,
 * `heartbeats` and `monitors` each replace their list.
 */
export interface PageChange {
  title?: string
  description?: string | null
  logo_url?: string | null
  sites?: PageSiteInput[]
  heartbeats?: PageHeartbeatInput[]
  monitors?: PageMonitorInput[]
}

const SLUG_MESSAGE = `"slug" must be 1 to ${MAX_SLUG_LENGTH} lower-case letters, digits and hyphens`
const TITLE_MESSAGE = `"title" must be 1 to ${MAX_TITLE_LENGTH} printable characters`
const DESCRIPTION_MESSAGE = `"description" must be 1 to ${MAX_DESCRIPTION_LENGTH} characters, line breaks allowed but no other control characters (null clears it)`
const LOGO_MESSAGE = `"logo_url" must be an http:// or https:// URL of at most ${MAX_LOGO_URL_LENGTH} characters, its host a name or an address, without a user name or password (null clears it)`
const SITES_MESSAGE = `"sites" must be a list of at most ${MAX_PAGE_SITES} sites, each an object with a "domain" and an optional "name"`
const FIELDS = '"slug", "title", "description", "logo_url", "sites", "heartbeats" and "monitors"'
const CHANGES = '"title", "description", "logo_url", "sites", "heartbeats" and "monitors"'

const every = (codes: readonly string[], message: string): Record<string, string> =>
  Object.fromEntries(codes.map((code) => [code, message]))

export const slugSchema = Joi.string()
  .pattern(/^[a-z0-9-]+$/)
  .max(MAX_SLUG_LENGTH)
  .messages(every(['any.required', 'string.base', 'string.empty', 'string.max', 'string.pattern.base'], SLUG_MESSAGE))

const titleSchema = Joi.any()
  .custom((value: unknown, helpers) => {
    const title = typeof value === 'string' ? value.trim() : ''
    if (title === '' || title.length > MAX_TITLE_LENGTH || /\p{Cc}/u.test(title)) return helpers.error('any.invalid')
    return title
  })
  .messages(every(['any.required', 'any.invalid'], TITLE_MESSAGE))

const descriptionSchema = Joi.any()
  .custom((value: unknown, helpers) => {
    const text = typeof value === 'string' ? value.trim() : ''
    // Line breaks and tabs are what a paragraph of text holds; other control characters are not text.
    if (text === '' || text.length > MAX_DESCRIPTION_LENGTH || /[^\P{Cc}\n\r\t]/u.test(text)) return helpers.error('any.invalid')
    return text
  })
  .allow(null)
  .messages(every(['any.invalid'], DESCRIPTION_MESSAGE))

function parsedUrl(text: string): URL | null {
  try {
    return new URL(text)
  } catch {
    return null
  }
}

const logoUrlSchema = Joi.any()
  .custom((value: unknown, helpers) => {
    const url = typeof value === 'string' && value.length <= MAX_LOGO_URL_LENGTH ? parsedUrl(value.trim()) : null
    // The page is public: a URL with credentials in it would publish them.
    // Its host goes into the page's CSP (img-src): a plain name or address only, never `*` or `;`.
    const fits = url !== null && /^https?:$/.test(url.protocol) && isPlainHost(url.hostname) && url.username === '' && url.password === ''
    if (!fits || url.href.length > MAX_LOGO_URL_LENGTH) return helpers.error('any.invalid')
    return url.href
  })
  .allow(null)
  .messages(every(['any.invalid'], LOGO_MESSAGE))

/** One entry of `sites`: its position is counted from 1, as an operator counts. */
const siteSchema = Joi.any().custom((value: unknown, helpers) => {
  const path = helpers.state.path ?? []
  const n = Number(path[path.length - 1] ?? 0) + 1
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return helpers.error('site.shape', { n })
  const entry = value as Record<string, unknown>
  const unknown = Object.keys(entry).find((key) => key !== 'domain' && key !== 'name')
  if (unknown !== undefined) return helpers.error('site.shape', { n })
  const domain = tryNormaliseDomain(entry.domain)
  if (!domain.ok) return helpers.error('site.invalid', { n, why: domain.error.message })
  try {
    // A name that is not text is judged as an empty one: the same message either way.
    const name = entry.name === null || entry.name === undefined ? null : parseSiteName(typeof entry.name === 'string' ? entry.name : '')
    return { domain: domain.domain, name }
  } catch (err) {
    if (err instanceof SiteNameError) return helpers.error('site.invalid', { n, why: err.message })
    throw err
  }
})

const sitesSchema = Joi.array()
  .items(siteSchema)
  .max(MAX_PAGE_SITES)
  .custom((sites: PageSiteInput[], helpers) => {
    const seen = new Set<string>()
    for (const { domain } of sites) {
      if (seen.has(domain)) return helpers.error('sites.twice', { domain })
      seen.add(domain)
    }
    return sites
  })
  .messages({
    ...every(['any.required', 'array.base', 'array.max'], SITES_MESSAGE),
    'site.shape': 'site {#n} must be an object with a "domain" and an optional "name"',
    'site.invalid': 'site {#n}: {#why}',
    'sites.twice': '{#domain} is listed twice'
  })

/**
 * A list of things a page names by slug (`heartbeats`, `monitors`): each entry `{slug, name?}`,
 * counted from 1 as sites are, each slug once.
 */
function slugListSchema(one: 'heartbeat' | 'monitor', max: number): Joi.ArraySchema {
  const entry = Joi.any().custom((value: unknown, helpers) => {
    const path = helpers.state.path ?? []
    const n = Number(path[path.length - 1] ?? 0) + 1
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return helpers.error('entry.shape', { n })
    const fields = value as Record<string, unknown>
    if (Object.keys(fields).some((key) => key !== 'slug' && key !== 'name')) return helpers.error('entry.shape', { n })
    if (typeof fields.slug !== 'string' || !/^[a-z0-9-]+$/.test(fields.slug) || fields.slug.length > MAX_SLUG_LENGTH)
      return helpers.error('entry.invalid', { n, why: `"slug" must be 1 to ${MAX_SLUG_LENGTH} lower-case letters, digits and hyphens` })
    try {
      const name =
        fields.name === null || fields.name === undefined ? null : parseSiteName(typeof fields.name === 'string' ? fields.name : '')
      return { slug: fields.slug, name }
    } catch (err) {
      if (err instanceof SiteNameError) return helpers.error('entry.invalid', { n, why: err.message })
      throw err
    }
  })
  return Joi.array()
    .items(entry)
    .max(max)
    .custom((entries: Array<{ slug: string }>, helpers) => {
      const seen = new Set<string>()
      for (const { slug } of entries) {
        if (seen.has(slug)) return helpers.error('entries.twice', { slug })
        seen.add(slug)
      }
      return entries
    })
    .messages({
      ...every(
        ['array.base', 'array.max'],
        `"${one}s" must be a list of at most ${max} ${one}s, each an object with a "slug" and an optional "name"`
      ),
      'entry.shape': `${one} {#n} must be an object with a "slug" and an optional "name"`,
      'entry.invalid': `${one} {#n}: {#why}`,
      'entries.twice': `${one} {#slug} is listed twice`
    })
}

const heartbeatsSchema = slugListSchema('heartbeat', MAX_PAGE_HEARTBEATS)
const monitorsSchema = slugListSchema('monitor', MAX_PAGE_MONITORS)

const bodyMessages = (fields: string) => ({
  'object.base': `request body must be a JSON object with ${fields}`,
  'object.unknown': `request body may hold only ${fields}, not "{#child}"`
})

export const newPageSchema = Joi.object({
  slug: slugSchema.required(),
  title: titleSchema.required(),
  description: descriptionSchema.default(null),
  logo_url: logoUrlSchema.default(null),
  sites: sitesSchema.required(),
  heartbeats: heartbeatsSchema.default([]),
  monitors: monitorsSchema.default([])
})
  .required()
  .unknown(false)
  .prefs({ convert: false })
  .messages({ ...bodyMessages(FIELDS), 'any.required': `request body must be a JSON object with ${FIELDS}` })

export const pageChangeSchema = Joi.object({
  title: titleSchema,
  description: descriptionSchema,
  logo_url: logoUrlSchema,
  sites: sitesSchema,
  heartbeats: heartbeatsSchema,
  monitors: monitorsSchema
})
  .required()
  .min(1)
  .unknown(false)
  .prefs({ convert: false })
  .messages({
    ...bodyMessages(CHANGES),
    'any.required': `request body must change at least one of ${CHANGES}`,
    'object.min': `request body must change at least one of ${CHANGES}`
  })

/** Validates a new page outside a route (the operator tool): its normal form, or the 400 message. */
export function parseNewPage(input: unknown): Validated<NewPage> {
  return validated<NewPage>(newPageSchema, input)
}

/** Validates a change of a page outside a route: its normal form, or the 400 message. */
export function parsePageChange(input: unknown): Validated<PageChange> {
  return validated<PageChange>(pageChangeSchema, input)
}

/** A slug as {@link slugSchema} accepts it, tested without Joi: the public pages check one on every hit. */
const SLUG = new RegExp(`^[a-z0-9-]{1,${MAX_SLUG_LENGTH}}$`)

/** Validates a slug outside a route (the schema only for what is no slug, to say why). */
export function parseSlug(input: unknown): Validated<string> {
  if (typeof input === 'string' && SLUG.test(input)) return { ok: true, value: input }
  return validated<string>(slugSchema.required(), input)
}

/** Where a page is published: PUBLIC_URL (no trailing slash) and `/status/{slug}`. */
export function pageUrl(publicUrl: string, slug: string): string {
  return `${publicUrl}/status/${slug}`
}
