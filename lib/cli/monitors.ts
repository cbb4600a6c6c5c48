import { parseArgs } from 'node:util'
import type { Config } from '../../config/index.js'
import { addMonitor, removeMonitor } from '../monitoring/monitors.js'
import { currentVerdict } from '../monitoring/state/status-record.js'
import { monitorOf } from '../rules/monitor.js'
import { monitorBody, monitorSlug, type MonitorInput } from '../rules/monitor-fields.js'
import { isDuplicateKey, type Db } from '../store/db.js'
import { listMonitors } from '../store/monitors.js'
import { SecretBox } from '../webhooks/secret-box.js'
import { parseAssertion } from './site-checks.js'
import { CommandError, UsageError, println, table, type CliIo } from './io.js'

export const MONITORS_HELP = `usage:
  site-status sites add --kind tcp|tls|dns HOST [monitor flags]
  site-status monitors add --kind tcp|tls|dns HOST [monitor flags]
                                 track one host by a tcp, tls or dns check (a monitor, named by its
                                 slug); prints the slug
  site-status monitors list      every monitor: slug, kind, target, check, status
  site-status monitors remove SLUG
                                 stop a monitor; its history is kept
monitor flags:
  --name NAME              its name (default: KIND HOST); --slug SLUG its slug (default: made of the name)
  --port N                 tcp: the port (required); tls: the port (default 443)
  --send TEXT              tcp: written once connected; --expect-prefix TEXT: the reply must start so
  --tls                    tcp: TLS on connect
  --record TYPE            dns: A, AAAA, CNAME, MX, TXT, NS, CAA or SRV (required)
  --expect-answer V        dns: an expected record in dig's form ('10 mx.example.com'); may be repeated
  --rcode R                dns: the expected rcode (NOERROR default, NXDOMAIN, SERVFAIL, REFUSED)
  --assert 'SOURCE COMPARISON [TARGET]'
                           as for sites (response_time, text_body, certificate_days); may be repeated
  --interval S             check every S seconds (30-3600) instead of CHECK_INTERVAL_S
  --max-response-ms N      two checks in a row slower than N ms make it slow`

export const MONITOR_OPTIONS = {
  kind: { type: 'string' },
  name: { type: 'string' },
  slug: { type: 'string' },
  port: { type: 'string' },
  send: { type: 'string' },
  'expect-prefix': { type: 'string' },
  tls: { type: 'boolean' },
  record: { type: 'string' },
  'expect-answer': { type: 'string', multiple: true },
  rcode: { type: 'string' },
  assert: { type: 'string', multiple: true },
  interval: { type: 'string' },
  'max-response-ms': { type: 'string' }
} as const

type Values = ReturnType<typeof parseArgs<{ options: typeof MONITOR_OPTIONS; allowPositionals: true }>>['values']

function whole(text: string | undefined, flag: string): number | undefined {
  if (text === undefined) return undefined
  if (!/^\d{1,9}$/.test(text)) throw new UsageError(`--${flag} must be a whole number`)
  return Number(text)
}

/** The flags as a monitor's body, judged by the API's rules. */
export function monitorOfFlags(values: Values, host: string): MonitorInput {
  const kind = values.kind ?? ''
  const assertions = (values.assert ?? []).map(parseAssertion)
  const port = whole(values.port, 'port')
  const check: Record<string, unknown> =
    kind === 'tcp'
      ? {
          type: 'tcp',
          ...(port === undefined ? {} : { port }),
          ...(values.send === undefined ? {} : { send: values.send }),
          ...(values['expect-prefix'] === undefined ? {} : { expect_prefix: values['expect-prefix'] }),
          ...(values.tls === true ? { tls: true } : {}),
          assertions
        }
      : kind === 'tls'
        ? { type: 'tls', ...(port === undefined ? {} : { port }), assertions }
        : kind === 'dns'
          ? {
              type: 'dns',
              ...(values.record === undefined ? {} : { record: values.record.toUpperCase() }),
              ...(values['expect-answer'] === undefined ? {} : { expect: values['expect-answer'] }),
              ...(values.rcode === undefined ? {} : { rcode: values.rcode.toUpperCase() }),
              assertions
            }
          : (() => {
              throw new UsageError('--kind must be tcp, tls or dns')
            })()
  const interval = whole(values.interval, 'interval')
  const max = whole(values['max-response-ms'], 'max-response-ms')
  const body = {
    name: values.name ?? `${kind} ${host}`,
    ...(values.slug === undefined ? {} : { slug: values.slug }),
    target: host,
    check,
    ...(interval === undefined ? {} : { interval_s: interval }),
    ...(max === undefined ? {} : { max_response_ms: max })
  }
  const result = monitorBody.validate(body, { abortEarly: true })
  if (result.error) throw new UsageError(result.error.message)
  return result.value as MonitorInput
}

/** `sites add --kind K HOST` and `monitors add --kind K HOST`: a monitor added; its slug printed. */
export async function addMonitorCommand(args: string[], io: CliIo, open: () => Promise<{ db: Db; config: Config }>): Promise<number> {
  const { values, positionals } = parseArgs({ args, options: MONITOR_OPTIONS, strict: true, allowPositionals: true })
  if (positionals.length !== 1) throw new UsageError('a monitor needs one HOST')
  const input = monitorOfFlags(values, positionals[0] as string)
  const slug = monitorSlug(input)
  if (slug === '') throw new UsageError('--slug is needed when the name has no letters or digits')
  const { db, config } = await open()
  const box = new SecretBox({ key: config.webhookKey, keyFile: config.webhookKeyFile })
  await addMonitor({ db, slug, input, box, now: io.now() }).catch((err: unknown) => {
    if (isDuplicateKey(err)) throw new CommandError(`a monitor named ${slug} exists`)
    throw err
  })
  println(io.stderr, `now tracking ${input.target} by a ${input.check.type} check, as monitor ${slug}`)
  println(io.stdout, slug)
  return 0
}

/** `site-status monitors add|list|remove`. */
export async function monitorsCommand(args: string[], io: CliIo, open: () => Promise<{ db: Db; config: Config }>): Promise<number> {
  const [sub, ...rest] = args
  if (sub === undefined || sub === '--help' || sub === '-h' || rest.includes('--help')) {
    println(sub === undefined ? io.stderr : io.stdout, MONITORS_HELP)
    return sub === undefined ? 2 : 0
  }
  if (sub === 'add') return addMonitorCommand(rest, io, open)
  const { positionals } = parseArgs({ args: rest, options: {}, strict: true, allowPositionals: true })
  if (sub === 'list') {
    if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`)
    const { db, config } = await open()
    const now = io.now()
    const rows = (await listMonitors({ db, limit: 100_000 })).map((m) => {
      const v = currentVerdict(m, now, config.checkIntervalS * 1000)
      return [monitorOf(m)?.slug ?? m.domain, m.kind, m.target ?? '-', m.name, v.status]
    })
    println(io.stdout, table(['SLUG', 'KIND', 'TARGET', 'NAME', 'STATUS'], rows))
    return 0
  }
  if (sub === 'remove') {
    if (positionals.length !== 1) throw new UsageError('monitors remove needs one SLUG')
    const slug = positionals[0] as string
    const { db } = await open()
    if (!(await removeMonitor({ db, slug, now: io.now() }))) throw new CommandError(`no monitor ${slug}`)
    println(io.stdout, `removed monitor ${slug} (its history is kept)`)
    return 0
  }
  throw new UsageError(`unknown monitors command "${sub}"`)
}
