import { stringify } from 'yaml'
import type { ChannelDecl, ConfigFile, MonitorDecl, PolicyDecl, WebhookDecl, WindowDecl } from './config-file.js'

/**
 * A normal form written as a file, what is not set left out, so that an export reads like a
 * hand-written file. Secrets are never written: each is a `${NAME}` the reader sets in the
 * environment of `plan` and `apply` (the names {@link secretNames} lists).
 */

const upper = (text: string): string =>
  text
    .toUpperCase()
    .replace(/[^A-Z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')

/** The environment variable an exported channel secret is read from: `CHANNEL_<NAME>_<FIELD>`. */
export function channelSecretName(channel: string, field: string): string {
  return `CHANNEL_${upper(channel) || 'X'}_${upper(field)}`
}

/** The environment variable an exported site check's secret header is read from: `SITE_<DOMAIN>_<HEADER>`. */
export function checkSecretName(domain: string, header: string): string {
  return `SITE_${upper(domain)}_${upper(header)}`
}

/** The environment variable an exported webhook's secret is read from: `WEBHOOK_<n>_SECRET`, n its place by URL from 1. */
export function webhookSecretName(place: number): string {
  return `WEBHOOK_${place}_SECRET`
}

/** Every `${NAME}` an export of `file` writes, in the order written. */
export function secretNames(file: ConfigFile): string[] {
  return [
    ...file.sites.flatMap((s) => (s.check === null ? [] : s.check.secret_headers.map((h) => checkSecretName(s.domain, h)))),
    ...file.webhooks.flatMap((w, i) => (w.secret === null ? [] : [webhookSecretName(i + 1)])),
    ...file.channels.flatMap((c) => Object.keys(c.secrets).map((f) => channelSecretName(c.name, f)))
  ]
}

const ref = (name: string): string => `\${${name}}`

function webhookOut(w: WebhookDecl, i: number): Record<string, unknown> {
  const out: Record<string, unknown> = { url: w.url }
  if (w.events !== null) out.events = w.events
  if (w.domains !== null) out.domains = w.domains
  if (w.secret !== null) out.secret = ref(webhookSecretName(i + 1))
  return out
}

function channelOut(c: ChannelDecl): Record<string, unknown> {
  const config: Record<string, unknown> = { ...c.config }
  for (const field of Object.keys(c.secrets)) config[field] = ref(channelSecretName(c.name, field))
  const out: Record<string, unknown> = { name: c.name, kind: c.kind, config }
  if (c.report_to !== null) out.report_to = c.report_to
  return out
}

function policyOut(p: PolicyDecl): Record<string, unknown> {
  const { default: isDefault, remind_every_min: remind, escalate, ...rest } = p
  return {
    ...rest,
    ...(remind === null ? {} : { remind_every_min: remind }),
    ...(escalate.length === 0 ? {} : { escalate }),
    ...(isDefault ? { default: true } : {})
  }
}

/** A monitor as a file writes it: its check's unset fields (null, no assertions) left out, as its settings' are. */
const CHECK_ORDER = ['type', 'port', 'record', 'tls', 'send', 'expect_prefix', 'expect', 'rcode', 'assertions']
const checkRank = (key: string): number => (CHECK_ORDER.includes(key) ? CHECK_ORDER.indexOf(key) : CHECK_ORDER.length)

/** A window as a file writes it: no reason when it has none. */
const windowOut = ({ reason, ...w }: WindowDecl): Record<string, unknown> => (reason === null ? w : { ...w, reason })

function monitorOut(m: MonitorDecl): Record<string, unknown> {
  const check = Object.fromEntries(
    Object.entries(m.check)
      .filter(([, v]) => v !== null && !(Array.isArray(v) && v.length === 0))
      .sort(([a], [b]) => checkRank(a) - checkRank(b))
  )
  const out: Record<string, unknown> = { slug: m.slug, name: m.name, target: m.target, check }
  if (m.interval_s !== null) out.interval_s = m.interval_s
  if (m.max_response_ms !== null) out.max_response_ms = m.max_response_ms
  if (m.maintenance.length > 0) out.maintenance = m.maintenance.map(windowOut)
  return out
}

/** The file a normal form is written as; lists with nothing in them are left out, but for `sites`. */
export function configText(file: ConfigFile, schemaUrl: string | null): string {
  const sites = file.sites.map((s) => {
    const out: Record<string, unknown> = { domain: s.domain }
    if (s.name !== s.domain) out.name = s.name
    if (s.interval_s !== null) out.interval_s = s.interval_s
    const expect = Object.fromEntries(Object.entries(s.expect).filter(([, v]) => v !== null))
    if (Object.keys(expect).length > 0) out.expect = expect
    if (s.alert_policy !== null) out.alert_policy = s.alert_policy
    if (s.depends_on !== null) out.depends_on = s.depends_on
    if (s.check !== null) {
      const check = s.check
      const headers = Object.fromEntries(
        Object.entries(check.headers).map(([h, v]) => [h, check.secret_headers.includes(h) ? ref(checkSecretName(s.domain, h)) : v])
      )
      out.check = { ...check, headers }
    }
    if (s.maintenance.length > 0) out.maintenance = s.maintenance.map(windowOut)
    return out
  })
  const pages = file.pages.map((p) => {
    const out: Record<string, unknown> = { slug: p.slug, title: p.title }
    if (p.description !== null) out.description = p.description
    if (p.logo_url !== null) out.logo_url = p.logo_url
    out.sites = p.sites.map((s) => (s.name === null ? { domain: s.domain } : { domain: s.domain, name: s.name }))
    const bySlug = (e: { slug: string; name: string | null }): Record<string, string> =>
      e.name === null ? { slug: e.slug } : { slug: e.slug, name: e.name }
    if (p.monitors.length > 0) out.monitors = p.monitors.map(bySlug)
    if (p.heartbeats.length > 0) out.heartbeats = p.heartbeats.map(bySlug)
    return out
  })
  const heartbeats = file.heartbeats.map(({ max_runtime_s: max, ...h }) => (max === null ? h : { ...h, max_runtime_s: max }))
  const doc: Record<string, unknown> = { sites }
  if (file.monitors.length > 0) doc.monitors = file.monitors.map(monitorOut)
  doc.pages = pages
  if (heartbeats.length > 0) doc.heartbeats = heartbeats
  if (file.webhooks.length > 0) doc.webhooks = file.webhooks.map(webhookOut)
  if (file.channels.length > 0) doc.channels = file.channels.map(channelOut)
  if (file.alert_policies.length > 0) doc.alert_policies = file.alert_policies.map(policyOut)
  const names = secretNames(file)
  const head =
    (schemaUrl === null ? '' : `# yaml-language-server: $schema=${schemaUrl}\n`) +
    (names.length === 0 ? '' : `# secrets, set in the environment of plan and apply: ${names.join(', ')}\n`)
  return head + stringify(doc, { lineWidth: 0 })
}
