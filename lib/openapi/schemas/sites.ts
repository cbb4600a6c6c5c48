import { ms, nullable, percent, ref, siteStatus, timestamp, type Json } from '../parts.js'

/** Tracked sites: their status records, outages, SLA reports, and the lists that page them. */
export const siteSchemas: Json = {
  LastOutage: {
    type: 'object',
    required: ['started_at', 'ended_at', 'duration_seconds'],
    properties: { started_at: timestamp, ended_at: nullable(timestamp), duration_seconds: { type: 'integer', minimum: 0 } },
    additionalProperties: false
  },
  StatusRecord: {
    type: 'object',
    required: [
      'domain',
      'name',
      'status',
      'blocked',
      'partial',
      'response_ms',
      'checked_at',
      'uptime_percent',
      'last_outage',
      'tls',
      'slow',
      'settings',
      'cause',
      'url'
    ],
    properties: {
      domain: { type: 'string' },
      name: { type: 'string' },
      status: siteStatus,
      blocked: { type: 'boolean', description: 'The site is reachable but refused the automated check.' },
      partial: { type: 'boolean', description: 'Reachable from some locations only.' },
      response_ms: nullable(ms),
      checked_at: { ...nullable(timestamp), description: 'When the site was last checked; null if never.' },
      uptime_percent: {
        type: 'object',
        required: ['day', 'week', 'month'],
        properties: { day: percent, week: percent, month: percent },
        additionalProperties: false
      },
      last_outage: { oneOf: [ref('schemas', 'LastOutage'), { type: 'null' }] },
      tls: {
        oneOf: [ref('schemas', 'Certificate'), { type: 'null' }],
        description: 'The certificate the newest check saw; null when no location completed an https handshake on its final hop.'
      },
      slow: {
        type: 'boolean',
        description:
          "Up, but slow: the site's last two checks' response_ms over its `max_response_ms` (and not yet two at or under it). False when no threshold is set or the status is not up."
      },
      settings: ref('schemas', 'SiteSettings'),
      cause: {
        oneOf: [ref('schemas', 'DownCause'), { type: 'null' }],
        description: 'Why the newest check was not clean; null when every location saw the site up, or the verdict is stale.'
      },
      url: { type: 'string', format: 'uri', description: "The site's HTML page on this service." },
      maintenance: { ...ref('schemas', 'Maintenance'), description: 'Present only during a maintenance window.' }
    },
    additionalProperties: false
  },
  Certificate: {
    type: 'object',
    description:
      'A TLS certificate as the newest check saw it: where locations saw different ones, the one that expires first. `certificate.expiring` events announce 14, 7 and 1 days left.',
    required: ['expires_at', 'days_remaining', 'issuer'],
    properties: {
      expires_at: { ...timestamp, description: "The leaf certificate's `notAfter`." },
      days_remaining: { type: 'integer', description: 'Whole days left, rounded down: 0 on the last day, negative once expired.' },
      issuer: { ...nullable({ type: 'string' }), description: "The issuer, most specific first (`CN=R11, O=Let's Encrypt, C=US`)." }
    },
    additionalProperties: false
  },
  DownCause: {
    type: 'object',
    description:
      "A check's failing locations and the words they add up to: the most common failure and how many of the check's locations reported it.",
    required: ['summary', 'locations'],
    properties: {
      summary: { type: 'string', maxLength: 200, examples: ['HTTP 500 from 3 of 3 locations', 'connection refused from 2 of 3 locations'] },
      locations: {
        type: 'array',
        maxItems: 8,
        items: {
          type: 'object',
          required: ['location', 'status', 'code', 'error', 'http_code'],
          properties: {
            location: { type: 'string', maxLength: 100 },
            status: {
              type: 'string',
              enum: ['down', 'blocked', 'error'],
              description: '`error`: the location itself failed (its resolver, its egress): no vote on the site.'
            },
            code: {
              ...nullable({ type: 'string', maxLength: 40 }),
              description: "The probe's stable code (`http_5xx`, `connect_refused`, `dns_nxdomain` ...)."
            },
            error: { type: 'string', maxLength: 160, examples: ['http: 500', 'connect: ECONNREFUSED'] },
            http_code: { type: 'integer', minimum: 0, maximum: 999, description: 'The last HTTP status the location got; 0 when none.' }
          },
          additionalProperties: false
        }
      }
    },
    additionalProperties: false
  },
  Outage: {
    type: 'object',
    required: ['domain', 'name', 'started_at', 'ended_at', 'duration_seconds'],
    properties: {
      domain: { type: 'string' },
      name: { type: 'string' },
      started_at: timestamp,
      ended_at: { ...nullable(timestamp), description: 'null while the outage is ongoing.' },
      duration_seconds: { type: 'integer', minimum: 0, description: 'To the end, or to now while ongoing.' },
      cause: {
        oneOf: [ref('schemas', 'DownCause'), { type: 'null' }],
        description:
          "Why it opened: the opening check's failing locations; null for outages recorded before causes were kept. Always present on the outages list; absent from an SLA report's outages."
      },
      monitor: {
        ...ref('schemas', 'MonitorRef'),
        description: "A monitor's outage (tcp, tls, dns) names it; its `domain` is then the monitor's identity, `monitor:<slug>`."
      }
    },
    additionalProperties: false
  },
  Sla: {
    type: 'object',
    required: [
      'domain',
      'name',
      'from',
      'to',
      'uptime_percent',
      'monitored_seconds',
      'maintenance_seconds',
      'downtime_seconds',
      'incidents',
      'longest_outage_seconds',
      'mttr_seconds',
      'outages'
    ],
    properties: {
      domain: { type: 'string' },
      name: { type: 'string' },
      from: { ...timestamp, description: 'Start of the window (inclusive).' },
      to: { ...timestamp, description: 'End of the window (exclusive).' },
      uptime_percent: {
        ...percent,
        description:
          '100 x (1 - downtime / monitored time), rounded to 3 decimals; 100 when nothing of the window was monitored (see monitored_seconds).'
      },
      monitored_seconds: {
        type: 'integer',
        minimum: 0,
        description:
          "The part of the window from the site's first recorded check (of its current tracking period) to now, or to its removal, maintenance left out. Time before the first check is unknown, not up."
      },
      maintenance_seconds: {
        type: 'integer',
        minimum: 0,
        description: "Maintenance time (the site's windows) inside that part of the window: neither monitored nor down."
      },
      downtime_seconds: {
        type: 'integer',
        minimum: 0,
        description: 'Outage time inside the monitored part of the window, outside maintenance.'
      },
      incidents: {
        type: 'integer',
        minimum: 0,
        description: 'Outages overlapping the monitored part of the window outside maintenance (those listed).'
      },
      longest_outage_seconds: {
        type: 'integer',
        minimum: 0,
        description: 'The most time one outage was down inside the window; 0 without outages.'
      },
      mttr_seconds: {
        ...nullable({ type: 'integer', minimum: 0 }),
        description: 'Mean time to recovery: the mean whole duration of the outages that ended inside the window; null when none did.'
      },
      outages: {
        type: 'array',
        items: ref('schemas', 'Outage'),
        description: 'The outages overlapping the monitored part of the window, oldest first, with their whole durations.'
      }
    },
    additionalProperties: false
  },
  SiteList: {
    type: 'object',
    required: ['sites', 'next_cursor'],
    properties: {
      sites: { type: 'array', maxItems: 200, items: ref('schemas', 'StatusRecord') },
      next_cursor: { ...nullable({ type: 'string' }), description: 'Pass as `cursor` for the next page; null on the last page.' }
    },
    additionalProperties: false
  },
  OutageList: {
    type: 'object',
    required: ['outages', 'next_cursor'],
    properties: {
      outages: { type: 'array', maxItems: 200, items: ref('schemas', 'Outage') },
      next_cursor: { ...nullable({ type: 'string' }), description: 'Pass as `cursor` for the next page; null on the last page.' }
    },
    additionalProperties: false
  }
}
