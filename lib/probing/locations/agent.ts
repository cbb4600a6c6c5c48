import { agentExpectations, type AgentProbeRequest } from '../../net/agent-protocol.js'
import { isPolicyRefusal } from '../../rules/target-policy.js'
import type { AgentLink, Answer } from './agent-link.js'
import { ANSWER_MARGIN_MS, notAnswered, type Location, type LocationAnswer, type LocationHealth, type ProbeRequest } from './location.js'

export { AgentLink, NATS_READY_MS } from './agent-link.js'
export { SURVEY_MS } from './agent-survey.js'

/**
 * What an agent's answer may take beyond a local actor's: the hop to the region and back. A later
 * answer is dropped and counted (`late`).
 */
export const AGENT_HOP_MARGIN_MS = 1500

const ERRORS: Readonly<Record<Extract<Answer, { ok: false }>['code'], string>> = {
  agent_none: 'agent: no agent serves this location',
  agent_no_answer: 'agent: no answer in time',
  agent_unreachable: 'agent: NATS cannot be reached',
  agent_rejected: 'agent: the request was refused as invalid',
  agent_busy: 'agent: at its capacity',
  agent_failed: 'agent: the agent failed to probe',
  agent_refused: "agent: the agent's target policy refused the target",
  agent_bad_answer: 'agent: answer not understood'
}

/** A location served by agents in its region: each probe is one NATS request to one of its agents. */
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
    this.#link.watch(opts.agent)
    this.#userAgent = opts.userAgent
    this.#limitMs = opts.timeoutMs + ANSWER_MARGIN_MS + AGENT_HOP_MARGIN_MS
  }

  ready(): Promise<void> {
    return Promise.resolve()
  }

  async probe({ domain, lane, cls, expect, check }: ProbeRequest): Promise<Omit<LocationAnswer, 'location'>> {
    const request: AgentProbeRequest = {
      v: 1,
      domain,
      ...(lane === undefined ? {} : { lane }),
      class: cls,
      user_agent: this.#userAgent,
      ...(expect === undefined ? {} : { expect: agentExpectations(expect) }),
      ...(check === undefined ? {} : { check })
    }
    const answer = await this.#link.request(this.#agent, request, this.#limitMs)
    if (!answer.ok) return notAnswered(answer.code, ERRORS[answer.code])
    // The agent's own policy refused the target: this location neither saw the site up nor down,
    // and the refusal is the region's, never the check's 400 (only the central's policy decides that).
    if (isPolicyRefusal(answer.result.code)) return notAnswered('agent_refused', ERRORS.agent_refused)
    return answer.result
  }

  missed(): void {}

  health(): LocationHealth {
    const { agents, lastSeen, versions, badAnswers } = this.#link.seen(this.#agent)
    return {
      label: this.label,
      kind: 'agent',
      agent: this.#agent,
      agents,
      last_seen: lastSeen === null ? null : new Date(lastSeen).toISOString(),
      versions,
      bad_answers: badAnswers
    }
  }

  close(): Promise<void> {
    return Promise.resolve()
  }
}
