import { Resolver } from 'node:dns/promises'
import { performance } from 'node:perf_hooks'
import type { CaaRecord, MxRecord, SrvRecord } from 'node:dns'
import { failedAssertion } from '../lib/rules/assertions.js'
import type { DnsCheck, Rcode, RecordType } from '../lib/rules/check-spec.js'
import type { DnsSettings } from '../lib/net/resolver.js'
import type { Judgement } from './probe-errors.js'
import type { ProbeResult } from './probe-types.js'

/*
 * A `dns` check at one location, as blackbox_exporter's dns prober: one record type asked of the
 * location's own resolvers (DNS_SERVERS, or the system's), the answer's rcode and records compared
 * with what the check expects. A resolver that refuses, fails to answer in time or cannot be reached
 * is the location's own failure (`error`), never the name's; what the name's servers answer
 * (NXDOMAIN, SERVFAIL, other records) is the monitored thing itself.
 */

const round1 = (ms: number): number => Math.round(ms * 10) / 10

/** Records as text, the way dig prints their data: what `expect` lists and assertions read. */
function asText(record: RecordType, answer: unknown): string[] {
  const list = answer as unknown[]
  switch (record) {
    case 'A':
    case 'AAAA':
      return (list as string[]).map((a) => a.toLowerCase())
    case 'CNAME':
    case 'NS':
      return (list as string[]).map((n) => n.toLowerCase().replace(/\.$/, ''))
    case 'MX':
      return (list as MxRecord[]).map((m) => `${m.priority} ${m.exchange.toLowerCase().replace(/\.$/, '')}`)
    case 'TXT':
      return (list as string[][]).map((chunks) => chunks.join(''))
    case 'SRV':
      return (list as SrvRecord[]).map((r) => `${r.priority} ${r.weight} ${r.port} ${r.name.toLowerCase().replace(/\.$/, '')}`)
    case 'CAA':
      return (list as CaaRecord[]).map((c) => {
        const [tag, value] = Object.entries(c as unknown as Record<string, unknown>).find(([k]) => k !== 'critical') ?? ['', '']
        return `${c.critical} ${tag} "${String(value)}"`
      })
  }
}

/** A resolver's error as the answer's rcode; null when the resolver itself failed (the location's fault). */
function rcodeOf(err: unknown): Rcode | 'NODATA' | null {
  const code = (err as { code?: unknown } | null)?.code
  if (code === 'ENOTFOUND') return 'NXDOMAIN'
  if (code === 'ENODATA') return 'NODATA'
  if (code === 'ESERVFAIL') return 'SERVFAIL'
  return null
}

/** One `dns` check of `domain`. Never throws. */
export async function probeDnsRecord(opts: {
  domain: string
  spec: DnsCheck
  dns: DnsSettings
  timeoutMs: number
  now?: () => number
}): Promise<ProbeResult> {
  const now = opts.now ?? (() => performance.now())
  const started = now()
  const budget = Math.min(opts.timeoutMs, Math.max(opts.dns.timeoutMs, 50))
  const resolver = new Resolver({ timeout: Math.max(1, Math.ceil(budget / 2)), tries: 2 })
  if (opts.dns.servers.length > 0) resolver.setServers([...opts.dns.servers])
  let answers: string[] = []
  let rcode: Rcode | 'NODATA' | null
  let timer: NodeJS.Timeout | undefined
  try {
    const asked = resolver.resolve(opts.domain, opts.spec.record)
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        reject(Object.assign(new Error('timeout'), { code: 'ETIMEOUT' }))
      }, budget)
    })
    answers = asText(opts.spec.record, await Promise.race([asked, late]))
    rcode = 'NOERROR'
  } catch (err) {
    rcode = rcodeOf(err)
  } finally {
    clearTimeout(timer)
    resolver.cancel()
  }
  const total = round1(now() - started)
  let verdict = judge(opts.spec, rcode, answers)
  let assertion: number | undefined
  if (verdict.status === 'up' && opts.spec.assertions.length > 0) {
    const failure = failedAssertion(opts.spec.assertions, {
      status: 0,
      headers: {},
      body: new TextEncoder().encode(answers.join('\n')),
      responseMs: total,
      certificateDays: null
    })
    if (failure !== null) {
      verdict = { status: 'down', code: 'assertion_failed', error: failure.error }
      assertion = failure.index
    }
  }
  return {
    status: verdict.status,
    http_code: 0,
    response_ms: total,
    error: verdict.error,
    code: verdict.code,
    final_url: null,
    tls_expires_at: null,
    tls_issuer: null,
    answers: answers.slice(0, 50).map((a) => a.slice(0, 512)),
    ...(assertion === undefined ? {} : { assertion }),
    timings: { dns: total, connect: 0, tls: 0, first_byte: 0, total }
  }
}

/** The verdict on an answer: its rcode first (NODATA is NOERROR without records), then its records. */
function judge(spec: DnsCheck, rcode: Rcode | 'NODATA' | null, answers: string[]): Judgement {
  if (rcode === null) return { status: 'error', code: 'dns_refused', error: "dns: the location's resolver did not answer" }
  const seen = rcode === 'NODATA' ? 'NOERROR' : rcode
  if (seen !== spec.rcode) return { status: 'down', code: 'dns_rcode', error: `dns: ${seen} (expected ${spec.rcode})` }
  if (spec.expect === null) return { status: 'up', code: null, error: null }
  const want = [...new Set(spec.expect.map((e) => (spec.record === 'TXT' ? e : e.toLowerCase().replace(/\.$/, ''))))].sort()
  const got = [...new Set(answers)].sort()
  if (want.length === got.length && want.every((w, i) => w === got[i])) return { status: 'up', code: null, error: null }
  const shown = JSON.stringify(got.slice(0, 5)).slice(0, 200)
  return { status: 'down', code: 'dns_answer_mismatch', error: `dns: answers differ from those expected (got ${shown})` }
}
