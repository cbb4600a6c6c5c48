import { randomUUID } from 'node:crypto'
import type { Msg } from 'nats'
import { agentService } from '../../net/agent-protocol.js'

/**
 * How long a request may wait on one agent before that agent is asked whether it is still there,
 * and how long it has to answer (its event loop only answers: the probes run in threads). A probe
 * answered within it costs nothing more; a half-open agent's requests go elsewhere after about
 * twice it, leaving the retry most of its deadline.
 */
export const LIVENESS_MS = 500

interface Check {
  agent: string
  id: string
  token: string
  sentAt: number
}

/**
 * Whether the agents that hold overdue requests are still there: a services PING to that very
 * agent (`$SRV.PING.site-status-agent-fra1.<id>`). NATS answers "no responders" at once for an
 * agent whose connection it has dropped (killed, stopped); an agent that answers nothing within
 * {@link LIVENESS_MS} is gone without a word (its host lost, the connection half open, which NATS
 * notices only after its own pings). Either way `gone` is called, and the link sends what waited
 * on it to another agent of the location.
 */
export class AgentLiveness {
  readonly #publish: (subject: string, reply: string) => void
  readonly #gone: (agent: string, id: string) => void
  readonly #inbox: string
  /** Checks under way, by `agent id`, and their tokens. */
  readonly #checks = new Map<string, Check>()
  readonly #tokens = new Map<string, string>()

  constructor(opts: { inbox: string; publish: (subject: string, reply: string) => void; gone: (agent: string, id: string) => void }) {
    this.#inbox = opts.inbox
    this.#publish = opts.publish
    this.#gone = opts.gone
  }

  /**
   * Every half {@link LIVENESS_MS}: an agent whose check went unanswered that long is gone; each
   * agent holding a request older than that (and not yet sent again) is asked, once at a time.
   */
  tick(waiting: Iterable<{ agent: string; target: string | null; sentAt: number; retried: boolean }>, now: number): void {
    for (const [key, check] of this.#checks) {
      if (now - check.sentAt < LIVENESS_MS) continue
      this.#end(key)
      this.#gone(check.agent, check.id)
    }
    for (const p of waiting) {
      if (p.target === null || p.retried || now - p.sentAt < LIVENESS_MS) continue
      const key = `${p.agent} ${p.target}`
      if (this.#checks.has(key)) continue
      const token = `l${randomUUID()}`
      this.#checks.set(key, { agent: p.agent, id: p.target, token, sentAt: now })
      this.#tokens.set(token, key)
      this.#publish(`$SRV.PING.${agentService(p.agent)}.${p.target}`, `${this.#inbox}.${token}`)
    }
  }

  /** Takes the answer to a check; false when `token` is not one. */
  answer(token: string, msg: Msg): boolean {
    if (!token.startsWith('l')) return false
    const key = this.#tokens.get(token)
    if (key === undefined) return true
    const check = this.#checks.get(key)
    this.#end(key)
    // NATS itself answers 503 when nobody subscribes: it has dropped that agent's connection.
    if (check !== undefined && msg.headers?.hasError === true && msg.headers.code === 503) this.#gone(check.agent, check.id)
    return true
  }

  #end(key: string): void {
    const check = this.#checks.get(key)
    if (check === undefined) return
    this.#checks.delete(key)
    this.#tokens.delete(check.token)
  }
}
