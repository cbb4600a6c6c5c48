#!/usr/bin/env node
import { realpathSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { ConfigError, loadConfig, type Config } from '../../config/index.js'
import { isDatabaseUnavailable, safeErrorSummary } from '../errors.js'
import { chooseLogFormat, createLogger } from '../logger.js'
import { openDb, type Db } from '../store/db.js'
import { InstanceLockedError } from '../store/instance-lock.js'
import { migrateLatest } from '../store/migrate.js'
import { CommandError, UsageError, println, type CliIo } from './io.js'
import { AGENT_HELP, agentCommand } from './agent.js'
import { KEYS_HELP, keysCommand } from './keys.js'
import { SITES_HELP, sitesCommand } from './sites.js'
import { PAGES_HELP, pagesCommand } from './pages.js'
import { CHANNELS_HELP, channelsCommand } from './channels.js'
import { ALERTS_HELP, alertsCommand } from './alerts.js'
import { HEARTBEATS_HELP, heartbeatsCommand } from './heartbeats.js'
import { MONITORS_HELP, monitorsCommand } from './monitors.js'
import { CONFIG_HELP, configCommand } from './config-file.js'

const HELP = `site-status: run and operate the Site Status API

usage: site-status COMMAND [...]

commands:
  serve      run the server (what npm start runs); applies pending migrations first
  agent      serve one agent location's probes over NATS (site-status agent --help)
  migrate    bring the database schema up to date
  keys       create, list and revoke API keys (site-status keys --help)
  sites      add, remove, list and import tracked sites, and their maintenance windows
             (site-status sites --help)
  pages      create, change, list and remove public status pages (site-status pages --help)
  channels   add, test, list and remove alert channels (site-status channels --help)
  alerts     alert policies, and which a site or a page uses (site-status alerts --help)
  heartbeats add, list, change, pause and remove heartbeats (site-status heartbeats --help)
  monitors   add, list and remove tcp, tls and dns monitors (site-status monitors --help)
  plan       what applying a configuration file would change (site-status plan --help)
  apply      apply a configuration file in one transaction
  export     today's monitoring (sites, pages, heartbeats, webhooks, alerting) as a configuration file

Configuration comes from the environment (PORT, HOST, DATABASE_URL, ...): see the README.

${KEYS_HELP}

${SITES_HELP}

${PAGES_HELP}

${CHANNELS_HELP}

${ALERTS_HELP}

${HEARTBEATS_HELP}

${MONITORS_HELP}

${CONFIG_HELP}

${AGENT_HELP}`

/** A database command opens the database once, bringing its schema up to date first. */
function opener(io: CliIo): { open: () => Promise<{ db: Db; config: Config }>; close: () => Promise<void> } {
  let opened: { db: Db; config: Config } | undefined
  return {
    open: async () => {
      if (!opened) {
        const config = loadConfig(io.env)
        const db = openDb(config.databaseUrl)
        opened = { db, config }
        await migrateLatest(db)
      }
      return opened
    },
    close: async () => {
      await opened?.db.destroy()
    }
  }
}

async function migrateCommand(args: string[], io: CliIo): Promise<number> {
  if (args.includes('--help')) {
    println(io.stdout, 'usage: site-status migrate   apply pending database migrations')
    return 0
  }
  if (args.length > 0) throw new UsageError(`unexpected argument "${args[0]}"`)
  const config = loadConfig(io.env)
  const db = openDb(config.databaseUrl)
  try {
    const applied = await migrateLatest(db)
    println(io.stdout, applied.length === 0 ? 'database schema is up to date' : applied.map((n) => `applied ${n}`).join('\n'))
    return 0
  } finally {
    await db.destroy()
  }
}

async function serveCommand(args: string[], io: CliIo): Promise<number> {
  if (args.includes('--help')) {
    println(io.stdout, 'usage: site-status serve   run the server; stops cleanly on SIGTERM or SIGINT')
    return 0
  }
  if (args.length > 0) throw new UsageError(`unexpected argument "${args[0]}"`)
  const config = loadConfig(io.env)
  const format = chooseLogFormat(config.logFormat, io.stdout.isTTY === true)
  // Every line names the instance (INSTANCE_ID), so that the logs of several can be told apart.
  const logger = createLogger({ level: config.logLevel, stream: io.stdout, format }).child({ instance: config.instanceId })
  // The server, probing and monitoring load only here: keys and sites commands start in a fraction of the time.
  const { startService, stopOnSignals } = await import('../main.js')
  const service = await startService({ config, logger })
  stopOnSignals(service, logger)
  return new Promise<number>(() => {})
}

/** Runs one command; returns its exit code. Errors an operator can act on become one clear line. */
export async function run(argv: string[], io: CliIo): Promise<number> {
  const [command, ...args] = argv
  const db = opener(io)
  try {
    switch (command) {
      case 'serve':
        return await serveCommand(args, io)
      case 'agent':
        return await agentCommand(args, io)
      case 'migrate':
        return await migrateCommand(args, io)
      case 'keys':
        return await keysCommand(args, io, db.open)
      case 'sites':
        return await sitesCommand(args, io, db.open)
      case 'pages':
        return await pagesCommand(args, io, db.open)
      case 'channels':
        return await channelsCommand(args, io, db.open)
      case 'alerts':
        return await alertsCommand(args, io, db.open)
      case 'heartbeats':
        return await heartbeatsCommand(args, io, db.open)
      case 'monitors':
        return await monitorsCommand(args, io, db.open)
      case 'plan':
      case 'apply':
      case 'export':
        return await configCommand(command, args, io, db.open)
      case undefined:
      case '--help':
      case '-h':
      case 'help':
        println(command === undefined ? io.stderr : io.stdout, HELP)
        return command === undefined ? 2 : 0
      default:
        throw new UsageError(`unknown command "${command}"`)
    }
  } catch (err) {
    return reportFailure(err, io)
  } finally {
    await db.close()
  }
}

function reportFailure(err: unknown, io: CliIo): number {
  if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    // node:util parseArgs spreads some messages over several lines; an operator gets one.
    const message = (err as Error).message.replace(/\s*\n\s*/g, ' ')
    println(io.stderr, `site-status: ${message} (see site-status --help)`)
    return 2
  }
  if (err instanceof ConfigError || err instanceof CommandError || err instanceof InstanceLockedError) {
    println(io.stderr, `site-status: ${err.message}`)
    return 1
  }
  const summary = safeErrorSummary(err)
  const what = isDatabaseUnavailable(err) ? 'cannot reach the database' : 'failed'
  println(io.stderr, `site-status: ${what}: ${String(summary.message ?? summary.code ?? summary.type)}`)
  return 1
}

const invokedDirectly = process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)
if (invokedDirectly) {
  // `site-status sites list | head -1` closes the pipe before everything is written: the command
  // still finishes its work and exits with its own code instead of crashing with a stack trace.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') throw err
    })
  }
  const code = await run(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env, now: () => new Date() })
  process.exitCode = code
}
