import t from 'tap'
import type { AddressInfo } from 'node:net'
import { simpleParser, type ParsedMail } from 'mailparser'
import { SMTPServer } from 'smtp-server'
import { alertStack } from '../../helpers/alerts.js'
import { migratedDb } from '../../helpers/db.js'
import { makeCert } from '../../helpers/targets.js'

const T0 = Date.parse('2026-11-29T10:00:00.000Z')
const PASSWORD = 'smtp-pass-9f8e7d6c5b4a'

interface Inbox {
  port: number
  mails: ParsedMail[]
  logins: string[]
  /** Resolves with the next mail. */
  next(): Promise<ParsedMail>
  /** Whether the session used TLS (STARTTLS). */
  secured: boolean[]
}

/** A real SMTP server (smtp-server) on loopback, that takes `user`/PASSWORD and parses each mail with mailparser. */
async function smtpServer(t: { teardown(fn: () => unknown): void }, opts: { cert?: { key: string; cert: string } } = {}): Promise<Inbox> {
  const mails: ParsedMail[] = []
  const logins: string[] = []
  const secured: boolean[] = []
  const waiting: Array<(m: ParsedMail) => void> = []
  const server = new SMTPServer({
    secure: false,
    ...(opts.cert ? { key: opts.cert.key, cert: opts.cert.cert } : { disabledCommands: ['STARTTLS'], allowInsecureAuth: true }),
    authMethods: ['PLAIN', 'LOGIN'],
    onAuth(auth, _session, done) {
      logins.push(auth.username ?? '')
      if (auth.username === 'alerts' && auth.password === PASSWORD) done(null, { user: 'alerts' })
      else done(new Error('bad login'))
    },
    onData(stream, session, done) {
      secured.push(session.secure)
      simpleParser(stream)
        .then((mail) => {
          mails.push(mail)
          done()
          waiting.shift()?.(mail)
        })
        .catch(done)
    },
    logger: false
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          resolve()
        })
      })
  )
  return {
    port: (server.server.address() as AddressInfo).port,
    mails,
    logins,
    secured,
    next: () => new Promise((resolve) => waiting.push(resolve))
  }
}

t.test('a real SMTP server receives the alert e-mail: subject, text and HTML parts, no secret in it', async (t) => {
  const { db } = await migratedDb('sqlite', t)
  const inbox = await smtpServer(t)
  const stack = await alertStack(db, T0)
  t.teardown(() => stack.stop())
  const mail = await stack.channel('email', {
    host: '127.0.0.1',
    port: inbox.port,
    security: 'none',
    username: 'alerts',
    password: PASSWORD,
    from: 'status@example.net',
    to: ['oncall@example.net', 'boss@example.net']
  })
  await stack.policy({ name: 'mail', channels: [mail.id], default: true, group_window_s: 0 })
  const [site] = await stack.sites('mail.example.com')
  await stack.down(site as number, 'mail.example.com', T0, 'Mail <b>& co</b>')
  const arrived = inbox.next()
  stack.clock.now = T0 + 1000
  await stack.tick()
  const m = await arrived
  t.equal(m.subject, '[Site Status] DOWN: Mail <b>& co</b> (mail.example.com), for 1 s')
  t.match(m.text, /^DOWN: Mail <b>& co<\/b> \(mail\.example\.com\), for 1 s\n/)
  t.match(m.text, /Site Status API: https:\/\/status\.example\.net/)
  t.match(
    m.html,
    /<h2 style="color: #d93f0b">DOWN: Mail &lt;b&gt;&amp; co&lt;\/b&gt; \(mail\.example\.com\), for 1 s<\/h2>/,
    'the name escaped in HTML'
  )
  t.same(
    (Array.isArray(m.to) ? m.to : [m.to]).flatMap((a) => a?.value.map((v) => v.address)),
    ['oncall@example.net', 'boss@example.net']
  )
  t.equal(m.from?.value[0]?.address, 'status@example.net')
  t.same(inbox.logins, ['alerts'], 'it logged in with the sealed credentials')
  const raw = JSON.stringify(m) + String(m.html)
  t.notOk(raw.includes(PASSWORD), 'the password is nowhere in the mail')
  t.notOk(
    stack.logs.lines.some((l) => l.includes(PASSWORD)),
    'nor in any log line'
  )
  const stored = (await db('alert_channels').where({ id: mail.id }).first()) as { config: string; secret: string }
  t.notOk(stored.config.includes(PASSWORD) || stored.secret.includes(PASSWORD), 'nor in the database as text')
  const [delivered] = await db('alert_messages').where({ channel_id: mail.id }).select('status', 'answer')
  t.match(delivered, { status: 'delivered', answer: /^250 / }, "the server's reply is the message's answer")
})

t.test('STARTTLS is required when asked for, with the certificate checked', async (t) => {
  const cert = makeCert()
  const { db } = await migratedDb('sqlite', t)
  const inbox = await smtpServer(t, { cert })
  const trusted = await alertStack(db, T0, { smtpCa: cert.cert })
  t.teardown(() => trusted.stop())
  const config = {
    host: '127.0.0.1',
    port: inbox.port,
    security: 'starttls',
    username: 'alerts',
    password: PASSWORD,
    from: 'status@example.net',
    to: ['oncall@example.net']
  }
  const mail = await trusted.channel('email', config)
  await trusted.policy({ name: 'mail', channels: [mail.id], default: true })
  const [site] = await trusted.sites('tls.example.com')
  await trusted.down(site as number, 'tls.example.com', T0)
  const arrived = inbox.next()
  trusted.clock.now = T0 + 1000
  await trusted.tick()
  t.equal((await arrived).subject, '[Site Status] DOWN: tls.example.com, for 1 s')
  t.same(inbox.secured, [true], 'the session went over TLS')

  // A sender that does not trust the certificate refuses to send rather than send in clear.
  const { db: other } = await migratedDb('sqlite', t)
  const untrusting = await alertStack(other, T0)
  t.teardown(() => untrusting.stop())
  const refused = await untrusting.channel('email', config)
  await untrusting.policy({ name: 'mail', channels: [refused.id], default: true })
  const [again] = await untrusting.sites('tls.example.com')
  await untrusting.down(again as number, 'tls.example.com', T0)
  untrusting.clock.now = T0 + 1000
  await untrusting.tick()
  const [attempt] = await other('alert_messages').where({ channel_id: refused.id }).select('status', 'last_error', 'attempts')
  t.match(attempt, { status: 'pending', attempts: 1, last_error: /^smtp: (ETLS|ESOCKET|ECONNECTION)/ }, 'not delivered; retried later')
  t.equal(inbox.mails.length, 1, 'no mail went unencrypted')
})
