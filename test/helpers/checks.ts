import type { CheckRecord } from '../../lib/store/checks.js'

/** A scheduled check of a site, as the recorder hands it to the store: 3 of 3 locations answered. */
export function scheduledCheck(siteId: number, status: CheckRecord['status'], at: number): CheckRecord {
  return {
    siteId,
    checkedAt: new Date(at),
    status,
    blocked: false,
    partial: false,
    responseMs: status === 'up' ? 42.5 : null,
    locationsAnswered: 3,
    locationsTotal: 3,
    source: 'schedule',
    locations: []
  }
}
