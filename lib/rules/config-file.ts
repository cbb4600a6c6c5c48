import Joi from 'joi'
import { channelSchema, checkChannels, checkPolicies, MAX_FILE_CHANNELS, MAX_FILE_POLICIES, policySchema } from './config-alerting.js'
import type { ChannelDecl, PolicyDecl } from './config-alerting.js'
import { checkHeartbeats, checkWebhooks, heartbeatSchema, MAX_FILE_HEARTBEATS, MAX_FILE_WEBHOOKS, webhookSchema } from './config-hooks.js'
import type { HeartbeatDecl, WebhookDecl } from './config-hooks.js'
import { checkMonitors, MAX_FILE_MONITORS, monitorSchema, type MonitorDecl } from './config-monitors.js'
import { ALWAYS_SECRET, checkSchema, type HttpCheck } from './check-spec.js'
import { tryNormaliseDomain } from './domain.js'
import { NO_EXPECTATIONS, type Expectations } from './expectations.js'
import { maintenanceWindowSchema, MAX_WINDOWS_PER_SITE, windowDecl, type MaintenanceWindow, type WindowDecl } from './maintenance.js'
import { parseSiteName, SiteNameError } from './site-name.js'
import { siteFieldKeys } from './site-settings.js'
import { newPageSchema, slugSchema, type PageHeartbeatInput, type PageMonitorInput, type PageSiteInput } from './status-page-fields.js'

/**
 * A configuration file: what a team declares it watches (docs/decisions.md, "Monitoring as code").
 * Each entry is judged by the same Joi rules the API judges a request by, then put in its normal
 * form, in which two files that mean the same are equal: sites sorted by domain, pages by slug,
 * every optional field present (null when not set), a site's name its domain when not given.
 */

/** The most sites a file may declare: a bound on what one apply holds in memory and writes. */
export const MAX_FILE_SITES = 50_000
export const MAX_FILE_PAGES = 1_000
/** The longest alert policy name (alert_policies.name). */
const MAX_POLICY_NAME = 100

export type { ChannelDecl, HeartbeatDecl, MonitorDecl, PolicyDecl, WebhookDecl }

export { windowDecl, type WindowDecl } from './maintenance.js'

/** A site as the file declares it, in normal form. */
export interface SiteDecl {
  domain: string
  name: string
  interval_s: number | null
  expect: Expectations
  /** The alert policy's name; null: the default policy. */
  alert_policy: string | null
  /** The domain of a site declared in the same file whose outage silences this one's alerts. */
  depends_on: string | null
  /** Its maintenance windows, in the order given; the file's list replaces the stored one. */
  maintenance: WindowDecl[]
  /** Its http request (secret header values from the environment); null: the plain web check. */
  check: HttpCheck | null
}

/** A status page as the file declares it, in normal form. */
export interface PageDecl {
  slug: string
  title: string
  description: string | null
  logo_url: string | null
  sites: PageSiteInput[]
  /** Heartbeats the file declares, by slug, in the page's order; absent in the file: none. */
  heartbeats: PageHeartbeatInput[]
  /** Monitors (tcp, tls, dns) the file declares, by slug, in the page's order; absent in the file: none. */
  monitors: PageMonitorInput[]
}

/** A whole file in normal form. */
export interface ConfigFile {
  sites: SiteDecl[]
  /** Monitors of kind tcp, tls and dns, by slug. */
  monitors: MonitorDecl[]
  pages: PageDecl[]
  webhooks: WebhookDecl[]
  heartbeats: HeartbeatDecl[]
  channels: ChannelDecl[]
  alert_policies: PolicyDecl[]
}

/** Where in the file a problem is (keys and list positions from the top) and what it is. */
export interface FileProblem {
  path: Array<string | number>
  message: string
}

export type FileResult = { ok: true; file: ConfigFile } | { ok: false; problems: FileProblem[] }

const pageField = (key: string): Joi.Schema => newPageSchema.extract(key)

const siteSchema = Joi.object({
  domain: Joi.string().required(),
  ...siteFieldKeys,
  alert_policy: Joi.string().min(1).max(MAX_POLICY_NAME).allow(null),
  depends_on: Joi.string().max(253).allow(null),
  maintenance: Joi.array().items(maintenanceWindowSchema).max(MAX_WINDOWS_PER_SITE),
  check: checkSchema.allow(null)
}).unknown(false)

const pageSchema = Joi.object({
  slug: slugSchema.required(),
  title: pageField('title').required(),
  description: pageField('description'),
  logo_url: pageField('logo_url'),
  sites: pageField('sites').required(),
  heartbeats: pageField('heartbeats'),
  monitors: pageField('monitors')
}).unknown(false)

/** The file's schema: the JSON Schema served at /api/v1/config.schema.json is generated from it. */
export const configFileSchema = Joi.object({
  sites: Joi.array().items(siteSchema).max(MAX_FILE_SITES),
  monitors: Joi.array().items(monitorSchema).max(MAX_FILE_MONITORS),
  pages: Joi.array().items(pageSchema).max(MAX_FILE_PAGES),
  webhooks: Joi.array().items(webhookSchema).max(MAX_FILE_WEBHOOKS),
  heartbeats: Joi.array().items(heartbeatSchema).max(MAX_FILE_HEARTBEATS),
  channels: Joi.array().items(channelSchema).max(MAX_FILE_CHANNELS),
  alert_policies: Joi.array().items(policySchema).max(MAX_FILE_POLICIES)
})
  .unknown(false)
  .prefs({ convert: false })
  .messages({ 'object.base': 'the file must be a mapping with lists such as "sites" and "pages"' })

interface RawSite {
  domain: string
  name?: string
  interval_s?: number | null
  expect?: Partial<Expectations> | null
  alert_policy?: string | null
  depends_on?: string | null
  maintenance?: MaintenanceWindow[]
  check?: HttpCheck | null
}
interface RawPage {
  slug: string
  title: string
  description?: string | null
  logo_url?: string | null
  sites: PageSiteInput[]
  heartbeats?: PageHeartbeatInput[]
  monitors?: PageMonitorInput[]
}

/** A site with every key in place: absent ones as null, the name its domain. */
function siteDecl(raw: RawSite, domain: string, name: string | null, dependsOn: string | null): SiteDecl {
  return {
    domain,
    name: name ?? domain,
    interval_s: raw.interval_s ?? null,
    expect: { ...NO_EXPECTATIONS, ...(raw.expect ?? {}) },
    alert_policy: raw.alert_policy ?? null,
    depends_on: dependsOn,
    maintenance: (raw.maintenance ?? []).map(windowDecl),
    check: raw.check ?? null
  }
}

/** A tracked site's check is an http request; its secret header values come from the environment. */
function checkProblems(raw: RawSite, i: number, fromEnv: ReadonlySet<string>, problems: FileProblem[]): void {
  const check = raw.check
  if (check === undefined || check === null) return
  if ((check.type as string) !== 'http') {
    problems.push({ path: ['sites', i, 'check', 'type'], message: `a tracked site's check is an http request, not ${check.type}` })
    return
  }
  const env = new Set([...fromEnv].map((p) => p.toLowerCase()))
  for (const name of new Set([...check.secret_headers, ...ALWAYS_SECRET.filter((n) => n in check.headers)])) {
    if (!env.has(`sites[${i}].check.headers.${name}`))
      problems.push({
        path: ['sites', i, 'check', 'headers', name],
        message: 'a secret header is written "${NAME}" and NAME set in the environment'
      })
  }
}

function domainAt(raw: unknown, path: FileProblem['path'], problems: FileProblem[]): string | null {
  const parsed = tryNormaliseDomain(raw)
  if (parsed.ok) return parsed.domain
  problems.push({ path, message: parsed.error.message })
  return null
}

function nameAt(raw: string | undefined, path: FileProblem['path'], problems: FileProblem[]): string | null {
  try {
    return parseSiteName(raw)
  } catch (err) {
    if (!(err instanceof SiteNameError)) throw err
    problems.push({ path, message: err.message })
    return null
  }
}

/** The domain of the first site on a loop of `depends_on`, or null when there is none. */
function dependencyLoop(sites: readonly SiteDecl[]): string | null {
  const parent = new Map(sites.map((s) => [s.domain, s.depends_on]))
  for (const start of parent.keys()) {
    const seen = new Set<string>()
    for (let at: string | null | undefined = start; at != null; at = parent.get(at)) {
      if (seen.has(at)) return start
      seen.add(at)
    }
  }
  return null
}

/** The slugs of the heartbeats and monitors a file declares: what its pages may list besides its sites. */
interface DeclaredSlugs {
  heartbeats: ReadonlySet<string>
  monitors: ReadonlySet<string>
}

/**
 * Checks what the schema cannot (a domain declared twice, a page or a dependency naming a site the
 * file does not declare, a page listing a heartbeat or monitor it does not declare) and sorts.
 */
function crossChecked(
  rawSites: RawSite[],
  rawPages: RawPage[],
  slugsDeclared: DeclaredSlugs,
  fromEnv: ReadonlySet<string>,
  problems: FileProblem[]
): { sites: SiteDecl[]; pages: PageDecl[] } {
  const declared = new Map<string, number>()
  rawSites.forEach((raw, i) => {
    const domain = domainAt(raw.domain, ['sites', i, 'domain'], problems)
    if (domain === null) return
    if (declared.has(domain))
      problems.push({ path: ['sites', i, 'domain'], message: `${domain} is declared twice (also sites[${declared.get(domain)}])` })
    else declared.set(domain, i)
  })
  const sites: SiteDecl[] = []
  rawSites.forEach((raw, i) => {
    const domain = tryNormaliseDomain(raw.domain)
    const name = nameAt(raw.name, ['sites', i, 'name'], problems)
    checkProblems(raw, i, fromEnv, problems)
    let dependsOn: string | null = null
    if (typeof raw.depends_on === 'string') {
      dependsOn = domainAt(raw.depends_on, ['sites', i, 'depends_on'], problems)
      if (dependsOn !== null && !declared.has(dependsOn))
        problems.push({ path: ['sites', i, 'depends_on'], message: `"depends_on" names ${dependsOn}, which this file does not declare` })
      else if (domain.ok && dependsOn === domain.domain)
        problems.push({ path: ['sites', i, 'depends_on'], message: '"depends_on" names the site itself' })
    }
    if (domain.ok && declared.get(domain.domain) === i) sites.push(siteDecl(raw, domain.domain, name, dependsOn))
  })
  const slugs = new Map<string, number>()
  rawPages.forEach((page, i) => {
    if (slugs.has(page.slug))
      problems.push({
        path: ['pages', i, 'slug'],
        message: `the slug "${page.slug}" is declared twice (also pages[${slugs.get(page.slug)}])`
      })
    else slugs.set(page.slug, i)
    page.sites.forEach((s, k) => {
      if (!declared.has(s.domain))
        problems.push({ path: ['pages', i, 'sites', k, 'domain'], message: `the page lists ${s.domain}, which this file does not declare` })
    })
    for (const list of ['heartbeats', 'monitors'] as const) {
      const one = list === 'heartbeats' ? 'heartbeat' : 'monitor'
      ;(page[list] ?? []).forEach((entry, k) => {
        if (!slugsDeclared[list].has(entry.slug))
          problems.push({
            path: ['pages', i, list, k, 'slug'],
            message: `the page lists the ${one} "${entry.slug}", which this file does not declare`
          })
      })
    }
  })
  const loop = problems.length === 0 ? dependencyLoop(sites) : null
  if (loop !== null)
    problems.push({ path: ['sites', declared.get(loop) as number, 'depends_on'], message: '"depends_on" makes a loop of dependencies' })
  const pages: PageDecl[] = rawPages.map((p) => ({
    slug: p.slug,
    title: p.title,
    description: p.description ?? null,
    logo_url: p.logo_url ?? null,
    sites: p.sites,
    heartbeats: p.heartbeats ?? [],
    monitors: p.monitors ?? []
  }))
  sites.sort((a, b) => (a.domain < b.domain ? -1 : a.domain > b.domain ? 1 : 0))
  pages.sort((a, b) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0))
  return { sites, pages }
}

/**
 * Judges a file's content (secrets already put in from the environment): its normal form, or every
 * problem found with where it is. Nothing is read from outside: names of alert policies and
 * channels the file does not declare are judged against the database when the file is planned.
 * `fromEnv` holds the fields (`webhooks[0].secret`) whose value came from the environment: a
 * secret field must be one of them.
 */
export function checkConfigFile(input: unknown, fromEnv: ReadonlySet<string> = new Set()): FileResult {
  const result = configFileSchema.validate(input ?? {}, { abortEarly: false })
  if (result.error) {
    return { ok: false, problems: result.error.details.map((d) => ({ path: d.path, message: d.message })) }
  }
  const value = result.value as {
    sites?: RawSite[]
    monitors?: Parameters<typeof checkMonitors>[0]
    pages?: RawPage[]
    webhooks?: Parameters<typeof checkWebhooks>[0]
    heartbeats?: Parameters<typeof checkHeartbeats>[0]
    channels?: Parameters<typeof checkChannels>[0]
    alert_policies?: Parameters<typeof checkPolicies>[0]
  }
  const problems: FileProblem[] = []
  const slugsDeclared: DeclaredSlugs = {
    heartbeats: new Set((value.heartbeats ?? []).map((h) => h.slug)),
    monitors: new Set((value.monitors ?? []).map((m) => m.slug))
  }
  const { sites, pages } = crossChecked(value.sites ?? [], value.pages ?? [], slugsDeclared, fromEnv, problems)
  const monitors = checkMonitors(value.monitors ?? [], problems)
  const webhooks = checkWebhooks(value.webhooks ?? [], fromEnv, problems)
  const heartbeats = checkHeartbeats(value.heartbeats ?? [], problems)
  const channels = checkChannels(value.channels ?? [], fromEnv, problems)
  const alertPolicies = checkPolicies(value.alert_policies ?? [], problems)
  if (problems.length > 0) return { ok: false, problems }
  return { ok: true, file: { sites, monitors, pages, webhooks, heartbeats, channels, alert_policies: alertPolicies } }
}

/** A path as a reader writes it: `sites[2].expect.status`. */
export function pathText(path: FileProblem['path']): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('')
}
