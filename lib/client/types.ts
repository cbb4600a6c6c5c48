/**
 * The client's parameter and result types, each taken from the types generated from the OpenAPI
 * document (schema.ts), so that a change to the document changes them too.
 */
import type { components, operations, paths, webhooks } from './schema.js'

type Schemas = components['schemas']
type Responses<O extends keyof operations> = operations[O]['responses']

/** The JSON an operation answers with status `S` (200 unless given). */
export type Ok<O extends keyof operations, S extends keyof Responses<O> = 200 & keyof Responses<O>> = Responses<O>[S] extends {
  content: { 'application/json': infer T }
}
  ? T
  : never

/** A path of the document, as written there (`/api/v1/status/{domain}`). */
export type PathTemplate = keyof paths

/** An operation's query parameters. */
export type Query<O extends keyof operations> = NonNullable<operations[O]['parameters']['query']>

/** An operation's JSON request body. */
export type Body<O extends keyof operations> = operations[O] extends { requestBody: { content: { 'application/json': infer T } } }
  ? T
  : never

export type Health = Ok<'health'>
export type HealthDegraded = Schemas['HealthDegraded']
export type RateLimit = Ok<'getRateLimit'>
export type CheckResult = Ok<'checkDomain'>
export type LocationResult = Schemas['LocationResult']
export type BatchCheckResults = Ok<'checkDomains'>
export type BatchCheckError = Schemas['BatchCheckError']
export type BatchCheckSummary = Schemas['BatchCheckSummary']
export type CheckExpectations = Schemas['CheckExpectations']
/** What each location does, by `type`: `http`, `tcp`, `tls` or `dns`. */
export type Check = Schemas['Check']
export type Assertion = Schemas['Assertion']
/** One entry of a batch: a domain, or a domain with a check of its own. */
export type BatchEntry = Body<'checkDomains'>['domains'][number]
/** A location result's stable code, beside its `error`. */
export type LocationCode = Schemas['LocationCode']
/** A line of a batch other than its summary: one domain's result or error. */
export type BatchCheckItem = CheckResult | BatchCheckError
export type StatusRecord = Ok<'getStatus'>
export type OutageList = Ok<'listOutages'>
export type Outage = Schemas['Outage']
export type SiteList = Ok<'listSites'>
export type AddSiteRequest = Body<'addSite'>
export type ChangeSiteRequest = Body<'changeSite'>
export type Sla = Ok<'getSla'>
export type MaintenanceWindowRequest = Body<'addMaintenanceWindow'>
export type MaintenanceWindow = Ok<'addMaintenanceWindow', 201>
export type MaintenanceWindowList = Ok<'listMaintenanceWindows'>
export type CreatePageRequest = Body<'createPage'>
export type ChangePageRequest = Body<'changePage'>
export type StatusPageRecord = Ok<'getPage'>
export type StatusPageList = Ok<'listPages'>
export type WebhookRequest = Body<'createWebhook'>
export type WebhookCreated = Ok<'createWebhook', 201>
export type WebhookList = Ok<'listWebhooks'>
export type Webhook = Schemas['Webhook']
export type DeliveryList = Ok<'listDeliveries'>
export type Delivery = Ok<'retryDelivery', 202>
export type ChannelRequest = Body<'createChannel'>
export type ChannelChange = Body<'changeChannel'>
export type Channel = Schemas['Channel']
export type ChannelList = Ok<'listChannels'>
export type ChannelTest = Ok<'testChannel'>
export type AlertMessageList = Ok<'listChannelDeliveries'>
export type AlertPolicyRequest = Body<'createAlertPolicy'>
export type AlertPolicy = Schemas['AlertPolicy']
export type AlertPolicyList = Ok<'listAlertPolicies'>
export type SiteAlerting = Ok<'getSiteAlerting'>
export type SiteAlertingRequest = Body<'setSiteAlerting'>
export type PageAlerting = Ok<'getPageAlerting'>
export type EndpointBadge = Ok<'getEndpointBadge'>
export type StatusPage = Ok<'getStatusPage'>
export type OpenApiDocument = Ok<'getOpenApi'>
export type ConfigPlan = Ok<'plan'>

/** A webhook's delivery body, as the document's `webhooks` describe it per event type. */
type Delivered<E extends keyof webhooks> = webhooks[E]['post'] extends { requestBody: { content: { 'application/json': infer B } } }
  ? B
  : never

/** An event type, as webhooks and the event stream name it. */
export type EventType = keyof webhooks

/** An event of `GET /api/v1/events`: its id, its type, and the data the document gives that type. */
export type ServiceEvent = {
  [E in EventType]: { id: number; type: E; data: Delivered<E> extends { data: infer D } ? D : never }
}[EventType]

/** An event of `GET /status/{slug}/events`: what changed, the site as the page names it (no domain behind a display name) and when. */
export interface StatusPageEvent {
  type: Schemas['StatusPageEventType']
  data: Schemas['StatusPageEventData']
}

// The closed sets of the document, each a union of its enum: match on these, never on a bare string.
/** A site's status, as the status record, a check and a status page give it. */
export type SiteStatus = Schemas['StatusRecord']['status']
/** One location's verdict in a check. */
export type LocationStatus = Schemas['LocationResult']['status']
/** Why a batch did not check a domain. */
export type BatchCheckErrorCode = Schemas['BatchCheckError']['code']
/** A webhook delivery's state. */
export type DeliveryStatus = Schemas['Delivery']['status']
/** A status page's overall state. */
export type PageState = Schemas['PageState']
/** A badge's style. */
export type BadgeStyle = NonNullable<Query<'getBadge'>['style']>
/** A badge's colour in its endpoint JSON. */
export type BadgeColor = Schemas['EndpointBadge']['color']
/** The day a weekly maintenance window starts on. */
export type Weekday = Schemas['WeeklySchedule']['day']
/** How a location reaches sites (`/healthz`). */
export type LocationKind = NonNullable<Health['locations']>[number]['kind']
/** Whether Redis answered (`/healthz`); null when the instance runs without it. */
export type RedisHealth = Health['redis']
/** Whether the schedule keeps up (`/healthz`). */
export type ScheduleHealth = Health['schedule']

/** Whether a batch line is an error for its domain rather than a check result. */
export function isBatchCheckError(line: BatchCheckItem): line is BatchCheckError {
  return 'code' in line
}
export type HeartbeatRequest = Body<'addHeartbeat'>
export type HeartbeatPatch = Body<'changeHeartbeat'>
export type Heartbeat = Schemas['Heartbeat']
export type HeartbeatWithPingUrl = Schemas['HeartbeatWithPingUrl']
export type HeartbeatList = Ok<'listHeartbeats'>
/** A heartbeat's schedule: every N seconds, or a cron expression in a time zone. */
export type HeartbeatSchedule = Schemas['HeartbeatEvery'] | Schemas['HeartbeatCron']
export type MonitorRequest = Body<'addMonitor'>
export type MonitorPatch = Body<'changeMonitor'>
export type Monitor = Schemas['Monitor']
export type MonitorStatus = Schemas['MonitorStatus']
export type MonitorList = Ok<'listMonitors'>
export type MonitorRef = Schemas['MonitorRef']
