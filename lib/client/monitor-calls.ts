/**
 * The client's calls of monitors (tcp, tls, dns): the keyed resource and their badges (no key).
 * SiteStatusClient adds the other keyed calls on top.
 */
import { init, json, none, text, type CallOptions } from './api.js'
import { HeartbeatCalls } from './heartbeat-calls.js'
import type * as T from './types.js'

export class MonitorCalls extends HeartbeatCalls {
  /** `GET /api/v1/monitors`: a page of monitors (scope `read`). */
  listMonitors(query: T.Query<'listMonitors'> = {}, options?: CallOptions): Promise<T.MonitorList> {
    return json(this.api.GET('/api/v1/monitors', { params: { query }, ...init(options) }))
  }

  /** `POST /api/v1/monitors`: adds a tcp, tls or dns monitor of one host (scope `manage`). */
  addMonitor(monitor: T.MonitorRequest, options?: CallOptions): Promise<T.Monitor> {
    return json(this.api.POST('/api/v1/monitors', { body: monitor, ...init(options) }))
  }

  /** `GET /api/v1/monitors/{slug}`: a monitor, its check and current verdict (scope `read`). */
  getMonitor(slug: string, options?: CallOptions): Promise<T.Monitor> {
    return json(this.api.GET('/api/v1/monitors/{slug}', { params: { path: { slug } }, ...init(options) }))
  }

  /** `GET /api/v1/monitors/{slug}/status`: a monitor's status record (scope `read`). */
  getMonitorStatus(slug: string, options?: CallOptions): Promise<T.MonitorStatus> {
    return json(this.api.GET('/api/v1/monitors/{slug}/status', { params: { path: { slug } }, ...init(options) }))
  }

  /** `PATCH /api/v1/monitors/{slug}`: changes a monitor (scope `manage`). */
  changeMonitor(slug: string, patch: T.MonitorPatch, options?: CallOptions): Promise<T.Monitor> {
    return json(this.api.PATCH('/api/v1/monitors/{slug}', { params: { path: { slug } }, body: patch, ...init(options) }))
  }

  /** `DELETE /api/v1/monitors/{slug}`: removes a monitor, its history kept (scope `manage`). */
  removeMonitor(slug: string, options?: CallOptions): Promise<void> {
    return none(this.api.DELETE('/api/v1/monitors/{slug}', { params: { path: { slug } }, ...init(options) }))
  }

  /** `GET /api/v1/monitors/{slug}/sla`: a monitor's uptime, downtime and outages over a window (scope `read`). */
  getMonitorSla(slug: string, query: T.Query<'getMonitorSla'> = {}, options?: CallOptions): Promise<T.Sla> {
    return json(this.api.GET('/api/v1/monitors/{slug}/sla', { params: { path: { slug }, query }, ...init(options) }))
  }

  /** `POST /api/v1/monitors/{slug}/maintenance`: adds a maintenance window to a monitor (scope `manage`). */
  addMonitorMaintenanceWindow(slug: string, window: T.MaintenanceWindowRequest, options?: CallOptions): Promise<T.MaintenanceWindow> {
    return json(this.api.POST('/api/v1/monitors/{slug}/maintenance', { params: { path: { slug } }, body: window, ...init(options) }))
  }

  /** `GET /api/v1/monitors/{slug}/maintenance`: a monitor's maintenance windows (scope `read`). */
  listMonitorMaintenanceWindows(slug: string, options?: CallOptions): Promise<T.MaintenanceWindowList> {
    return json(this.api.GET('/api/v1/monitors/{slug}/maintenance', { params: { path: { slug } }, ...init(options) }))
  }

  /** `DELETE /api/v1/monitors/{slug}/maintenance/{id}`: removes a monitor's maintenance window (scope `manage`). */
  removeMonitorMaintenanceWindow(slug: string, id: number, options?: CallOptions): Promise<void> {
    return none(this.api.DELETE('/api/v1/monitors/{slug}/maintenance/{id}', { params: { path: { slug, id } }, ...init(options) }))
  }

  /** `GET /api/badge/monitor/{slug}`: a monitor's badge, SVG text. */
  getMonitorBadge(slug: string, query: T.Query<'getMonitorBadge'> = {}, options?: CallOptions): Promise<string> {
    const params = { path: { slug }, query }
    return text(
      this.api.GET('/api/badge/monitor/{slug}', { params, ...init(options), headers: { accept: 'image/svg+xml' }, parseAs: 'text' })
    )
  }

  /** `GET /api/badge/monitor/{slug}/endpoint`: a monitor's badge as shields.io endpoint JSON. */
  getMonitorEndpointBadge(slug: string, query: T.Query<'getMonitorEndpointBadge'> = {}, options?: CallOptions): Promise<T.EndpointBadge> {
    return json(this.api.GET('/api/badge/monitor/{slug}/endpoint', { params: { path: { slug }, query }, ...init(options) }))
  }
}
