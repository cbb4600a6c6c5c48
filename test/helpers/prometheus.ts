import type { Test } from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from './targets.js'
import { holds } from './poll.js'

export const PROMETHEUS = '/usr/bin/prometheus'
export const PROMTOOL = '/usr/bin/promtool'

/** Why the Prometheus tests cannot run here (they are skipped), or null; in CI a missing binary is a failure. */
export function prometheusMissing(): string | null {
  if (existsSync(PROMETHEUS) && existsSync(PROMTOOL)) return null
  const what = `${PROMETHEUS} or ${PROMTOOL} is missing (apt-get install -y prometheus; scripts/prerequisites.sh does this)`
  if (process.env.CI) throw new Error(what)
  return `${what}: the Prometheus tests are skipped`
}

export interface Prometheus {
  /** Runs a PromQL instant query through the HTTP API; the `data.result` vector. */
  query(promql: string): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>>
  /** What Prometheus wrote to stderr so far (for failure messages). */
  log(): string
}

/**
 * Debian's Prometheus on a free loopback port, scraping `target` (host:port) every second with a
 * config written here, its storage in a temp dir; killed with `t`.
 */
export async function startPrometheus(t: Test, { target, bearerToken }: { target: string; bearerToken: string }): Promise<Prometheus> {
  const dir = mkdtempSync(join(tmpdir(), 'prometheus-'))
  const port = await freePort()
  writeFileSync(join(dir, 'token'), bearerToken)
  writeFileSync(
    join(dir, 'prometheus.yml'),
    [
      'global:',
      '  scrape_interval: 1s',
      '  scrape_timeout: 1s',
      'scrape_configs:',
      '  - job_name: site-status',
      '    metrics_path: /metrics',
      '    authorization:',
      '      type: Bearer',
      `      credentials_file: ${join(dir, 'token')}`,
      '    static_configs:',
      `      - targets: ['${target}']`,
      ''
    ].join('\n')
  )
  const child: ChildProcess = spawn(
    PROMETHEUS,
    [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`],
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
  const base = `http://127.0.0.1:${port}`
  const ready = async (): Promise<boolean> => {
    if (child.exitCode !== null) return false
    try {
      return (await fetch(`${base}/-/ready`)).ok
    } catch {
      return false
    }
  }
  if (!(await holds(ready, 60_000))) throw new Error(`prometheus did not start: ${stderr.slice(-2000)}`)
  return {
    query: async (promql) => {
      const res = await fetch(`${base}/api/v1/query?query=${encodeURIComponent(promql)}`)
      const body = (await res.json()) as {
        status: string
        data?: { result: Array<{ metric: Record<string, string>; value: [number, string] }> }
      }
      if (body.status !== 'success' || !body.data) throw new Error(`query ${promql} failed: ${JSON.stringify(body)}`)
      return body.data.result
    },
    log: () => stderr
  }
}
