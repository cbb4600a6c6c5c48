import { randomUUID } from 'node:crypto'
import type { Msg, NatsConnection } from 'nats'
import type { Logger } from 'pino'
import { agentService } from '../../net/agent-protocol.js'

/** How often the agents are counted (a NATS services ping per location), and how long their answers are awaited. */
export const SURVEY_MS = 5000
const SURVEY_WAIT_MS = 1000
/** At most one warning this often about PING answers that were not understood. */
const BAD_PING_WARNING_MS = 60_000
/** The largest PING answer read; the services API's own is about 200 bytes. */
const MAX_PING_BYTES = 4096
const AGENT_ID = /^[A-Za-z0-9]{1,64}$/
const VERSION = /^[\x20-\x7e]{1,64}$/

interface Seen {
  /** Agent id -> its version, from the latest survey. */
  agents: Map<string, string>
  /** When one of them last answered a ping or a probe (ms since the epoch); null: never. */
  lastSeen: number | null
  /** The next agent to send to (round robin over `agents`). */
  next: number
  ids: string[]
}

/** One agent's PING answer as the services API sends it, checked for the name the ping was sent to. */
function readPing(data: Uint8Array, service: string): { id: string; version: string } | null {
  if (data.byteLength > MAX_PING_BYTES) return null
  let value: unknown
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(data))
  } catch {
    return null
  }
  if (typeof value !== 'object' || value === null) return null
  const { name, id, version } = value as Record<string, unknown>
  if (name !== service || typeof id !== 'string' || !AGENT_ID.test(id)) return null
  return { id, version: typeof version === 'string' && VERSION.test(version) ? version : 'unknown' }
}

/**
 * Counts each agent location's agents: a services PING to that location's own name
 * (`$SRV.PING.site-status-agent-fra1`), which deploy/nats.conf lets only fra1's user receive, so
 * the location an agent is counted for is the one its NATS user may serve, whatever the answer
 * claims. Each answer is read alone (a malformed one is skipped, not the round); a location nobody
 * answers for counts 0. The agents counted are those requests are sent to, in turn.
 */
export class AgentSurvey {
  readonly #inbox: string
  readonly #intervalMs: number
  readonly #logger: Logger
  readonly #seen = new Map<string, Seen>()
  /** The round in progress: its token and, per location, the agents that answered so far. */
  #round: { token: string; counted: Map<string, Map<string, string>> } | null = null
  #nc: NatsConnection | null = null
  #timer: NodeJS.Timeout | undefined
  #stopped = false
  #running = false
  #badPings = 0
  #badWarnedAt = -Infinity
  up = false

  constructor(opts: { inbox: string; intervalMs?: number; logger: Logger }) {
    this.#inbox = opts.inbox
    this.#intervalMs = opts.intervalMs ?? SURVEY_MS
    this.#logger = opts.logger
  }

  watch(agent: string): void {
    if (!this.#seen.has(agent)) this.#seen.set(agent, { agents: new Map(), lastSeen: null, next: 0, ids: [] })
  }

  start(nc: NatsConnection): void {
    this.#nc = nc
    this.up = true
    this.now()
  }

  /** Runs a round now (after a reconnect; unless one runs), then every interval. */
  now(): void {
    if (this.#stopped || this.#running) return
    clearTimeout(this.#timer)
    this.#running = true
    void this.#roundOnce().finally(() => {
      this.#running = false
      if (!this.#stopped)
        this.#timer = setTimeout(() => {
          this.now()
        }, this.#intervalMs).unref()
    })
  }

  async #roundOnce(): Promise<void> {
    const nc = this.#nc
    if (nc === null || !this.up) return
    const round = { token: `s${randomUUID()}`, counted: new Map<string, Map<string, string>>() }
    this.#round = round
    try {
      for (const agent of this.#seen.keys()) {
        round.counted.set(agent, new Map())
        nc.publish(`$SRV.PING.${agentService(agent)}`, '', { reply: `${this.#inbox}.${round.token}-${agent}` })
      }
    } catch {
      this.#round = null
      return
    }
    await new Promise((resolve) => setTimeout(resolve, SURVEY_WAIT_MS).unref())
    this.#round = null
    if (!this.#active()) return
    const now = Date.now()
    for (const [agent, agents] of round.counted) {
      const seen = this.#seen.get(agent)
      if (seen === undefined) continue
      seen.agents = agents
      seen.ids = [...agents.keys()]
      if (agents.size > 0) seen.lastSeen = now
    }
  }

  /** Whether rounds count: started, not stopped, and connected (the link says so). */
  #active(): boolean {
    return !this.#stopped && this.up
  }

  /** Takes a reply to the round's pings; false when `token` is not one (a probe's answer). */
  answer(token: string, msg: Msg): boolean {
    if (!token.startsWith('s')) return false
    const round = this.#round
    if (round === null || !token.startsWith(`${round.token}-`)) return true
    const agent = token.slice(round.token.length + 1)
    const counted = round.counted.get(agent)
    if (counted === undefined) return true
    const ping = readPing(msg.data, agentService(agent))
    if (ping === null) {
      this.#badPing(agent)
      return true
    }
    counted.set(ping.id, ping.version)
    return true
  }

  #badPing(agent: string): void {
    this.#badPings++
    const now = performance.now()
    if (now - this.#badWarnedAt < BAD_PING_WARNING_MS) return
    this.#badWarnedAt = now
    this.#logger.warn({ location: agent, refused: this.#badPings }, 'a PING answer of an agent was not understood; it is not counted')
    this.#badPings = 0
  }

  /** The next agent of `agent`'s location to send to, other than `avoid`; null when none is known. */
  pick(agent: string, avoid: string | null): string | null {
    const seen = this.#seen.get(agent)
    if (seen === undefined) return null
    const ids = avoid === null ? seen.ids : seen.ids.filter((id) => id !== avoid)
    if (ids.length === 0) return null
    seen.next = (seen.next + 1) % ids.length
    return ids[seen.next] ?? null
  }

  /** Agent `id` is gone: it is neither counted nor sent to until a round counts it again. */
  forget(agent: string, id: string): void {
    const seen = this.#seen.get(agent)
    if (seen === undefined || !seen.agents.delete(id)) return
    seen.ids = [...seen.agents.keys()]
  }

  /** An agent of the location answered a probe. */
  sighted(agent: string): void {
    const seen = this.#seen.get(agent)
    if (seen) seen.lastSeen = Date.now()
  }

  seen(agent: string, up: boolean): { agents: number; lastSeen: number | null; versions: string[] } {
    const seen = this.#seen.get(agent)
    const agents = up ? (seen?.agents ?? new Map<string, string>()) : new Map<string, string>()
    return { agents: agents.size, lastSeen: seen?.lastSeen ?? null, versions: [...new Set(agents.values())].sort() }
  }

  stop(): void {
    this.#stopped = true
    clearTimeout(this.#timer)
  }
}
