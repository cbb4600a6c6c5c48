import { randomUUID } from 'node:crypto'
import { Events, ServiceErrorCodeHeader, type Msg, type NatsConnection, type Subscription } from 'nats'
import type { Logger } from 'pino'
import type { NatsConfig } from '../../../config/index.js'
import { agentSubject, CENTRAL_INBOX_PREFIX, probeSubject, type AgentProbeRequest } from '../../net/agent-protocol.js'
import { readProbeReply } from '../../net/agent-reply.js'
import { connectNats, endConnection, RECONNECT_WAIT_MS } from '../../net/nats.js'
import type { ProbeResult } from '../../rules/probe-result.js'
import { AgentLiveness, LIVENESS_MS } from './agent-liveness.js'
import { AgentSurvey } from './agent-survey.js'
import type { LocationFailureCode } from './location.js'

/** How long start-up waits for the first NATS connection before serving without it. */
export const NATS_READY_MS = 5000
/** How long one attempt to reach NATS may take (the TCP and TLS handshakes and NATS's greeting). */
const CONNECT_TIMEOUT_MS = 5000
/** At most one warning this often, per location, about its agents' answers refused as not understood. */
const BAD_ANSWER_WARNING_MS = 60_000

/** An agent's answer, or why there is none. */
export type Answer = { ok: true; result: ProbeResult } | { ok: false; code: Exclude<LocationFailureCode, `location_${string}`> }

export interface AgentLinkOptions {
  nats: NatsConfig
  logger: Logger
  /** Names this instance's connection in the NATS server's list. */
  instanceId: string
  /** How often the agents are counted; tests shorten it. */
  surveyMs?: number
}

/** A request waiting for its answer, under every reply token it was sent with. */
interface Pending {
  agent: string
  request: AgentProbeRequest
  payload: string
  sentAt: number
  /** The agent it was last sent to (its services id); null: the location's queue group picked one. */
  target: string | null
  tokens: string[]
  /** Sent again to another agent after the one it was on vanished (at most once). */
  retried: boolean
  settle(answer: Answer): void
}

/** What a location's agents sent that was refused, for the warning and the metric. */
interface Refusals {
  count: number
  unwarned: number
  warnedAt: number
}

/**
 * The central's one NATS connection to every agent location. Each instance reads its answers on an
 * inbox of its own under {@link CENTRAL_INBOX_PREFIX}, each request under an unguessable token, and
 * an answer counts only when it answers that very request (its location and domain) by the
 * protocol's one schema: anything else is `agent_bad_answer` for that location, counted and logged.
 * Requests go to an agent the last survey counted (round robin), or to the location's queue group
 * before any is known; a request whose agent has gone (killed, or its host lost) is sent once more
 * to another, within its deadline ({@link AgentLiveness}).
 * Connecting retries in the background; closing never waits on NATS for long (`endConnection`).
 */
export class AgentLink {
  readonly #opts: AgentLinkOptions
  readonly #inbox = `${CENTRAL_INBOX_PREFIX}.${randomUUID()}`
  readonly #pending = new Map<string, Pending>()
  readonly #refused = new Map<string, Refusals>()
  readonly #survey: AgentSurvey
  readonly #liveness: AgentLiveness
  readonly #connected: Promise<void>
  #livenessTimer: NodeJS.Timeout | undefined
  #nc: NatsConnection | null = null
  #sub: Subscription | null = null
  #up = false
  #closed = false
  #wake: (() => void) | null = null
  /** Answers that came after their request had given up. */
  late = 0

  constructor(opts: AgentLinkOptions) {
    this.#opts = opts
    this.#survey = new AgentSurvey({ inbox: this.#inbox, intervalMs: opts.surveyMs, logger: opts.logger })
    this.#liveness = new AgentLiveness({
      inbox: this.#inbox,
      publish: (subject, reply) => {
        this.#nc?.publish(subject, '', { reply })
      },
      gone: (agent, id) => {
        this.#gone(agent, id)
      }
    })
    this.#connected = this.#connect()
  }

  /** Locations whose agents are counted: each AgentLocation registers its own. */
  watch(agent: string): void {
    this.#survey.watch(agent)
  }

  /** Connects, trying again every {@link RECONNECT_WAIT_MS} while NATS cannot be reached, until connected or closed. */
  async #connect(): Promise<void> {
    const { logger } = this.#opts
    for (let attempt = 0; !this.#closed; attempt++) {
      let nc: NatsConnection
      try {
        nc = await connectNats(this.#opts.nats, `site-status serve ${this.#opts.instanceId}`, {
          inboxPrefix: CENTRAL_INBOX_PREFIX,
          timeout: CONNECT_TIMEOUT_MS
        })
      } catch (err) {
        const code = (err as { code?: unknown }).code
        if (code === 'AUTHORIZATION_VIOLATION' || code === 'BAD_AUTHENTICATION' || code === 'BAD_CREDS') {
          logger.error({ err: { code } }, 'NATS refused this instance; agent locations will not answer')
          return
        }
        if (attempt === 0) logger.warn({ err: { code } }, 'NATS cannot be reached; trying again until it can')
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, RECONNECT_WAIT_MS)
          this.#wake = () => {
            clearTimeout(timer)
            resolve()
          }
        })
        continue
      }
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- close() may run during the await
      if (this.#closed) {
        void nc.close().catch(() => {})
        return
      }
      this.#attach(nc)
      return
    }
  }

  #attach(nc: NatsConnection): void {
    this.#nc = nc
    this.#up = true
    this.#opts.logger.info('connected to NATS')
    this.#sub = nc.subscribe(`${this.#inbox}.*`, {
      callback: (_err, msg) => {
        // Nothing an agent sends may end this subscription: every location's answers come on it.
        try {
          this.#reply(msg)
        } catch (err) {
          this.#opts.logger.error({ err: { message: (err as Error).message } }, 'an answer from NATS could not be read')
        }
      }
    })
    void this.#watch(nc)
    this.#survey.start(nc)
    this.#livenessTimer = setInterval(() => {
      if (this.#up && this.#pending.size > 0) this.#liveness.tick(this.#pending.values(), performance.now())
    }, LIVENESS_MS / 2).unref()
  }

  async #watch(nc: NatsConnection): Promise<void> {
    for await (const status of nc.status()) {
      if (status.type === Events.Disconnect) {
        this.#up = false
        this.#survey.up = false
        this.#opts.logger.warn('NATS connection lost; reconnecting')
        // Replies to requests already sent can no longer come: they answer now, not at their deadline.
        for (const p of new Set(this.#pending.values())) p.settle({ ok: false, code: 'agent_unreachable' })
      } else if (status.type === Events.Reconnect) {
        this.#up = true
        this.#survey.up = true
        this.#opts.logger.info('NATS connection back')
        this.#survey.now()
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
    if (this.#nc === null && !this.#closed) this.#opts.logger.warn('NATS not reached yet; agent locations answer once it is')
  }

  /** Asks `agent`'s location to probe; resolves with its answer or why there is none, by `timeoutMs` at the latest. */
  request(agent: string, request: AgentProbeRequest, timeoutMs: number): Promise<Answer> {
    const nc = this.#nc
    if (nc === null || !this.#up || this.#closed) return Promise.resolve({ ok: false, code: 'agent_unreachable' })
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        pending.settle({ ok: false, code: 'agent_no_answer' })
      }, timeoutMs)
      const pending: Pending = {
        agent,
        request,
        payload: JSON.stringify(request),
        sentAt: performance.now(),
        target: null,
        tokens: [],
        retried: false,
        settle: (answer) => {
          if (pending.tokens.length === 0) return
          for (const token of pending.tokens) this.#pending.delete(token)
          pending.tokens = []
          clearTimeout(timer)
          if (answer.ok) this.#survey.sighted(agent)
          resolve(answer)
        }
      }
      this.#send(pending, this.#survey.pick(agent, null))
    })
  }

  /** Sends (or sends again) a request to one agent, or to the location's queue group, under a new token. */
  #send(p: Pending, target: string | null): void {
    const nc = this.#nc
    const token = randomUUID()
    p.tokens.push(token)
    p.target = target
    this.#pending.set(token, p)
    try {
      if (nc === null) throw new Error('not connected')
      nc.publish(target === null ? probeSubject(p.agent) : agentSubject(p.agent, target), p.payload, { reply: `${this.#inbox}.${token}` })
    } catch {
      p.settle({ ok: false, code: 'agent_unreachable' })
    }
  }

  /**
   * Agent `id` of `agent`'s location is gone (see {@link AgentLiveness}): nothing more is sent to it
   * until a survey counts it again, and what waited on it goes once to another of the location's
   * agents, or to its queue group when the survey knows no other.
   */
  #gone(agent: string, id: string): void {
    this.#survey.forget(agent, id)
    for (const p of new Set(this.#pending.values())) {
      if (p.agent !== agent || p.retried || p.target !== id) continue
      p.retried = true
      this.#send(p, this.#survey.pick(agent, id))
    }
  }

  #reply(msg: Msg): void {
    const token = msg.subject.slice(this.#inbox.length + 1)
    if (this.#survey.answer(token, msg) || this.#liveness.answer(token, msg)) return
    const p = this.#pending.get(token)
    // NATS answers 503 at once when nobody subscribes to the subject: the agent chosen has gone
    // (it is tried through the queue group), or no agent serves the location at all.
    if (msg.headers?.hasError === true && msg.headers.code === 503) {
      if (p === undefined) return
      if (p.target === null) p.settle({ ok: false, code: 'agent_none' })
      else this.#send(p, null)
      return
    }
    if (p === undefined) {
      this.late++
      return
    }
    const serviceError = msg.headers?.get(ServiceErrorCodeHeader) ?? ''
    if (serviceError === '503') {
      // That agent is full or stopping: once, another of the location's.
      const other = p.target === null || p.retried ? null : this.#survey.pick(p.agent, p.target)
      if (other === null) p.settle({ ok: false, code: 'agent_busy' })
      else {
        p.retried = true
        this.#send(p, other)
      }
      return
    }
    if (serviceError !== '') {
      p.settle({ ok: false, code: serviceError === '500' ? 'agent_failed' : 'agent_rejected' })
      return
    }
    const reading = readProbeReply(msg.data, {
      location: p.agent,
      request: p.request,
      elapsedMs: performance.now() - p.sentAt,
      now: Date.now()
    })
    if (reading.ok) {
      p.settle({ ok: true, result: reading.result })
      return
    }
    this.#badAnswer(p, reading.reason)
    p.settle({ ok: false, code: 'agent_bad_answer' })
  }

  /** Counts an answer refused as not understood; says so at most once a minute per location. */
  #badAnswer(p: Pending, reason: string): void {
    const refusals = this.#refused.get(p.agent) ?? { count: 0, unwarned: 0, warnedAt: -Infinity }
    this.#refused.set(p.agent, refusals)
    refusals.count++
    refusals.unwarned++
    const now = performance.now()
    if (now - refusals.warnedAt < BAD_ANSWER_WARNING_MS) return
    this.#opts.logger.warn(
      { location: p.agent, agentId: p.target ?? 'queue group', reason, refused: refusals.unwarned },
      "an agent's answer was refused as not understood; the location counts as not answering"
    )
    refusals.warnedAt = now
    refusals.unwarned = 0
  }

  /** What is known of `agent`'s location's agents, and how many of their answers were refused. */
  seen(agent: string): { agents: number; lastSeen: number | null; versions: string[]; badAnswers: number } {
    return { ...this.#survey.seen(agent, this.#up), badAnswers: this.#refused.get(agent)?.count ?? 0 }
  }

  /** Ends every request, stops counting, and closes the connection, within a bound whatever NATS does. */
  async close(): Promise<void> {
    this.#closed = true
    this.#wake?.()
    this.#survey.stop()
    clearInterval(this.#livenessTimer)
    for (const p of new Set(this.#pending.values())) p.settle({ ok: false, code: 'agent_unreachable' })
    const nc = this.#nc
    if (nc === null) return
    this.#sub?.unsubscribe()
    await endConnection(nc)
  }
}
