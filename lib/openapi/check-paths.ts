import { json, ok, scope, scopedErrors } from './operations.js'
import { ref, type Json } from './parts.js'
import { budgetHeaders } from './components.js'

/** The on-demand checks: one domain, or a batch whose answer may stream. */
export const checkPaths: Json = {
  '/api/v1/check': {
    post: {
      operationId: 'checkDomain',
      tags: ['api'],
      summary: 'Check a domain now from every location (costs 5)',
      security: scope('check'),
      description:
        'Works for any public domain, tracked or not. A result younger than CACHE_TTL_S seconds is reused (`cached: true`) and costs the same; concurrent checks of one domain share one probe run. Domains resolving to non-public addresses are refused with 400. A check that would start a new probe run while the instance has MAX_CHECKS_IN_FLIGHT checks running, or while this key holds its share of them (MAX_KEY_SHARE), is refused at once with 503 and Retry-After, and costs nothing.',
      requestBody: { required: true, content: json(ref('schemas', 'CheckRequest')) },
      responses: {
        200: ok("Each location's result and the verdict.", ref('schemas', 'CheckResult')),
        ...scopedErrors('BadRequest', 'PayloadTooLarge', 'UnsupportedMediaType'),
        503: ref('responses', 'OverCapacity')
      }
    }
  },
  '/api/v1/checks': {
    post: {
      operationId: 'checkDomains',
      tags: ['api'],
      summary: 'Check up to 100 domains now from every location (costs 5 per distinct domain)',
      security: scope('check'),
      description:
        "Each domain is checked as `POST /api/v1/check` checks it, sharing its reuse and single flight. The batch is charged whole, up front, 5 units per distinct valid domain; a domain refused by the target policy is an error line and its units are refunded. A batch never fails whole for one domain. Its domains wait for this key's share of the checks in flight (MAX_KEY_SHARE) instead of being refused; other keys keep theirs. With `Accept: application/x-ndjson` the answer streams one JSON line per domain as each completes, then a summary line; a client that goes away stops the probing only it was waiting for. Otherwise one JSON object once all are done.",
      requestBody: { required: true, content: json(ref('schemas', 'BatchCheckRequest')) },
      responses: {
        200: {
          description: 'Every domain answered: one line each as it completes and a summary last (NDJSON), or all at once (JSON).',
          headers: budgetHeaders(true),
          content: {
            'application/json': { schema: ref('schemas', 'BatchCheckResults') },
            'application/x-ndjson': { schema: ref('schemas', 'BatchCheckLine') }
          }
        },
        ...scopedErrors('BadRequest', 'UnsupportedMediaType'),
        413: ref('responses', 'BatchPayloadTooLarge'),
        429: ref('responses', 'BatchOverBudget')
      }
    }
  }
}
