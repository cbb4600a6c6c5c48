import { parseArgs } from 'node:util'
import { loadAgentConfig } from '../agent/config.js'
import { chooseLogFormat, createLogger } from '../logger.js'
import { stopOnSignals } from '../stop-on-signals.js'
import { CommandError, UsageError, println, type CliIo } from './io.js'

export const AGENT_HELP = `usage: site-status agent --location ID
  Serves agent location ID's probes over NATS (LOCATIONS names it: {"label": "...", "agent": "ID"}).
  Reads NATS_URL, NATS_CREDENTIALS, DNS_SERVERS, ALLOW_PRIVATE_TARGETS, DENY_TARGETS, CONNECT_TO,
  PROBE_TIMEOUT_MS, LOG_LEVEL, LOG_FORMAT and INSTANCE_ID; opens no port; stops cleanly on SIGTERM.`

/** What NATS said when it would not take the agent, as one line an operator can act on (never the URL). */
function natsFailure(err: unknown): CommandError {
  const code = (err as { code?: unknown }).code
  if (code === 'AUTHORIZATION_VIOLATION' || code === 'BAD_AUTHENTICATION' || code === 'BAD_CREDS') {
    return new CommandError('NATS refused the agent: check NATS_URL or NATS_CREDENTIALS')
  }
  if (code === 'CONNECTION_REFUSED' || code === 'TIMEOUT') return new CommandError('cannot reach NATS at NATS_URL')
  if (code === 'PERMISSIONS_VIOLATION') return new CommandError((err as Error).message)
  return new CommandError(`NATS: ${typeof code === 'string' ? code : 'connection failed'}`)
}

export async function agentCommand(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({ args, options: { location: { type: 'string' }, help: { type: 'boolean' } }, strict: true })
  if (values.help === true) {
    println(io.stdout, AGENT_HELP)
    return 0
  }
  if (values.location === undefined) throw new UsageError('agent needs --location ID')
  const config = loadAgentConfig(io.env, values.location)
  const format = chooseLogFormat(config.logFormat, io.stdout.isTTY === true)
  const logger = createLogger({ level: config.logLevel, stream: io.stdout, format }).child({
    instance: config.instanceId,
    agent: config.location
  })
  const { startAgent } = await import('../agent/agent.js')
  const agent = await startAgent({ config, logger }).catch((err: unknown) => {
    throw (err as { code?: unknown }).code === undefined ? err : natsFailure(err)
  })
  stopOnSignals(agent, logger)
  // Serving until a signal stops it (stopOnSignals exits), or until NATS takes a subscription away.
  const reason = await agent.failed
  logger.error({ reason }, 'agent stopped serving')
  await agent.stop()
  throw new CommandError(reason)
}
