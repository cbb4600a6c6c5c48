import type { ConnectToRule } from '../../config/index.js'

export type { ConnectToRule } from '../../config/index.js'

/** A host without the brackets of an IPv6 literal (`[::1]` -> `::1`). */
export function bare(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host
}

/**
 * Where a connection to host:port really goes under curl's `--connect-to` rules: the first rule
 * whose HOST1 and PORT1 match (null matches any) names HOST2:PORT2 (null keeps the original). As
 * in curl, a matching rule with neither HOST2 nor PORT2 changes nothing and the search goes on.
 */
export function applyConnectTo(rules: readonly ConnectToRule[] | undefined, host: string, port: number): { host: string; port: number } {
  const h = bare(host).toLowerCase()
  for (const r of rules ?? []) {
    if (r.host1 !== null && bare(r.host1).toLowerCase() !== h) continue
    if (r.port1 !== null && r.port1 !== port) continue
    if (r.host2 === null && r.port2 === null) continue
    return { host: r.host2 !== null ? bare(r.host2) : bare(host), port: r.port2 ?? port }
  }
  return { host: bare(host), port }
}
