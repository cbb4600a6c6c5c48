import { checkStatus, ms, nullable, ref, timestamp, type Json } from '../parts.js'

/** On-demand checks: the request, and the result with each location's part and timings. */
export const checkSchemas: Json = {
  CheckRequest: {
    type: 'object',
    required: ['domain'],
    properties: {
      domain: {
        type: 'string',
        description: 'A hostname, or an http(s) URL without a path, reduced to its host.',
        examples: ['example.com']
      },
      expect: ref('schemas', 'CheckExpectations'),
      check: ref('schemas', 'Check')
    },
    additionalProperties: false
  },
  CheckExpectations: {
    type: 'object',
    description:
      "What this check expects of each location's final answer, as a site's `expect` setting: a location whose answer fails reports `down` (`unexpected_status`, `body_mismatch`) and the quorum counts it. A result judged by expectations is reused only by checks with the same ones; one judged by expectations other than a tracked site's own is never recorded. Without `expect`, a tracked site is judged by its own settings. A key set to null is as if absent.",
    properties: {
      status: {
        ...nullable({
          type: 'array',
          minItems: 1,
          maxItems: 50,
          items: {
            oneOf: [
              { type: 'integer', minimum: 100, maximum: 599 },
              { type: 'string', pattern: '^[1-5][0-9][0-9]-[1-5][0-9][0-9]$' }
            ]
          }
        }),
        description:
          'Status codes and inclusive ranges the final answer (after redirects) may have; set, it decides instead of the default rule (below 500 up, 403/429 and challenge pages blocked).',
        examples: [[200, '300-399'], [401]]
      },
      body_contains: {
        ...nullable({ type: 'string', minLength: 1 }),
        description: 'A literal, case-sensitive text (at most 256 bytes in UTF-8) the first 64 KiB of the final body must hold.'
      },
      max_response_ms: {
        ...nullable({ type: 'integer', minimum: 1, maximum: 120000 }),
        description: 'The result says `slow: true` when it is up and its response_ms is over this.'
      }
    },
    additionalProperties: false
  },
  Timings: {
    type: 'object',
    description: 'Milliseconds per phase, summed over every redirect hop.',
    required: ['dns', 'connect', 'tls', 'first_byte', 'total'],
    properties: { dns: ms, connect: ms, tls: ms, first_byte: ms, total: ms },
    additionalProperties: false
  },
  LocationResult: {
    type: 'object',
    required: ['location', 'status', 'http_code', 'response_ms', 'error', 'final_url', 'timings'],
    properties: {
      location: { type: 'string', examples: ['Frankfurt 1, Germany'] },
      status: {
        type: 'string',
        enum: ['up', 'down', 'blocked', 'error'],
        description:
          "up: answered below 500 (or as the check's expectations ask); down: no answer, 5xx, or an answer that fails the check's expectations; blocked: refused the automated check; error: the location itself failed."
      },
      http_code: { type: 'integer', minimum: 0, maximum: 599, description: 'Last HTTP status seen; 0 when there was no HTTP response.' },
      response_ms: ms,
      error: { ...nullable({ type: 'string' }), description: 'null when up, otherwise a short stable text such as "dns: NXDOMAIN".' },
      code: { ...nullable(ref('schemas', 'LocationCode')), description: 'The error for code to branch on; null when up.' },
      answers: { type: 'array', maxItems: 50, items: { type: 'string' }, description: "A `dns` check's records, in dig's data form." },
      assertion: {
        type: 'integer',
        minimum: 0,
        description: 'With `assertion_failed`: the place (from 0) of the first assertion that failed.'
      },
      final_url: nullable({ type: 'string', format: 'uri' }),
      timings: ref('schemas', 'Timings'),
      tls_expires_at: {
        ...nullable(timestamp),
        description:
          "`notAfter` of the leaf certificate presented in the final hop's TLS handshake (a fresh connection, never a pooled one); null when the final hop was plain http or no handshake completed."
      },
      tls_issuer: {
        ...nullable({ type: 'string' }),
        description: "That certificate's issuer, most specific first (`CN=R11, O=Let's Encrypt, C=US`)."
      }
    },
    additionalProperties: false
  },
  CheckResult: {
    type: 'object',
    required: [
      'domain',
      'status',
      'locations_answered',
      'locations_total',
      'response_ms',
      'cached',
      'locations',
      'checked_at',
      'partial',
      'blocked'
    ],
    properties: {
      domain: { type: 'string', description: 'The normalised domain (lower case, punycode).' },
      status: checkStatus,
      locations_answered: { type: 'integer', minimum: 0 },
      locations_total: { type: 'integer', minimum: 1 },
      response_ms: { ...nullable(ms), description: 'Median of the answering locations; null when none answered.' },
      cached: { type: 'boolean', description: 'True when a result from the last CACHE_TTL_S seconds was reused.' },
      locations: { type: 'array', items: ref('schemas', 'LocationResult') },
      checked_at: timestamp,
      partial: { type: 'boolean' },
      blocked: { type: 'boolean' },
      slow: {
        type: 'boolean',
        description: 'Only when the check gave `expect.max_response_ms`: up, with response_ms over it.'
      },
      check: {
        ...ref('schemas', 'Check'),
        description: 'The check each location ran (secret header values masked); absent for the web check.'
      }
    },
    additionalProperties: false
  },
  BatchCheckRequest: {
    type: 'object',
    required: ['domains'],
    properties: {
      domains: {
        type: 'array',
        minItems: 1,
        maxItems: 100,
        items: {
          oneOf: [
            { type: 'string', maxLength: 2048 },
            {
              type: 'object',
              required: ['domain'],
              properties: { domain: { type: 'string', maxLength: 2048 }, check: ref('schemas', 'Check') },
              additionalProperties: false
            }
          ]
        },
        description:
          'Hostnames or http(s) URLs as for a single check, or `{"domain", "check"}` objects; an entry without a check takes the batch\'s `check`. A domain with the same check twice is checked once.',
        examples: [['example.com', 'example.org']]
      },
      expect: ref('schemas', 'CheckExpectations'),
      check: ref('schemas', 'Check')
    },
    additionalProperties: false
  },
  BatchCheckError: {
    type: 'object',
    description: "One domain of a batch that was not checked; the batch's other domains are unaffected.",
    required: ['domain', 'error', 'code'],
    properties: {
      domain: { type: 'string', description: 'The normalised domain, or the entry as sent when it is not a valid domain.' },
      error: { type: 'string' },
      code: {
        type: 'string',
        enum: ['invalid_domain', 'non_public_target', 'check_failed'],
        description:
          'invalid_domain: not a hostname or URL (never charged); non_public_target: refused by the target policy (its 5 units refunded); check_failed: the service failed to check it (refunded).'
      }
    },
    additionalProperties: false
  },
  BatchCheckSummary: {
    type: 'object',
    required: ['domains', 'checked', 'cached', 'errors'],
    properties: {
      domains: { type: 'integer', minimum: 0, description: 'Distinct entries after normalisation: one line each.' },
      checked: { type: 'integer', minimum: 0, description: 'Check results, reused ones included.' },
      cached: { type: 'integer', minimum: 0, description: 'Of those, results reused from the last CACHE_TTL_S seconds.' },
      errors: { type: 'integer', minimum: 0, description: 'Error lines.' }
    },
    additionalProperties: false
  },
  BatchCheckLine: {
    description: 'One line of the NDJSON stream: a check result, an error for one domain, or the last line, the summary.',
    oneOf: [
      ref('schemas', 'CheckResult'),
      ref('schemas', 'BatchCheckError'),
      {
        type: 'object',
        required: ['summary'],
        properties: { summary: ref('schemas', 'BatchCheckSummary') },
        additionalProperties: false
      }
    ]
  },
  BatchCheckResults: {
    type: 'object',
    required: ['results', 'summary'],
    properties: {
      results: {
        type: 'array',
        description: 'In the order the domains completed.',
        items: { oneOf: [ref('schemas', 'CheckResult'), ref('schemas', 'BatchCheckError')] }
      },
      summary: ref('schemas', 'BatchCheckSummary')
    },
    additionalProperties: false
  },
  BatchOverBudget: {
    type: 'object',
    required: ['error', 'fits'],
    properties: {
      error: { type: 'string' },
      fits: { type: 'integer', minimum: 0, description: "How many of the batch's domains the key's budget would cover now." }
    },
    additionalProperties: false
  }
}
