import { parseArgs } from 'node:util'
import type { Config } from '../../config/index.js'
import { channelRecord, createChannel, testChannel } from '../alerts/channels.js'
import { createSmtpSend } from '../alerts/smtp.js'
import { createLogger } from '../logger.js'
import { createResolver } from '../net/resolver.js'
import { CHANNEL_KINDS, channelNameSchema, type ChannelKind } from '../rules/alert-channels.js'
import { targetPolicy } from '../rules/target-policy.js'
import { userAgent } from '../rules/user-agent.js'
import { deleteChannel, findChannel, listChannels } from '../store/alert-config.js'
import type { Db } from '../store/db.js'
import { createPost } from '../webhooks/post.js'
import { SecretBox } from '../webhooks/secret-box.js'
import { CommandError, UsageError, println, table, type CliIo } from './io.js'

export const CHANNELS_HELP = `usage:
  site-status channels add NAME --kind KIND --config JSON [--report-to ID]
                                 an alert channel; KIND one of ${CHANNEL_KINDS.join(', ')};
                                 JSON its config (README, Alerts), e.g. '{"url": "https://hooks.slack.com/..."}';
                                 secrets are sealed and never shown again; prints the channel's id
  site-status channels test ID   send a test message now; prints what the receiver answered
  site-status channels list      every channel: id, name, kind, failing, last error
  site-status channels remove ID remove a channel (policies stop naming it)`

function idOf(arg: string | undefined, command: string): number {
  if (arg === undefined || !/^[1-9]\d{0,9}$/.test(arg)) throw new UsageError(`channels ${command} needs a channel ID (a whole number)`)
  return Number(arg)
}

function jsonOf(text: string): unknown {
  try {
    return JSON.parse(text) as unknown
  } catch {
    throw new UsageError('--config must be a JSON object')
  }
}

/** `site-status channels add|test|list|remove`: the channels API, for the operator, judged by the same rules. */
export async function channelsCommand(args: string[], io: CliIo, open: () => Promise<{ db: Db; config: Config }>): Promise<number> {
  const [sub, ...rest] = args
  if (sub === undefined || sub === '--help' || sub === '-h' || rest.includes('--help')) {
    println(sub === undefined ? io.stderr : io.stdout, CHANNELS_HELP)
    return sub === undefined ? 2 : 0
  }
  if (sub === 'add') {
    const { values, positionals } = parseArgs({
      args: rest,
      options: { kind: { type: 'string' }, config: { type: 'string' }, 'report-to': { type: 'string' } },
      strict: true,
      allowPositionals: true
    })
    if (positionals.length !== 1) throw new UsageError('channels add needs one NAME (quote it if it has spaces)')
    const name = channelNameSchema.validate(positionals[0])
    if (name.error) throw new UsageError(name.error.message)
    const kind = values.kind as ChannelKind | undefined
    if (kind === undefined || !CHANNEL_KINDS.includes(kind)) throw new UsageError(`--kind must be one of ${CHANNEL_KINDS.join(', ')}`)
    if (values.config === undefined) throw new UsageError('channels add needs --config JSON')
    const reportTo = values['report-to'] === undefined ? null : idOf(values['report-to'], 'add --report-to')
    const { db, config } = await open()
    const box = new SecretBox({ key: config.webhookKey, keyFile: config.webhookKeyFile })
    const lookup = createResolver({ servers: config.dnsServers, timeoutMs: 5000 })
    const made = await createChannel(
      { db, box, policy: targetPolicy(config), lookup, now: io.now() },
      { name: name.value, kind, config: jsonOf(values.config), report_to: reportTo }
    )
    if (!made.ok) {
      if (made.reason === 'invalid') throw new CommandError(made.error)
      throw new CommandError('--report-to must name an existing channel')
    }
    if (made.secret !== null) println(io.stderr, `signing secret (shown only now): ${made.secret}`)
    println(io.stdout, String(made.channel.id))
    return 0
  }
  if (sub === 'list') {
    if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}"`)
    const { db, config } = await open()
    const box = new SecretBox({ key: config.webhookKey, keyFile: config.webhookKeyFile })
    const rows = (await listChannels({ db })).map((c) => {
      const r = channelRecord(c, box) as { target: string | null }
      return [
        String(c.id),
        c.name,
        c.kind,
        r.target ?? '',
        c.failing_since === null ? 'no' : `since ${c.failing_since.toISOString()}`,
        c.last_error ?? ''
      ]
    })
    println(io.stdout, table(['ID', 'NAME', 'KIND', 'TARGET', 'FAILING', 'LAST ERROR'], rows))
    return 0
  }
  if (sub === 'remove') {
    if (rest.length !== 1) throw new UsageError('channels remove needs one channel ID')
    const id = idOf(rest[0], 'remove')
    const { db } = await open()
    if (!(await deleteChannel({ db, id, now: io.now() }))) throw new CommandError(`no channel ${id}`)
    println(io.stdout, `removed channel ${id}`)
    return 0
  }
  if (sub === 'test') {
    if (rest.length !== 1) throw new UsageError('channels test needs one channel ID')
    const id = idOf(rest[0], 'test')
    const { db, config } = await open()
    const channel = await findChannel({ db, id })
    if (channel === null) throw new CommandError(`no channel ${id}`)
    const policy = targetPolicy(config)
    const lookup = createResolver({ servers: config.dnsServers, timeoutMs: 5000 })
    const outbound = createPost({ policy, lookup, userAgent: userAgent(config.publicUrl) })
    try {
      const result = await testChannel(
        {
          db,
          box: new SecretBox({ key: config.webhookKey, keyFile: config.webhookKeyFile }),
          post: outbound.post,
          smtp: createSmtpSend({ policy, lookup }),
          logger: createLogger({ level: 'silent', stream: io.stderr }),
          now: io.now,
          random: Math.random,
          publicUrl: config.publicUrl
        },
        channel
      )
      const said = [result.http_code === null ? null : `HTTP ${result.http_code}`, result.answer].filter((s) => s !== null).join(': ')
      if (!result.delivered) throw new CommandError(`test not delivered: ${result.error ?? 'refused'}${said === '' ? '' : ` (${said})`}`)
      println(io.stdout, `delivered${said === '' ? '' : `: ${said}`}`)
      return 0
    } finally {
      await outbound.close()
    }
  }
  throw new UsageError(`unknown channels command "${sub}"`)
}
