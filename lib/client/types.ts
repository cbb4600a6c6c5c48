/**
 * The client's parameter and result types, each taken from the types generated from the OpenAPI
 * document (schema.ts), so that a change to the document changes them too.
 */
import type { components, operations, paths } from './schema.js'

type Schemas = components['schemas']
type Responses<O extends keyof operations> = operations[O]['responses']

/** The JSON an operation answers with status `S` (200 unless given). */
export type Ok<O extends keyof operations, S extends keyof Responses<O> = 200 & keyof Responses<O>> = Responses<O>[S] extends {
  content: { 'application/json': infer T }
}
  ? T
  : never

/** An operation's query parameters. */
export type Query<O extends keyof operations> = NonNullable<operations[O]['parameters']['query']>

/** An operation's JSON request body. */
export type Body<O extends keyof operations> = operations[O] extends { requestBody: { content: { 'application/json': infer T } } }
  ? T
  : never

/** A path of the document, as written there (`/api/v1/status/{domain}`). */
export type PathTemplate = keyof paths

export type Health = Ok<'health'>
export type HealthDegraded = Schemas['HealthDegraded']
export type RateLimit = Ok<'getRateLimit'>
export type CheckResult = Ok<'checkDomain'>
export type LocationResult = Schemas['LocationResult']
export type BatchCheckResults = Ok<'checkDomains'>
export type BatchCheckError = Schemas['BatchCheckError']
export type BatchCheckSummary = Schemas['BatchCheckSummary']
export type CheckExpectations = Schemas['CheckExpectations']
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

/** An event of `GET /api/v1/events`, its data typed by its type. */
export type ServiceEvent =
  | { id: number; type: 'outage.opened' | 'outage.closed'; data: Schemas['OutageEventData'] }
  | { id: number; type: 'site.added' | 'site.removed'; data: Schemas['SiteEventData'] }
  | { id: number; type: 'certificate.expiring'; data: Schemas['CertificateEventData'] }
  | { id: number; type: 'site.slow' | 'site.slow_ended'; data: Schemas['SlowEventData'] }
  | { id: number; type: 'maintenance.started' | 'maintenance.ended'; data: Schemas['MaintenanceEventData'] }

/** An event of `GET /status/{slug}/events`: what changed, the site's domain and when. */
export interface StatusPageEvent {
  type: 'outage.opened' | 'outage.closed' | 'site.slow' | 'site.slow_ended' | 'maintenance.started' | 'maintenance.ended'
  data: { domain: string; at: string }
}

/** Whether a batch line is an error for its domain rather than a check result. */
export function isBatchCheckError(line: BatchCheckItem): line is BatchCheckError {
  return 'code' in line
}
