import {
  MAX_DESCRIPTION_LENGTH,
  MAX_LOGO_URL_LENGTH,
  MAX_PAGE_HEARTBEATS,
  MAX_PAGE_MONITORS,
  MAX_PAGE_SITES,
  MAX_SLUG_LENGTH,
  MAX_TITLE_LENGTH
} from '../../rules/status-page-fields.js'
import { nullable, ref, timestamp, type Json } from '../parts.js'

const slug: Json = { type: 'string', pattern: `^[a-z0-9-]{1,${MAX_SLUG_LENGTH}}$`, description: "The page's address: `/status/{slug}`." }
const title: Json = { type: 'string', minLength: 1, maxLength: MAX_TITLE_LENGTH, description: 'Trimmed; no control characters.' }
const description: Json = {
  ...nullable({ type: 'string', minLength: 1, maxLength: MAX_DESCRIPTION_LENGTH }),
  description: 'Shown under the title; line breaks allowed, no other control characters. Null: none.'
}
const logoUrl: Json = {
  ...nullable({ type: 'string', format: 'uri', maxLength: MAX_LOGO_URL_LENGTH }),
  description: 'An http:// or https:// image URL without a user name or password (the page is public). Null: none.'
}
const sites: Json = {
  type: 'array',
  maxItems: MAX_PAGE_SITES,
  items: ref('schemas', 'PageSiteRequest'),
  description: `Tracked sites, in the order the page shows them, each once (domains as normalised); at most ${MAX_PAGE_SITES}.`
}

const heartbeats: Json = {
  type: 'array',
  maxItems: MAX_PAGE_HEARTBEATS,
  items: ref('schemas', 'PageHeartbeatRequest'),
  description: `Heartbeats, in the order the page shows them after its sites, each once; at most ${MAX_PAGE_HEARTBEATS}. The public page shows each one's name, state and uptime, never its ping URL or last message.`
}

const monitors: Json = {
  type: 'array',
  maxItems: MAX_PAGE_MONITORS,
  items: ref('schemas', 'PageMonitorRequest'),
  description: `Tcp, tls and dns monitors, in the order the page shows them after its sites, each once; at most ${MAX_PAGE_MONITORS}. The public page shows each one's name, kind, state and uptime, never its slug, target or check.`
}

/** Status pages as the management API writes and shows them. */
export const pageRecordSchemas: Json = {
  PageHeartbeatRequest: {
    type: 'object',
    required: ['slug'],
    properties: {
      slug: { type: 'string', pattern: `^[a-z0-9-]{1,${MAX_SLUG_LENGTH}}$`, description: "An existing heartbeat's slug." },
      name: {
        ...nullable({ type: 'string', minLength: 1, maxLength: 200 }),
        description: "The name the page shows; absent or null: the heartbeat's own."
      }
    },
    additionalProperties: false
  },
  PageMonitorRequest: {
    type: 'object',
    required: ['slug'],
    properties: {
      slug: { type: 'string', pattern: `^[a-z0-9-]{1,${MAX_SLUG_LENGTH}}$`, description: "An existing monitor's slug." },
      name: {
        ...nullable({ type: 'string', minLength: 1, maxLength: 200 }),
        description: "The name the page shows; absent or null: the monitor's own."
      }
    },
    additionalProperties: false
  },
  PageSiteRequest: {
    type: 'object',
    required: ['domain'],
    properties: {
      domain: { type: 'string', minLength: 1, maxLength: 2048, description: 'A tracked domain, normalised as everywhere else.' },
      name: {
        ...nullable({ type: 'string', minLength: 1, maxLength: 200 }),
        description: "The name the page shows; absent or null: the site's own."
      }
    },
    additionalProperties: false
  },
  CreatePageRequest: {
    type: 'object',
    required: ['slug', 'title', 'sites'],
    properties: {
      slug,
      title,
      description,
      logo_url: logoUrl,
      sites,
      heartbeats: { ...heartbeats, description: `${String(heartbeats.description)} Default: none.` },
      monitors: { ...monitors, description: `${String(monitors.description)} Default: none.` }
    },
    additionalProperties: false
  },
  ChangePageRequest: {
    type: 'object',
    description:
      'Keys absent are kept; null clears `description` or `logo_url`; `sites`, `heartbeats` and `monitors` each replace their whole list. The slug never changes.',
    minProperties: 1,
    properties: { title, description, logo_url: logoUrl, sites, heartbeats, monitors },
    additionalProperties: false
  },
  StatusPageRecord: {
    type: 'object',
    required: ['slug', 'title', 'description', 'logo_url', 'sites', 'heartbeats', 'monitors', 'url', 'created_at', 'changed_at'],
    properties: {
      slug,
      title,
      description,
      logo_url: logoUrl,
      sites: {
        type: 'array',
        description: 'The tracked sites the page lists, in its order (a site no longer tracked has left it).',
        items: {
          type: 'object',
          required: ['domain', 'name'],
          properties: {
            domain: { type: 'string' },
            name: { ...nullable({ type: 'string' }), description: "The page's name for the site; null: the site's own name." }
          },
          additionalProperties: false
        }
      },
      heartbeats: {
        type: 'array',
        description: 'The heartbeats the page lists, after its sites, in its order (a removed heartbeat has left it).',
        items: {
          type: 'object',
          required: ['slug', 'name'],
          properties: {
            slug: { type: 'string' },
            name: { ...nullable({ type: 'string' }), description: "The page's name for the heartbeat; null: its own name." }
          },
          additionalProperties: false
        }
      },
      monitors: {
        type: 'array',
        description: 'The tcp, tls and dns monitors the page lists, after its sites, in its order (a removed monitor has left it).',
        items: {
          type: 'object',
          required: ['slug', 'name'],
          properties: {
            slug: { type: 'string' },
            name: { ...nullable({ type: 'string' }), description: "The page's name for the monitor; null: its own name." }
          },
          additionalProperties: false
        }
      },
      url: { type: 'string', format: 'uri', description: 'The public page: PUBLIC_URL and `/status/{slug}`.' },
      created_at: timestamp,
      changed_at: { ...timestamp, description: 'Moves with every change, a site leaving the page included.' }
    },
    additionalProperties: false
  },
  StatusPageList: {
    type: 'object',
    required: ['pages'],
    properties: { pages: { type: 'array', items: ref('schemas', 'StatusPageRecord'), description: 'Every page, by slug.' } },
    additionalProperties: false
  }
}
