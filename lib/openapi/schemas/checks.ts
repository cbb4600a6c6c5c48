import { ms, nullable, ref, siteStatus, timestamp, type Json } from '../parts.js'

/** On-demand checks: the request, and the result with each location's part and timings. */
export const checkSchemas: Json = {
  CheckRequest: {
    type: 'object',
    required: ['domain'],
    properties: {
      domain: { type: 'string', description: 'A hostname, or an http(s) URL reduced to its host.', examples: ['example.com'] }
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
          'up: answered below 500; down: no answer or 5xx; blocked: refused the automated check; error: the location itself failed.'
      },
      http_code: { type: 'integer', minimum: 0, maximum: 599, description: 'Last HTTP status seen; 0 when there was no HTTP response.' },
      response_ms: ms,
      error: { ...nullable({ type: 'string' }), description: 'null when up, otherwise a short stable text such as "dns: NXDOMAIN".' },
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
      status: siteStatus,
      locations_answered: { type: 'integer', minimum: 0 },
      locations_total: { type: 'integer', minimum: 1 },
      response_ms: { ...nullable(ms), description: 'Median of the answering locations; null when none answered.' },
      cached: { type: 'boolean', description: 'True when a result from the last CACHE_TTL_S seconds was reused.' },
      locations: { type: 'array', items: ref('schemas', 'LocationResult') },
      checked_at: timestamp,
      partial: { type: 'boolean' },
      blocked: { type: 'boolean' }
    },
    additionalProperties: false
  }
}
