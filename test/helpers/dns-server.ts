/**
 * A DNS server on a loopback UDP port for resolver tests, in a child process: each question (A or
 * AAAA) for a name under a rule's suffix is answered with addresses, NXDOMAIN, SERVFAIL, or never
 * (the query is dropped); any other name is NXDOMAIN.
 */
import { fork } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'

export type DnsAnswer = string[] | 'nxdomain' | 'servfail' | 'drop'
export interface DnsRule {
  suffix: string
  A: DnsAnswer
  AAAA: DnsAnswer
}

export interface DnsServer {
  /** `127.0.0.1:port`, as DNS_SERVERS takes it. */
  address: string
  /** Questions seen so far, as `TYPE name`, in order. */
  queries(): Promise<string[]>
  close(): Promise<void>
}

const SCRIPT = fileURLToPath(new URL('./dns-server-process.mjs', import.meta.url))

export async function startDnsServer(rules: DnsRule[]): Promise<DnsServer> {
  // No inherited loader flags: the server is plain JavaScript.
  const child = fork(SCRIPT, [JSON.stringify(rules)], { execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const [first] = (await once(child, 'message')) as [{ port: number }]
  return {
    address: `127.0.0.1:${first.port}`,
    queries: async () => {
      child.send('queries')
      const [reply] = (await once(child, 'message')) as [{ queries: string[] }]
      return reply.queries
    },
    close: async () => {
      if (child.exitCode !== null) return
      const exited = once(child, 'exit')
      child.disconnect()
      await exited
    }
  }
}
