import { PAGE_DAYS } from '../../rules/daily-uptime.js'
import { PAGE_INCIDENTS } from '../../pages/status-page-view.js'
import { nullable, percent, ref, siteStatus, timestamp, type Json } from '../parts.js'

const PAGE_STATES = ['operational', 'degraded', 'partial outage', 'major outage', 'maintenance']

/** The last days of a site, heartbeat or monitor on a status page. */
const pageDays = {
  type: 'array',
  minItems: PAGE_DAYS,
  maxItems: PAGE_DAYS,
  description: `The last ${PAGE_DAYS} UTC days, oldest first, today included.`,
  items: ref('schemas', 'StatusPageDay')
}

/** A public status page as `GET /status/{slug}.json` answers it (lib/pages/status-page-view.ts). */
export const statusPageViewSchemas: Json = {
  PageState: {
    type: 'string',
    enum: PAGE_STATES,
    description:
      'Any site down: `major outage` when at least half the sites are down, else `partial outage`; otherwise any site slow, unconfirmed, unavailable, pending or partial: `degraded`; otherwise any in a maintenance window: `maintenance`; otherwise `operational`. A site in a maintenance window counts as in maintenance whatever its checks say. A tcp, tls or dns monitor counts as a site. A heartbeat counts as its `state` says (StatusPageHeartbeat).'
  },
  StatusPageDay: {
    type: 'object',
    required: ['date', 'uptime_percent', 'down_seconds', 'outages', 'maintenance_seconds'],
    properties: {
      date: { type: 'string', format: 'date', description: 'The UTC day.', examples: ['2026-11-20'] },
      uptime_percent: {
        ...nullable(percent),
        description:
          "The day's uptime by the status record's rule: monitored from the site's first check, maintenance neither monitored nor down; today so far. Null when nothing of the day was monitored (no data, not 100)."
      },
      down_seconds: { type: 'integer', minimum: 0, description: 'Outage time inside the monitored part of the day.' },
      outages: { type: 'integer', minimum: 0, description: 'Outages that were down during the day.' },
      maintenance_seconds: {
        type: 'integer',
        minimum: 0,
        description: 'Maintenance time inside the day (from the first check on): neither monitored nor down; its bar has its own colour.'
      }
    },
    additionalProperties: false
  },
  StatusPageSite: {
    type: 'object',
    required: ['anchor', 'domain', 'name', 'uptime_percent', 'status', 'partial', 'slow', 'cause', 'days'],
    properties: {
      anchor: {
        type: 'string',
        description:
          "The site's anchor on the HTML page (`#site-ANCHOR`): its domain, or `s` and a number when the page names it by a display name."
      },
      domain: {
        ...nullable({ type: 'string' }),
        description: 'Null when the page names the site by a display name: the domain behind the name is not shown.'
      },
      uptime_percent: { ...nullable(percent), description: "Uptime over the last 30 days (the status record's `uptime_percent.month`)." },
      name: { type: 'string', description: "The page's display name for the site, or the site's own name." },
      status: siteStatus,
      partial: { type: 'boolean', description: 'Some location reached it while another saw it down.' },
      slow: { type: 'boolean' },
      cause: {
        description:
          "Why the site's newest check was not clean: the words, and the failing locations' distinct error texts where those are plain (`http: 500`); null when every location saw it up.",
        oneOf: [
          {
            type: 'object',
            required: ['summary', 'errors'],
            properties: {
              summary: { type: 'string', examples: ['HTTP 500 from 3 of 3 locations'] },
              errors: { type: 'array', maxItems: 8, items: { type: 'string' } }
            },
            additionalProperties: false
          },
          { type: 'null' }
        ]
      },
      maintenance: {
        type: 'object',
        description: 'Present only during a maintenance window.',
        required: ['until', 'reason'],
        properties: { until: timestamp, reason: nullable({ type: 'string' }) },
        additionalProperties: false
      },
      days: pageDays
    },
    additionalProperties: false
  },
  StatusPageHeartbeat: {
    type: 'object',
    description: 'A heartbeat the page lists: its name, state, uptime and days only (never its ping URL, schedule or last message).',
    required: ['anchor', 'name', 'state', 'uptime_percent', 'days'],
    properties: {
      anchor: { type: 'string', description: 'Its anchor on the HTML page (`#site-ANCHOR`): `h` and a number.' },
      name: { type: 'string', description: "The page's display name for the heartbeat, or its own name." },
      state: {
        type: 'string',
        enum: ['new', 'up', 'late', 'down', 'paused'],
        description:
          'For the page state `late` counts as a slow site (degraded), `new` as a pending one, `down` as a down one; `paused` does not count.'
      },
      uptime_percent: { ...nullable(percent), description: 'Uptime over the last 30 days, from its first ping; null before it.' },
      days: pageDays
    },
    additionalProperties: false
  },
  StatusPageMonitor: {
    type: 'object',
    description:
      'A tcp, tls or dns monitor the page lists: its name, kind, state by a site\u2019s rules, uptime and days only (never its slug, target host, port, resolver answers or the errors its locations saw).',
    required: ['anchor', 'name', 'kind', 'status', 'partial', 'slow', 'uptime_percent', 'days'],
    properties: {
      anchor: { type: 'string', description: 'Its anchor on the HTML page (`#site-ANCHOR`): `m` and a number.' },
      name: { type: 'string', description: "The page's display name for the monitor, or its own name." },
      kind: { type: 'string', enum: ['tcp', 'tls', 'dns'] },
      status: siteStatus,
      partial: { type: 'boolean', description: 'Some location reached it while another saw it down.' },
      slow: { type: 'boolean' },
      maintenance: {
        type: 'object',
        description: 'Present only during a maintenance window.',
        required: ['until', 'reason'],
        properties: { until: timestamp, reason: nullable({ type: 'string' }) },
        additionalProperties: false
      },
      uptime_percent: { ...nullable(percent), description: 'Uptime over the last 30 days, from its first check; null before it.' },
      days: pageDays
    },
    additionalProperties: false
  },
  StatusPageIncident: {
    type: 'object',
    required: ['id', 'domain', 'name', 'started_at', 'ended_at', 'duration_seconds'],
    properties: {
      id: { type: 'integer', minimum: 1, description: "The outage's id; the feed's entry ids are made from it." },
      domain: {
        ...nullable({ type: 'string' }),
        description: 'Null when the page names the site by a display name, and for a heartbeat or a monitor.'
      },
      name: { type: 'string', description: 'As the page names the site.' },
      started_at: timestamp,
      ended_at: { ...nullable(timestamp), description: 'Null while ongoing.' },
      duration_seconds: { type: 'integer', minimum: 0, description: 'Until now while ongoing.' }
    },
    additionalProperties: false
  },
  StatusPage: {
    type: 'object',
    required: [
      'slug',
      'title',
      'description',
      'logo_url',
      'state',
      'generated_at',
      'updated_at',
      'sites',
      'heartbeats',
      'monitors',
      'incidents'
    ],
    properties: {
      slug: { type: 'string', pattern: '^[a-z0-9-]{1,64}$' },
      title: { type: 'string' },
      description: nullable({ type: 'string' }),
      logo_url: nullable({ type: 'string' }),
      state: ref('schemas', 'PageState'),
      generated_at: { ...timestamp, description: 'When this answer was made (answers are kept up to a second).' },
      updated_at: { ...timestamp, description: 'When the page itself, or one of its incidents, last changed.' },
      sites: { type: 'array', description: "The page's sites, in its order.", items: ref('schemas', 'StatusPageSite') },
      heartbeats: {
        type: 'array',
        description: "The page's heartbeats, in its order (shown after its sites).",
        items: ref('schemas', 'StatusPageHeartbeat')
      },
      monitors: {
        type: 'array',
        description: "The page's tcp, tls and dns monitors, in its order (shown after its sites, before its heartbeats).",
        items: ref('schemas', 'StatusPageMonitor')
      },
      incidents: {
        type: 'array',
        maxItems: PAGE_INCIDENTS,
        description: `Outages of the page's sites, monitors and heartbeats overlapping the days shown: ongoing first, then newest first; at most ${PAGE_INCIDENTS}.`,
        items: ref('schemas', 'StatusPageIncident')
      }
    },
    additionalProperties: false
  }
}
