import { createInbox, Events, RequestStrategy, ServiceErrorCodeHeader, type Msg, type NatsConnection, type Subscription } from 'nats'
import type { Logger } from 'pino'
import type { NatsConfig } from '../../../config/index.js'
import { AGENT_SERVICE, agentExpectations, probeSubject, type AgentProbeRequest } from '../../net/agent-protocol.js'
import { connectNats } from '../../net/nats.js'
import { isPolicyRefusal } from '../../rules/target-policy.js'
import type { ProbeResult } from '../../../workers/http-probe.js'
import {
  ANSWER_MARGIN_MS,
  notAnswered,
  type Location,
  type LocationAnswer,
  type LocationFailureCode,
  type LocationHealth,
  type ProbeRequest
} from './location.js'

/**
 * What an agent's answer may take beyond a local actor's: the hop to the region and back. A later
 * answer is dropped and counted (`late`).
 */
export const AGENT_HOP_MARGIN_MS = 1500

/** How often the agents are counted (a NATS services ping), and how long their answers are awaited. */
export const SURVEY_MS = 5000
const SURVEY_WAIT_MS = 1000

/** How long start-up waits for the first NATS connection before serving without it. */
export const NATS_READY_MS = 5000

const VERDICTS = new Set(['up', 'down', 'blocked', 'error'])

type Answer = { ok: true; result: ProbeResult } | { ok: false; code: LocationFailureCode; error: string }

interface Seen {
  /** Agent id -> its version, from the latest survey. */
  agents: Map<string, string>
  /** When one of them last answered a ping or a probe (ms since the epoch); null: never. */
  lastSeen: number | null
}

const ERRORS: Readonly<Record<Exclude<LocationFailureCode, `location_${string}`>, string>> = {
  agent_none: 'agent: no agent serves this location',
  agent_no_answer: 'agent: no answer in time',
  agent_unreachable: 'agent: NATS cannot be reached',
  agent_rejected: 'agent: the request was refused as invalid',
  agent_busy: 'agent: at its capacity',
  agent_refused: "agent: the agent's target policy refused the target",
  agent_bad_answer: 'agent: answer not understood'
}

const fail = (code: keyof typeof ERRORS): Answer => ({ ok: false, code, error: ERRORS[code] })

/** A probe result as an agent sent it, checked field by field: an agent is trusted with timings, not with what the store keeps. */
function readResult(value: unknown): ProbeResult | null {
  if (typeof value !== 'object' || value === null) return null
  const r = value as Record<string, unknown>
  const t = r.timings as Record<string, unknown> | null | undefined
  const num = (v: unknown, max: number): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= max
  const text = (v: unknown, max: number): v is string | null => v === null || (typeof v === 'string' && v.length <= max)
  const ok =
    typeof r.status === 'string' &&
    VERDICTS.has(r.status) &&
    Number.isInteger(r.http_code) &&
    num(r.http_code, 999) &&
    num(r.response_ms, 3_600_000) &&
    text(r.error, 1000) &&
    text(r.code, 64) &&
    text(r.final_url, 4096) &&
    (r.tls_expires_at === undefined || text(r.tls_expires_at, 64)) &&
    (r.tls_issuer === undefined || text(r.tls_issuer, 1000)) &&
    typeof t === 'object' &&
    t !== null &&
    ['dns', 'connect', 'tls', 'first_byte', 'total'].every((k) => num(t[k], 3_600_000))
  if (!ok) return null
  return {
    status: r.status as ProbeResult['status'],
    http_code: r.http_code as number,
    response_ms: r.response_ms as number,
    error: r.error as string | null,
    code: r.code as ProbeResult['code'],
    final_url: r.final_url as string | null,
    tls_expires_at: (r.tls_expires_at as string | null | undefined) ?? null,
    tls_issuer: (r.tls_issuer as string | null | undefined) ?? null,
    timings: {
      dns: t.dns as number,
      connect: t.connect as number,
      tls: t.tls as number,
      first_byte: t.first_byte as number,
      total: t.total as number
    }
  }
}

export interface AgentLinkOptions {
  nats: NatsConfig
  logger: Logger
  /** Names this instance's connection in the NATS server's list. */
  instanceId: string
  surveyMs?: number
}

/**
 * The central's one NATS connection to every agent location: probe requests answered on one inbox
 * subscription (a reply that comes after its request gave up is dropped and counted), and a
 * periodic services ping that counts each location's agents. It connects in the background and
 * keeps reconnecting: while NATS is away, the agent locations answer `agent_unreachable` at once.
 */
export class AgentLink {
  readonly #opts: AgentLinkOptions
  readonly #inbox = createInbox()
  readonly #pending = new Map<string, (answer: Answer) => void>()
  readonly #seen = new Map<string, Seen>()
  readonly #connected: Promise<NatsConnection | null>
  #nc: NatsConnection | null = null
  #sub: Subscription | null = null
  #up = false
  #seq = 0
  #closed = false
  #survey: NodeJS.Timeout | undefined
  /** Answers that came after their request had given up. */
  late = 0

  constructor(opts: AgentLinkOptions) {
    this.#opts = opts
    this.#connected = this.#connect()
  }

  async #connect(): Promise<NatsConnection | null> {
    const { logger } = this.#opts
    let nc: NatsConnection
    try {
      nc = await connectNats(this.#opts.nats, `site-status serve ${this.#opts.instanceId}`, { waitOnFirstConnect: true })
    } catch (err) {
      logger.error({ err: { message: (err as Error).message } }, 'NATS refused this instance; agent locations will not answer')
      return null
    }
    if (this.#closed) {
      await nc.close()
      return null
    }
    this.#nc = nc
    this.#up = true
    logger.info('connected to NATS')
    this.#sub = nc.subscribe(`${this.#inbox}.*`, {
      callback: (_err, msg) => {
        this.#reply(msg)
      }
    })
    void this.#watch(nc)
    const survey = (): void => {
      void this.#surveyOnce().finally(() => {
        if (!this.#closed) this.#survey = setTimeout(survey, this.#opts.surveyMs ?? SURVEY_MS).unref()
      })
    }
    survey()
    return nc
  }

  async #watch(nc: NatsConnection): Promise<void> {
    for await (const status of nc.status()) {
      if (status.type === Events.Disconnect) {
        this.#up = false
        this.#opts.logger.warn('NATS connection lost; reconnecting')
        // Replies to requests already sent can no longer come: they answer now, not at their deadline.
        for (const settle of [...this.#pending.values()]) settle(fail('agent_unreachable'))
      } else if (status.type === Events.Reconnect) {
        this.#up = true
        this.#opts.logger.info('NATS connection back')
        void this.#surveyOnce()
      } else if (status.type === Events.Error) {
        this.#opts.logger.error(
          { err: { message: typeof status.data === 'string' ? status.data : 'NATS error' } },
          'NATS reported an error'
        )
      }
    }
  }

  /** Resolves once connected to NATS, or after {@link NATS_READY_MS} without (the service serves anyway). */
  async ready(): Promise<void> {
    let timer: NodeJS.Timeout | undefined
    await Promise.race([
      this.#connected,
      new Promise((resolve) => {
        timer = setTimeout(resolve, NATS_READY_MS)
      })
    ])
    clearTimeout(timer)
    if (this.#nc === null) this.#opts.logger.warn('NATS not reached yet; agent locations answer once it is')
  }

  /** Asks `agent`'s location to probe; resolves with its answer or why there is none, by `timeoutMs` at the latest. */
  request(agent: string, request: AgentProbeRequest, timeoutMs: number): Promise<Answer> {
    const nc = this.#nc
    if (nc === null || !this.#up || this.#closed) return Promise.resolve(fail('agent_unreachable'))
    const id = (++this.#seq).toString(36)
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        settle(fail('agent_no_answer'))
      }, timeoutMs)
      const settle = (answer: Answer): void => {
        if (!this.#pending.delete(id)) return
        clearTimeout(timer)
        if (answer.ok) this.#sighted(agent)
        resolve(answer)
      }
      this.#pending.set(id, settle)
      try {
        nc.publish(probeSubject(agent), JSON.stringify(request), { reply: `${this.#inbox}.${id}` })
      } catch {
        settle(fail('agent_unreachable'))
      }
    })
  }

  #reply(msg: Msg): void {
    const id = msg.subject.slice(this.#inbox.length + 1)
    const settle = this.#pending.get(id)
    // NATS answers 503 at once when nobody subscribes to the subject: no agent serves the location.
    if (msg.headers?.hasError === true && msg.headers.code === 503) {
      settle?.(fail('agent_none'))
      return
    }
    if (settle === undefined) {
      this.late++
      return
    }
    const serviceError = msg.headers?.get(ServiceErrorCodeHeader) ?? ''
    if (serviceError !== '') {
      settle(fail(serviceError === '503' ? 'agent_busy' : 'agent_rejected'))
      return
    }
    let body: { result?: unknown }
    try {
      body = JSON.parse(new TextDecoder().decode(msg.data)) as typeof body
    } catch {
      settle(fail('agent_bad_answer'))
      return
    }
    const result = readResult(body.result)
    settle(result === null ? fail('agent_bad_answer') : { ok: true, result })
  }

  #sighted(agent: string): void {
    const seen = this.#seen.get(agent)
    if (seen) seen.lastSeen = Date.now()
    else this.#seen.set(agent, { agents: new Map(), lastSeen: Date.now() })
  }

  /** Counts the agents of every location: those that answer a services ping within a second. */
  async #surveyOnce(): Promise<void> {
    const nc = this.#nc
    if (nc === null || !this.#up || this.#closed) return
    const counted = new Map<string, Map<string, string>>()
    try {
      const client = nc.services.client({ strategy: RequestStrategy.Timer, maxWait: SURVEY_WAIT_MS })
      for await (const identity of await client.ping(AGENT_SERVICE)) {
        const location = identity.metadata?.location
        if (typeof location !== 'string') continue
        const agents = counted.get(location) ?? new Map<string, string>()
        agents.set(identity.id, identity.version)
        counted.set(location, agents)
      }
    } catch {
      return
    }
    const now = Date.now()
    for (const [location, seen] of this.#seen) if (!counted.has(location)) seen.agents = new Map()
    for (const [location, agents] of counted) {
      const seen = this.#seen.get(location)
      if (seen) Object.assign(seen, { agents, lastSeen: now })
      else this.#seen.set(location, { agents, lastSeen: now })
    }
  }

  /** What is known of `agent`'s location's agents. */
  seen(agent: string): { agents: number; lastSeen: number | null; versions: string[] } {
    const seen = this.#seen.get(agent)
    const agents = this.#up ? (seen?.agents ?? new Map<string, string>()) : new Map<string, string>()
    return { agents: agents.size, lastSeen: seen?.lastSeen ?? null, versions: [...new Set(agents.values())].sort() }
  }

  async close(): Promise<void> {
    this.#closed = true
    clearTimeout(this.#survey)
    for (const settle of [...this.#pending.values()]) settle(fail('agent_unreachable'))
    this.#sub?.unsubscribe()
    const nc = await this.#connected.catch(() => null)
    await nc?.close()
  }
}

/** A location served by agents in its region: each probe is one NATS request to its queue group. */
export class AgentLocation implements Location {
  readonly label: string
  readonly ownDeadline = true
  readonly #agent: string
  readonly #link: AgentLink
  readonly #userAgent: string
  readonly #limitMs: number

  constructor(opts: { label: string; agent: string; link: AgentLink; userAgent: string; timeoutMs: number }) {
    this.label = opts.label
    this.#agent = opts.agent
    this.#link = opts.link
    this.#userAgent = opts.userAgent
    this.#limitMs = opts.timeoutMs + ANSWER_MARGIN_MS + AGENT_HOP_MARGIN_MS
  }

  ready(): Promise<void> {
    return Promise.resolve()
  }

  async probe({ domain, lane, cls, expect }: ProbeRequest): Promise<Omit<LocationAnswer, 'location'>> {
    const answer = await this.#link.request(
      this.#agent,
      {
        v: 1,
        domain,
        ...(lane === undefined ? {} : { lane }),
        class: cls,
        user_agent: this.#userAgent,
        ...(expect === undefined ? {} : { expect: agentExpectations(expect) })
      },
      this.#limitMs
    )
    if (!answer.ok) return notAnswered(answer.code, answer.error)
    // The agent's own policy refused the target: this location neither saw the site up nor down.
    if (isPolicyRefusal(answer.result.code)) return notAnswered('agent_refused', ERRORS.agent_refused)
    return answer.result
  }

  missed(): void {}

  health(): LocationHealth {
    const { agents, lastSeen, versions } = this.#link.seen(this.#agent)
    return {
      label: this.label,
      kind: 'agent',
      agent: this.#agent,
      agents,
      last_seen: lastSeen === null ? null : new Date(lastSeen).toISOString(),
      versions
    }
  }

  close(): Promise<void> {
    return Promise.resolve()
  }
}
