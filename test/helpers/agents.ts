/**
 * `site-status agent` as operators run it: the compiled command in a process of its own, on a
 * private NATS (test/helpers/nats.ts). Its output goes to the suite log (no line may carry a key).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import type { Test } from 'tap'
import { CLI_FILE, ROOT } from './compiled.js'
import { cliEnv } from './cli.js'
import { recordOutputOf } from './suite-log.js'
import type { NatsUser } from './nats.js'

export interface AgentProcess {
  child: ChildProcess
  /** Everything it has written so far. */
  output(): string
  /** Resolves with its exit code (or signal) once it has exited. */
  exited: Promise<number | NodeJS.Signals | null>
}

/**
 * The NATS users of a central and of each agent location, all with one password, with the
 * permissions deploy/nats.conf gives them (tests that need the shipped file itself start it with
 * `startNats(t, { shipped: true, locations })`).
 */
export function natsUsers(password: string, locations: readonly string[]): NatsUser[] {
  const srv = (verb: string, location: string) => [
    `$SRV.${verb}`,
    `$SRV.${verb}.site-status-agent-${location}`,
    `$SRV.${verb}.site-status-agent-${location}.*`
  ]
  return [
    { user: 'central', password, permissions: { publish: ['site-status.probe.>', '$SRV.PING.>'], subscribe: '_INBOX_site_status.>' } },
    ...locations.map((location) => ({
      user: `agent-${location}`,
      password,
      permissions: {
        subscribe: [
          `site-status.probe.${location} probe-${location}`,
          `site-status.probe.${location}.* probe-${location}`,
          ...srv('PING', location),
          ...srv('INFO', location),
          ...srv('STATS', location)
        ],
        allow_responses: true
      }
    }))
  ]
}

/**
 * Starts `site-status agent --location LOCATION` with `env` (NATS_URL and the rest); resolves once
 * it says it serves, or as soon as it has exited (a refused start: see `exited`). Killed at teardown.
 */
export async function startAgentProcess(t: Test, location: string, env: Record<string, string>): Promise<AgentProcess> {
  const child = spawn(process.execPath, [CLI_FILE, 'agent', '--location', location], {
    cwd: ROOT,
    env: cliEnv({
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
      INSTANCE_ID: `agent-${location}-${Math.random().toString(36).slice(2, 8)}`,
      ...env
    }),
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let output = ''
  for (const stream of [child.stdout, child.stderr]) {
    stream.setEncoding('utf8').on('data', (d: string) => {
      output += d
    })
    recordOutputOf(stream)
  }
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) => {
    child.once('exit', (code, signal) => {
      resolve(code ?? signal)
    })
  })
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    await exited
  })
  await new Promise<void>((resolve) => {
    const look = (): void => {
      if (output.includes('"agent serving"')) resolve()
    }
    child.stdout.on('data', look)
    void exited.then(() => {
      resolve()
    })
  })
  return { child, output: () => output, exited }
}
