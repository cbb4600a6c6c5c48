import { judgeAlertAnswer, type AlertVerdict } from '../rules/alert-delivery.js'
import type { Post } from '../webhooks/post.js'
import type { Outbound } from './kinds/index.js'
import type { SmtpSend, SmtpTarget } from './smtp.js'

/** What came of one attempt at a message. */
export interface SendResult {
  verdict: AlertVerdict
  /** The last HTTP status (null for e-mail or no answer). */
  status: number | null
  error: string | null
  /** What the receiver said, cleaned and short. */
  answer: string | null
  /** The service is stopping: not an attempt. */
  aborted?: boolean
}

/** Bytes of a receiver's answer kept. */
const ANSWER_BYTES = 300

/** An answer as one line of printable text. */
export function cleanAnswer(raw: string | undefined | null): string | null {
  if (raw === undefined || raw === null) return null
  const line = raw
    .replace(/[\p{Cc}\p{Cf}]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim()
  return line === '' ? null : line.slice(0, 200)
}

const RANK: Record<AlertVerdict, number> = { delivered: 0, retry: 1, refused: 2 }

/** Sends what a message became: every request in order (all must deliver, or any one for `any`), or the e-mail. */
export async function sendOutbound(
  out: Outbound,
  { post, smtp, smtpTarget, signal }: { post: Post; smtp: SmtpSend; smtpTarget?: SmtpTarget; signal?: AbortSignal }
): Promise<SendResult> {
  if ('email' in out) {
    if (smtpTarget === undefined) return { verdict: 'refused', status: null, error: 'config: no SMTP server', answer: null }
    const sent = await smtp(smtpTarget, out.email, signal)
    if (signal?.aborted === true) return { verdict: 'retry', status: null, error: 'aborted', answer: null, aborted: true }
    if (sent.ok) return { verdict: 'delivered', status: null, error: null, answer: cleanAnswer(sent.answer) }
    // A 5xx reply is the server refusing for good; a 4xx or no answer may pass later.
    const verdict = sent.code !== null && sent.code >= 500 ? 'refused' : 'retry'
    return { verdict, status: null, error: sent.error, answer: null }
  }
  const results: SendResult[] = []
  for (const req of out.http) {
    const answer = await post({ ...req, signal, keep: ANSWER_BYTES })
    if ('aborted' in answer) return { verdict: 'retry', status: null, error: answer.error, answer: null, aborted: true }
    const verdict = judgeAlertAnswer(answer.status)
    results.push({
      verdict,
      status: answer.status,
      error: answer.status === null ? answer.error : verdict === 'delivered' ? null : `http: ${answer.status}`,
      answer: answer.status === null ? null : cleanAnswer(answer.answer)
    })
    if (out.need === 'all' && verdict !== 'delivered') break
  }
  if (out.need === 'any') {
    const ok = results.find((r) => r.verdict === 'delivered')
    if (ok) return { ...ok, error: results.find((r) => r.verdict !== 'delivered')?.error ?? null }
  }
  const start: SendResult = { verdict: 'delivered', status: null, error: null, answer: null }
  return results.reduce((worst, r) => (RANK[r.verdict] >= RANK[worst.verdict] ? r : worst), start)
}
