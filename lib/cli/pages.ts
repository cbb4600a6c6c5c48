import { parseArgs } from 'node:util'
import type { Config } from '../../config/index.js'
import { changePage, createPage, noPage, refusalMessage, type PageWrite } from '../monitoring/status-pages.js'
import { pageUrl, parseNewPage, parsePageChange, parseSlug } from '../rules/status-page-fields.js'
import type { Db } from '../store/db.js'
import { deleteStatusPage, listStatusPages, type StoredStatusPage } from '../store/status-pages.js'
import { readServedUrl } from '../store/service-urls.js'
import { CommandError, UsageError, println, table, type CliIo } from './io.js'

/**
 * The base of the page links printed: PUBLIC_URL when this process was given it, otherwise the URL
 * the newest `serve` on this database announced (its PUBLIC_URL, or the address it listens on), and
 * HOST and PORT's default only when no server has started yet.
 */
async function servedUrl(db: Db, config: Config): Promise<string> {
  return config.publicUrlSet ? config.publicUrl : ((await readServedUrl({ db })) ?? config.publicUrl)
}

export const PAGES_HELP = `usage:
  site-status pages create SLUG --title TITLE [--description TEXT] [--logo-url URL] [DOMAIN[=NAME]...]
                        [--monitor SLUG[=NAME]]... [--heartbeat SLUG[=NAME]]...
                                               a public status page at /status/SLUG listing tracked sites
                                               in the order given, NAME the one the page shows (default:
                                               the site's own), then monitors (tcp, tls, dns) and
                                               heartbeats; prints the page's URL
  site-status pages set SLUG [--title TITLE] [--description TEXT] [--logo-url URL] [--clear FIELD]
                        [DOMAIN[=NAME]...] [--monitor SLUG[=NAME]]... [--heartbeat SLUG[=NAME]]...
                                               change a page; DOMAINs given replace its list of sites,
                                               --monitor its list of monitors, --heartbeat its list of
                                               heartbeats; --clear description, logo-url, sites,
                                               monitors or heartbeats (repeatable)
  site-status pages list                       every page: slug, title, number of sites, URL
  site-status pages remove SLUG                delete a page (its sites stay tracked)`

const text = { type: 'string' } as const
const FIELD_OPTIONS = {
  title: text,
  description: text,
  'logo-url': text,
  heartbeat: { type: 'string', multiple: true },
  monitor: { type: 'string', multiple: true }
} as const
const CLEARABLE = ['description', 'logo-url', 'sites', 'monitors', 'heartbeats'] as const

/** The rules' messages name the API's fields; here they name the options. */
const OPTION_NAMES: ReadonlyArray<[string, string]> = [
  ['"title"', '--title'],
  ['"description"', '--description'],
  ['"logo_url"', '--logo-url']
]

function usage(error: string): UsageError {
  return new UsageError(OPTION_NAMES.reduce((m, [field, option]) => m.replaceAll(field, option), error))
}

/** `DOMAIN[=NAME]` as the API's `{"domain", "name"}`: domains hold no `=`, so the first one ends it. */
function siteOf(arg: string): { domain: string; name?: string } {
  const eq = arg.indexOf('=')
  return eq === -1 ? { domain: arg } : { domain: arg.slice(0, eq), name: arg.slice(eq + 1) }
}

/** `SLUG[=NAME]` (a heartbeat's or a monitor's) as the API's `{"slug", "name"}`: slugs hold no `=`. */
function slugEntryOf(arg: string): { slug: string; name?: string } {
  const eq = arg.indexOf('=')
  return eq === -1 ? { slug: arg } : { slug: arg.slice(0, eq), name: arg.slice(eq + 1) }
}

function slugOf(arg: string | undefined, command: string): string {
  if (arg === undefined) throw new UsageError(`pages ${command} needs a SLUG`)
  const slug = parseSlug(arg)
  if (!slug.ok) throw new UsageError(slug.error)
  return slug.value
}

/** The page's fields as the API's body, only those given (`--clear` as null). */
function fieldsOf(
  values: { title?: string; description?: string; 'logo-url'?: string },
  clear: ReadonlySet<string>
): Record<string, unknown> {
  const body: Record<string, unknown> = {}
  if (values.title !== undefined) body.title = values.title
  if (clear.has('description')) body.description = null
  else if (values.description !== undefined) body.description = values.description
  if (clear.has('logo-url')) body.logo_url = null
  else if (values['logo-url'] !== undefined) body.logo_url = values['logo-url']
  return body
}

function written(outcome: PageWrite, slug: string): StoredStatusPage {
  if (!outcome.ok) throw new CommandError(refusalMessage(outcome, slug))
  return outcome.page
}

/** `site-status pages create|set|list|remove`: the pages API, for the operator, judged by the same rules. */
export async function pagesCommand(args: string[], io: CliIo, open: () => Promise<{ db: Db; config: Config }>): Promise<number> {
  const [sub, ...rest] = args
  if (sub === undefined || sub === '--help' || sub === '-h' || rest.includes('--help')) {
    println(sub === undefined ? io.stderr : io.stdout, PAGES_HELP)
    return sub === undefined ? 2 : 0
  }
  if (sub === 'create') {
    const { values, positionals } = parseArgs({ args: rest, options: FIELD_OPTIONS, strict: true, allowPositionals: true })
    const [slugArg, ...sites] = positionals
    const slug = slugOf(slugArg, 'create')
    if (values.title === undefined) throw new UsageError('pages create needs --title')
    const heartbeats = (values.heartbeat ?? []).map(slugEntryOf)
    const monitors = (values.monitor ?? []).map(slugEntryOf)
    const parsed = parseNewPage({ slug, ...fieldsOf(values, new Set()), sites: sites.map(siteOf), heartbeats, monitors })
    if (!parsed.ok) throw usage(parsed.error)
    const { db, config } = await open()
    const page = written(await createPage({ db, page: parsed.value, now: io.now() }), slug)
    println(io.stderr, `created status page ${slug} with ${page.sites.length} site${page.sites.length === 1 ? '' : 's'}`)
    println(io.stdout, pageUrl(await servedUrl(db, config), slug))
    return 0
  }
  if (sub === 'set') {
    const options = { ...FIELD_OPTIONS, clear: { type: 'string', multiple: true } } as const
    const { values, positionals } = parseArgs({ args: rest, options, strict: true, allowPositionals: true })
    const [slugArg, ...sites] = positionals
    const slug = slugOf(slugArg, 'set')
    const clear = new Set(values.clear ?? [])
    for (const field of clear) {
      if (!(CLEARABLE as readonly string[]).includes(field))
        throw new UsageError(`--clear takes one of ${CLEARABLE.join(', ')}, not "${field}"`)
    }
    if (clear.has('sites') && sites.length > 0) throw new UsageError('pages set takes DOMAINs or --clear sites, not both')
    const body = fieldsOf(values, clear)
    if (sites.length > 0 || clear.has('sites')) body.sites = sites.map(siteOf)
    const heartbeats = values.heartbeat ?? []
    if (clear.has('heartbeats') && heartbeats.length > 0)
      throw new UsageError('pages set takes --heartbeat or --clear heartbeats, not both')
    if (heartbeats.length > 0 || clear.has('heartbeats')) body.heartbeats = heartbeats.map(slugEntryOf)
    const monitors = values.monitor ?? []
    if (clear.has('monitors') && monitors.length > 0) throw new UsageError('pages set takes --monitor or --clear monitors, not both')
    if (monitors.length > 0 || clear.has('monitors')) body.monitors = monitors.map(slugEntryOf)
    if (Object.keys(body).length === 0)
      throw new UsageError('pages set needs --title, --description, --logo-url, --monitor, --heartbeat, --clear or DOMAINs')
    const parsed = parsePageChange(body)
    if (!parsed.ok) throw usage(parsed.error)
    const { db } = await open()
    const page = written(await changePage({ db, slug, change: parsed.value, now: io.now() }), slug)
    println(io.stdout, `changed status page ${slug} (${page.sites.length} site${page.sites.length === 1 ? '' : 's'})`)
    return 0
  }
  if (sub === 'list') {
    parseArgs({ args: rest, options: {}, strict: true })
    const { db, config } = await open()
    const pages = await listStatusPages({ db })
    const base = await servedUrl(db, config)
    println(
      io.stdout,
      table(
        ['SLUG', 'TITLE', 'SITES', 'URL'],
        pages.map((p) => [p.slug, p.title, String(p.sites.length), pageUrl(base, p.slug)])
      )
    )
    return 0
  }
  if (sub === 'remove') {
    const { positionals } = parseArgs({ args: rest, options: {}, strict: true, allowPositionals: true })
    if (positionals.length > 1) throw new UsageError('pages remove takes one SLUG')
    const slug = slugOf(positionals[0], 'remove')
    const { db } = await open()
    if (!(await deleteStatusPage({ db, slug }))) throw new CommandError(noPage(slug))
    println(io.stdout, `removed status page ${slug} (its sites stay tracked)`)
    return 0
  }
  throw new UsageError(`unknown pages command "${sub}"`)
}
