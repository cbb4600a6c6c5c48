import { classify, deadlineError, laterStage, refused, tooManyRedirects, type Failure } from './probe-errors.js'
import { beforeDeadline, hop, portOf, type HopAnswer, type Run } from './probe-hop.js'

/** The final answer of a chain: the response that was not a redirect to follow. */
export interface Answer {
  kind: 'answer'
  status: number
  headers: HopAnswer['headers']
  body: Buffer
}
export type Outcome = Failure | Answer

/** The ports a redirect may lead to: those of the URLs a probe starts with. */
const WEB_PORTS: ReadonlySet<number> = new Set([80, 443])

/** Follows one scheme's redirect chain; a Failure with `fallback` means no HTTP response at all. */
export async function chain(run: Run, start: string): Promise<Outcome> {
  const { opts } = run
  const maxRedirects = opts.maxRedirects ?? 5
  let url = new URL(start)
  for (let redirects = 0; ; redirects++) {
    let answer: HopAnswer
    try {
      if (run.expired) throw deadlineError(opts.timeoutMs)
      if (opts.checkTarget !== undefined) {
        const refusal = await beforeDeadline(run, opts.checkTarget(url.hostname, portOf(url)))
        if (refusal !== null) return refused(refusal)
      }
      run.lastUrl = url.href
      answer = await hop(run, url)
    } catch (err) {
      const f = classify(err, opts.timeoutMs, run.viaProxy, run.expired)
      // Past a redirect the site has answered: whatever failed next says more than a failed dial.
      return redirects === 0 ? f : { ...f, fallback: false, stage: laterStage(f.stage, 'response') ? f.stage : 'response' }
    }
    run.lastStatus = answer.status
    if (answer.next === null) return { kind: 'answer', status: answer.status, headers: answer.headers, body: answer.body }
    if (redirects >= maxRedirects) return tooManyRedirects()
    // A redirect may lead to another host, but not to another service on it: ports 80 and 443 only
    // (which are also the ports a probe starts on), whatever ALLOW_PRIVATE_TARGETS says.
    if (!WEB_PORTS.has(portOf(answer.next))) return refused('policy_port')
    // As browsers do: a 303, and a 301 or 302 after a POST, go on as a GET without the body.
    if (answer.status === 303 ? run.method !== 'HEAD' : (answer.status === 301 || answer.status === 302) && run.method === 'POST') {
      run.method = 'GET'
      run.body = null
    }
    url = answer.next
  }
}
