import type { Knex } from 'knex'
import * as apiKeys from './20261122-01-api-keys.js'
import * as sites from './20261122-02-sites.js'
import * as checks from './20261122-03-checks.js'
import * as outages from './20261122-04-outages.js'
import * as sitesChangedAt from './20261124-05-sites-changed-at.js'
import * as keyScopes from './20261124-06-key-scopes.js'
import * as events from './20261124-07-events.js'
import * as webhooks from './20261124-08-webhooks.js'
import * as siteCertificates from './20261124-09-site-certificates.js'
import * as siteLeases from './20261124-10-site-leases.js'
import * as firstCheckedAt from './20261124-11-first-checked-at.js'
import * as stateWriter from './20261124-12-state-writer.js'
import * as siteSettings from './20261128-13-site-settings.js'
import * as statusPages from './20261128-14-status-pages.js'
import * as alerts from './20261129-16-alerts.js'
import * as heartbeats from './20261129-17-heartbeats.js'
import * as causes from './20261129-18-causes.js'
import * as siteChecks from './20261129-19-site-checks.js'
import * as managedBy from './20261129-20-managed-by.js'
import * as heartbeatCron from './20261129-21-heartbeat-cron.js'
import * as monitors from './20261129-22-monitors.js'
import * as managedByMore from './20261129-23-managed-by-more.js'

export interface Migration {
  readonly name: string
  up(knex: Knex): Promise<void>
  down(knex: Knex): Promise<void>
}

/** Every migration in the order it applies; a new one is a dated file added at the end. */
export const migrations: readonly Migration[] = [
  { name: '20261122-01-api-keys', ...apiKeys },
  { name: '20261122-02-sites', ...sites },
  { name: '20261122-03-checks', ...checks },
  { name: '20261122-04-outages', ...outages },
  { name: '20261124-05-sites-changed-at', ...sitesChangedAt },
  { name: '20261124-06-key-scopes', ...keyScopes },
  { name: '20261124-07-events', ...events },
  { name: '20261124-08-webhooks', ...webhooks },
  { name: '20261124-09-site-certificates', ...siteCertificates },
  { name: '20261124-10-site-leases', ...siteLeases },
  { name: '20261124-11-first-checked-at', ...firstCheckedAt },
  { name: '20261124-12-state-writer', ...stateWriter },
  { name: '20261128-13-site-settings', ...siteSettings },
  { name: '20261128-14-status-pages', ...statusPages },
  { name: '20261129-16-alerts', ...alerts },
  { name: '20261129-17-heartbeats', ...heartbeats },
  { name: '20261129-18-causes', ...causes },
  { name: '20261129-19-site-checks', ...siteChecks },
  { name: '20261129-20-managed-by', ...managedBy },
  { name: '20261129-21-heartbeat-cron', ...heartbeatCron },
  { name: '20261129-22-monitors', ...monitors },
  { name: '20261129-23-managed-by-more', ...managedByMore }
]
