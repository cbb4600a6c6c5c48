import { isIP } from 'node:net'
import nodemailer from 'nodemailer'
import { checkHost } from '../net/host-check.js'
import type { Resolve } from '../net/resolver.js'
import type { TargetPolicy } from '../rules/target-policy.js'
import type { Email } from './kinds/index.js'

/** An e-mail channel's connection and envelope (its password from the sealed secrets). */
export interface SmtpTarget {
  host: string
  port: number
  security: 'starttls' | 'tls' | 'none'
  username?: string
  password?: string
  from: string
  to: string[]
}

/** What came of sending: the server's last answer, or why not (its SMTP code when it gave one). */
export type SmtpAnswer = { ok: true; answer: string } | { ok: false; code: number | null; error: string }

export type SmtpSend = (target: SmtpTarget, email: Email, signal?: AbortSignal) => Promise<SmtpAnswer>

/** The whole time an e-mail may take: connection, greeting, TLS, authentication and data. */
export const SMTP_TIMEOUT_MS = 15_000

const NETWORK_CODES = new Set([
  'ECONNECTION',
  'ETIMEDOUT',
  'ESOCKET',
  'ECONNREFUSED',
  'ECONNRESET',
  'EDNS',
  'ETLS',
  'EPROTOCOL',
  'EAUTH',
  'EENVELOPE',
  'EMESSAGE'
])

/** An error as a short stable text: a stage and a code, never the server's words with addresses or credentials. */
function smtpError(err: unknown): { code: number | null; error: string } {
  const e = err as { code?: unknown; responseCode?: unknown } | null
  const responseCode = typeof e?.responseCode === 'number' ? e.responseCode : null
  const code = typeof e?.code === 'string' ? e.code : 'ERROR'
  if (responseCode !== null)
    return { code: responseCode, error: `smtp: ${responseCode}${code === 'EAUTH' ? ' (authentication refused)' : ''}` }
  return { code: null, error: `smtp: ${NETWORK_CODES.has(code) ? code : 'ERROR'}` }
}

/**
 * Sends e-mail over SMTP with nodemailer, through the address policy as webhooks are: the server's
 * name is resolved here, every address judged, and nodemailer dials the vetted one (TLS still
 * checks the certificate against the name). STARTTLS is required when asked for, never skipped.
 */
export function createSmtpSend({ policy, lookup, ca }: { policy: TargetPolicy; lookup?: Resolve; ca?: string }): SmtpSend {
  return async (target, email, signal) => {
    const vetted = await checkHost(target.host, policy, { lookup, timeoutMs: 5000 })
    if (!vetted.ok)
      return {
        ok: false,
        code: null,
        error: vetted.reason === 'non_public' ? 'policy: host resolves to a non-public address' : `dns: ${vetted.code ?? 'ERROR'}`
      }
    const transport = nodemailer.createTransport({
      host: vetted.addresses[0],
      port: target.port,
      secure: target.security === 'tls',
      requireTLS: target.security === 'starttls',
      ignoreTLS: target.security === 'none',
      auth: target.username === undefined ? undefined : { user: target.username, pass: target.password ?? '' },
      // SNI names a host, never an address (RFC 6066); the certificate is checked against either.
      tls: { ...(isIP(target.host) === 0 ? { servername: target.host } : {}), ...(ca === undefined ? {} : { ca }) },
      name: 'site-status',
      connectionTimeout: SMTP_TIMEOUT_MS,
      greetingTimeout: SMTP_TIMEOUT_MS,
      socketTimeout: SMTP_TIMEOUT_MS,
      logger: false,
      debug: false
    })
    const abort = (): void => {
      transport.close()
    }
    signal?.addEventListener('abort', abort, { once: true })
    try {
      const info = (await transport.sendMail({
        from: target.from,
        to: target.to,
        subject: email.subject,
        text: email.text,
        html: email.html
      })) as {
        response?: unknown
      }
      return { ok: true, answer: typeof info.response === 'string' ? info.response : '250' }
    } catch (err) {
      return { ok: false, ...smtpError(err) }
    } finally {
      signal?.removeEventListener('abort', abort)
      transport.close()
    }
  }
}
