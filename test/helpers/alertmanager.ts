import type { Test } from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from './targets.js'
import { holds } from './poll.js'

export const ALERTMANAGER = '/usr/bin/prometheus-alertmanager'

/** An alert as Alertmanager's API v2 lists it. */
export interface ListedAlert {
  labels: Record<string, string>
  annotations: Record<string, string>
  startsAt: string
  endsAt: string
  status: { state: string }
}

export interface Alertmanager {
  /** Its base URL, as a channel's `urls` names it. */
  url: string
  /** The alerts it holds now (`GET /api/v2/alerts`), active ones. */
  alerts(): Promise<ListedAlert[]>
  log(): string
}

/**
 * Debian's prometheus-alertmanager on a free loopback port, no cluster, routing every alert to
 * `webhook` (a receiver in the test) at once, resolutions included; killed with `t`.
 */
export async function startAlertmanager(t: Test, { webhook }: { webhook: string }): Promise<Alertmanager> {
  if (!existsSync(ALERTMANAGER))
    throw new Error(`${ALERTMANAGER} is missing: run scripts/prerequisites.sh (apt-get install prometheus-alertmanager)`)
  const dir = mkdtempSync(join(tmpdir(), 'alertmanager-'))
  const port = await freePort()
  writeFileSync(
    join(dir, 'alertmanager.yml'),
    [
      'route:',
      '  receiver: hook',
      "  group_by: ['alertname']",
      '  group_wait: 1s',
      '  group_interval: 1s',
      '  repeat_interval: 4h',
      'receivers:',
      '  - name: hook',
      '    webhook_configs:',
      `      - url: ${webhook}`,
      '        send_resolved: true',
      ''
    ].join('\n')
  )
  const child: ChildProcess = spawn(
    ALERTMANAGER,
    [
      `--config.file=${join(dir, 'alertmanager.yml')}`,
      `--storage.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--cluster.listen-address=',
      '--log.level=warn'
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] }
  )
  let stderr = ''
  child.stderr?.on('data', (c: Buffer) => {
    stderr += c.toString()
  })
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGKILL')
      await exited
    }
    rmSync(dir, { recursive: true, force: true })
  })
  const url = `http://127.0.0.1:${port}`
  const ready = async (): Promise<boolean> => {
    if (child.exitCode !== null) return false
    try {
      return (await fetch(`${url}/-/ready`)).ok
    } catch {
      return false
    }
  }
  if (!(await holds(ready, 30_000))) throw new Error(`alertmanager did not start: ${stderr.slice(-2000)}`)
  return {
    url,
    alerts: async () => {
      const res = await fetch(`${url}/api/v2/alerts?active=true&silenced=true&inhibited=true&unprocessed=true`)
      return (await res.json()) as ListedAlert[]
    },
    log: () => stderr
  }
}
