import { ConfigError, loadConfig, type Config, type NatsConfig } from '../../config/index.js'
import { AGENT_LOCATION } from '../../config/locations.js'

/** What `site-status agent` reads from the environment (docs: interface, "Location agents"). */
export const AGENT_VARIABLES = [
  'NATS_URL',
  'NATS_CREDENTIALS',
  'DNS_SERVERS',
  'ALLOW_PRIVATE_TARGETS',
  'DENY_TARGETS',
  'CONNECT_TO',
  'PROBE_TIMEOUT_MS',
  'LOG_LEVEL',
  'LOG_FORMAT',
  'INSTANCE_ID'
] as const

/** An agent's whole configuration: the service's own settings of the variables it reads, and its location. */
export interface AgentConfig extends Pick<
  Config,
  | 'dnsServers'
  | 'allowPrivateTargets'
  | 'allowedTargetRanges'
  | 'deniedTargetRanges'
  | 'connectTo'
  | 'probeTimeoutMs'
  | 'logLevel'
  | 'logFormat'
  | 'instanceId'
> {
  /** The agent location it serves (`--location`), as LOCATIONS names it. */
  readonly location: string
  readonly nats: NatsConfig
}

/**
 * Reads the agent's variables with the service's own rules and messages (one line naming each bad
 * one); any other variable is not the agent's and is left alone.
 */
export function loadAgentConfig(env: NodeJS.ProcessEnv, location: string): AgentConfig {
  if (!AGENT_LOCATION.test(location)) {
    throw new ConfigError(`--location: "${location.slice(0, 40)}" must be 1 to 32 lower-case letters, digits or hyphens, such as fra1`)
  }
  const own = Object.fromEntries(AGENT_VARIABLES.filter((name) => env[name] !== undefined).map((name) => [name, env[name]]))
  const config = loadConfig(own)
  if (config.nats === null) throw new ConfigError('invalid configuration: NATS_URL: required by the agent')
  return Object.freeze({
    location,
    nats: config.nats,
    dnsServers: config.dnsServers,
    allowPrivateTargets: config.allowPrivateTargets,
    allowedTargetRanges: config.allowedTargetRanges,
    deniedTargetRanges: config.deniedTargetRanges,
    connectTo: config.connectTo,
    probeTimeoutMs: config.probeTimeoutMs,
    logLevel: config.logLevel,
    logFormat: config.logFormat,
    instanceId: config.instanceId
  })
}
