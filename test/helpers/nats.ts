/**
 * A real NATS server (Debian's `nats-server`) on a free loopback port, that a test may stop, kill
 * and start again on the same port with the same configuration. Fails (never skips) when the binary
 * is missing; scripts/prerequisites.sh installs it. The machine's own NATS on port 4222 is never used.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Test } from 'tap'
import { holds } from './poll.js'
import { recordOutputOf } from './suite-log.js'
import { freePort } from './targets.js'

export const NATS_SERVER = '/usr/sbin/nats-server'
const SHIPPED = fileURLToPath(new URL('../../deploy/nats.conf', import.meta.url))
const SHIPPED_LISTEN = /^listen: 0\.0\.0\.0:4222$/m
const PASSWORD_VARIABLE = /^\s*password: \$([A-Z][A-Z0-9_]*)$/gm

/** A subject list, or allow and deny lists; a subject may carry a queue group (`'subject queue'`). */
export type NatsSubjects = string | string[] | { allow?: string[]; deny?: string[] }

/** One user of the server's `authorization` block, in NATS's own configuration terms. */
export interface NatsUser {
  user: string
  password: string
  permissions?: {
    publish?: NatsSubjects
    subscribe?: NatsSubjects
    /** Publishing on the reply subjects of received requests; with no `publish`, nothing else. */
    allow_responses?: boolean | { max?: number; expires?: string }
  }
}

export interface NatsOptions {
  /**
   * Runs the shipped deploy/nats.conf, listening on the test's port instead of 0.0.0.0:4222. Each
   * of its password variables ($NATS_..._PASSWORD) is set in the server's environment: from `env`
   * when given there, else to a fresh random password (see `env` of the result).
   */
  shipped?: boolean
  /**
   * With `shipped`: the agent locations it has users for, each added as the file's own comment says
   * (a copy of the agent-fra1 user with fra1 replaced); default fra1 alone.
   */
  locations?: readonly string[]
  /** A monitoring port (`nats-server -m`) whose /connz lists the connections. */
  monitor?: boolean
  /** Without `shipped`: the users of an `authorization` block; none, no authorization at all. */
  users?: NatsUser[]
  /** Variables for the server's environment (the configuration reads `$NAME` from there). */
  env?: Record<string, string>
  /** Without `shipped`: TLS required of every client, with this certificate and key (files). */
  tls?: { certFile: string; keyFile: string }
}

/** A private nats-server; its process ends at the test's teardown. */
export interface PrivateNats {
  /** `nats://127.0.0.1:<port>`, without credentials (see natsUrlWithAuth). */
  url: string
  port: number
  /** The variables the server was started with: with `shipped`, every password of the shipped file. */
  env: Readonly<Record<string, string>>
  /** With `shipped`: the password of `user` (`central`, `agent-fra1`, ...). */
  passwordOf(user: string): string
  /** With `monitor`: the names of the clients connected now, from the server's /connz. */
  connectionNames(): Promise<string[]>
  /** Stops the server (SIGTERM) and resolves once it has exited; clients see the connection close. */
  stop(): Promise<void>
  /** Kills the server (SIGKILL) and resolves once it has exited, as a crash would. */
  kill(): Promise<void>
  /**
   * Freezes the server (SIGSTOP): its connections stay open and nothing answers, as a host gone
   * without a word looks to its clients (half open); `resume` (SIGCONT) thaws it. Thawed at teardown.
   */
  pause(): void
  resume(): void
  /** Starts it again on the same port and configuration; resolves once it accepts clients. */
  start(): Promise<void>
  running(): boolean
}

/**
 * `url` with a user and password in it, as NATS_URL carries them. nats.js 2.29 ignores credentials
 * in a server URL: whoever connects from such a URL passes them as `user` and `pass` itself.
 */
export function natsUrlWithAuth(url: string, user: string, pass: string): string {
  const { protocol, host } = new URL(url)
  return `${protocol}//${encodeURIComponent(user)}:${encodeURIComponent(pass)}@${host}`
}

/** The agent-fra1 user of the shipped file, from its opening brace to its closing one. */
const SHIPPED_AGENT = /^ {4}\{\n {6}user: agent-fra1\n[\s\S]*?^ {4}\}\n/m

/** The password variable the shipped file reads for `user` (`agent-fra1`: NATS_AGENT_FRA1_PASSWORD). */
export function passwordVariable(user: string): string {
  return `NATS_${user.toUpperCase().replace(/-/g, '_')}_PASSWORD`
}

/**
 * The shipped configuration listening on `port`, with a user for each of `locations` made as its
 * comment says (agent-fra1's copied, fra1 and FRA1 replaced), and the password variables it reads.
 */
function shippedConfig(port: number, locations: readonly string[]): { text: string; variables: string[] } {
  const shipped = readFileSync(SHIPPED, 'utf8')
  const agent = SHIPPED_AGENT.exec(shipped)?.[0]
  if (!SHIPPED_LISTEN.test(shipped) || agent === undefined) throw new Error('deploy/nats.conf changed shape: update test/helpers/nats.ts')
  const users = locations.map((l) => agent.replaceAll('fra1', l).replaceAll('FRA1', l.toUpperCase())).join('')
  const text = shipped.replace(SHIPPED_LISTEN, `listen: 127.0.0.1:${port}`).replace(agent, users)
  const variables = [...text.matchAll(PASSWORD_VARIABLE)].map((m) => m[1]!)
  return { text, variables }
}

/** NATS's configuration format reads JSON, so users and permissions are written as such. */
function writtenConfig(port: number, users: NatsUser[] | undefined, tls: NatsOptions['tls']): string {
  const lines = [`listen: 127.0.0.1:${port}`]
  if (users !== undefined && users.length > 0) lines.push(`authorization: ${JSON.stringify({ users })}`)
  if (tls !== undefined) lines.push(`tls: ${JSON.stringify({ cert_file: tls.certFile, key_file: tls.keyFile })}`)
  return `${lines.join('\n')}\n`
}

/** Whether a server listens on `port` and greets with its INFO line, as it does every client. */
function greets(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port })
    let received = ''
    const settle = (ok: boolean): void => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(2000, () => {
      settle(false)
    })
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString()
      if (received.includes('\r\n')) settle(received.startsWith('INFO {'))
    })
    socket.on('error', () => {
      settle(false)
    })
    socket.on('close', () => {
      settle(false)
    })
  })
}

export async function startNats(
  t: Test,
  { shipped = false, locations = ['fra1'], users, env = {}, tls, monitor = false }: NatsOptions = {}
): Promise<PrivateNats> {
  if (!existsSync(NATS_SERVER)) {
    throw new Error(`${NATS_SERVER} is missing: run scripts/prerequisites.sh (it installs Debian's nats-server)`)
  }
  if (shipped && users !== undefined) throw new Error('startNats: `users` belong to a written configuration, not to `shipped`')
  const port = await freePort()
  const monitorPort = monitor ? await freePort() : null
  const vars: Record<string, string> = {}
  let config: string
  if (shipped) {
    const { text, variables } = shippedConfig(port, locations)
    // Letters and digits after a letter: nats-server parses a variable's value as configuration.
    for (const name of variables) vars[name] = `p${randomBytes(12).toString('hex')}`
    config = text
  } else {
    config = writtenConfig(port, users, tls)
  }
  Object.assign(vars, env)
  const dir = mkdtempSync(join(tmpdir(), 'site-status-nats-'))
  const file = join(dir, 'nats.conf')
  writeFileSync(file, config)

  let child: ChildProcess | null = null
  let exited: Promise<void> = Promise.resolve()
  let lastLines: string[] = []
  // A test process that dies must not leave a server behind.
  const killOnExit = (): void => {
    child?.kill('SIGKILL')
  }
  process.once('exit', killOnExit)

  const start = async (): Promise<void> => {
    if (child !== null) throw new Error('the private nats-server is already running')
    const args = monitorPort === null ? ['-c', file] : ['-c', file, '-m', String(monitorPort)]
    const proc = spawn(NATS_SERVER, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH, ...vars } })
    child = proc
    lastLines = []
    for (const stream of [proc.stdout, proc.stderr]) {
      recordOutputOf(stream)
      stream.on('data', (chunk: Buffer) => {
        lastLines = [...lastLines, ...chunk.toString().split('\n').filter(Boolean)].slice(-5)
      })
    }
    // 'close', not 'exit': by then its last lines (a configuration error) have been read too.
    exited = new Promise<void>((resolve) =>
      proc.once('close', () => {
        if (child === proc) child = null
        resolve()
      })
    )
    const up = await holds(async () => child !== proc || (await greets(port)), 10_000)
    if (child !== proc) throw new Error(`nats-server exited while starting: ${lastLines.join(' | ')}`)
    if (!up) throw new Error(`nats-server did not accept clients on port ${port} within 10 s: ${lastLines.join(' | ')}`)
  }

  const end = async (signal: NodeJS.Signals): Promise<void> => {
    const proc = child
    if (proc === null) return
    proc.kill(signal)
    const killer = setTimeout(() => proc.kill('SIGKILL'), 10_000)
    await exited
    clearTimeout(killer)
  }

  t.teardown(async () => {
    process.removeListener('exit', killOnExit)
    child?.kill('SIGCONT')
    await end('SIGKILL')
    rmSync(dir, { recursive: true, force: true })
  })
  await start()
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    env: vars,
    passwordOf: (user) => {
      const password = vars[passwordVariable(user)]
      if (password === undefined) throw new Error(`the NATS configuration has no password variable for ${user}`)
      return password
    },
    connectionNames: async () => {
      if (monitorPort === null) throw new Error('startNats: connectionNames needs `monitor`')
      const res = await fetch(`http://127.0.0.1:${monitorPort}/connz?limit=1024`)
      const body = (await res.json()) as { connections?: Array<{ name?: string }> }
      return (body.connections ?? []).map((c) => c.name ?? '')
    },
    stop: () => end('SIGTERM'),
    kill: () => end('SIGKILL'),
    pause: () => {
      child?.kill('SIGSTOP')
    },
    resume: () => {
      child?.kill('SIGCONT')
    },
    start,
    running: () => child !== null
  }
}
