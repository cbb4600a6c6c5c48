/** Probes say who they are, so site owners can tell our checks apart and find the service. */
export function userAgent(publicUrl: string): string {
  return `SiteStatusAPI/0.1 (+${publicUrl})`
}
