/**
 * A real HAProxy (Debian's `haproxy`) in front of instances on loopback, from a configuration the
 * test writes: round robin, health checks on /healthz. Fails (never skips) when HAProxy is missing;
 * scripts/prerequisites.sh installs it.
 */
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Test } from 'tap'
import { until } from './poll.js'
import { recordOutputOf } from './suite-log.js'
import { freePort } from './targets.js'

const HAPROXY = '/usr/sbin/haproxy'

/**
 * The configuration for `port` in front of `backends` (loopback ports), as deploy/haproxy.cfg has it.
 * With `servedBy`, each answer names the server that gave it (`X-Served-By: i1`, the backends named
 * i1, i2, ... in order), for tests that must know which instance answered.
 */
export function haproxyConfig(port: number, backends: readonly number[], { servedBy = false }: { servedBy?: boolean } = {}): string {
  return [
    'global',
    '  maxconn 4096',
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    '  timeout client 30s',
    '  timeout server 30s',
    '  timeout tunnel 1h',
    '  option redispatch',
    '  retries 2',
    '  retry-on conn-failure',
    'frontend api',
    `  bind 127.0.0.1:${port}`,
    '  default_backend instances',
    'backend instances',
    '  balance roundrobin',
    '  option httpchk GET /healthz',
    '  http-check expect status 200',
    '  timeout check 2s',
    '  default-server inter 500ms fall 3 rise 1',
    ...(servedBy ? ['  http-response set-header X-Served-By %s'] : []),
    ...backends.map((p, i) => `  server i${i + 1} 127.0.0.1:${p} check`),
    ''
  ].join('\n')
}

/** Starts HAProxy on a free loopback port in front of `backends`; resolves with its address once it answers /healthz. */
export async function startHaproxy(t: Test, backends: readonly number[], options: { servedBy?: boolean } = {}): Promise<{ uri: string }> {
  if (!existsSync(HAPROXY))
    throw new Error(`HAProxy is not installed at ${HAPROXY} (apt-get install haproxy; scripts/prerequisites.sh does)`)
  const dir = mkdtempSync(join(tmpdir(), 'site-status-haproxy-'))
  const port = await freePort()
  const file = join(dir, 'haproxy.cfg')
  writeFileSync(file, haproxyConfig(port, backends, options))
  const child = spawn(HAPROXY, ['-db', '-f', file], { stdio: ['ignore', 'pipe', 'pipe'] })
  recordOutputOf(child.stdout)
  recordOutputOf(child.stderr)
  let exited = false
  child.once('exit', () => {
    exited = true
  })
  t.teardown(async () => {
    if (!exited) {
      const gone = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGKILL')
      await gone
    }
    rmSync(dir, { recursive: true, force: true })
  })
  const uri = `http://127.0.0.1:${port}`
  const status = await until(
    async () =>
      exited
        ? -1
        : await fetch(`${uri}/healthz`).then(
            (r) => r.status,
            () => 0
          ),
    (s) => s === 200 || s === -1,
    10_000
  )
  if (status !== 200) throw new Error(`HAProxy did not come up (last answer ${status})`)
  return { uri }
}
