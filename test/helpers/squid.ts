import type { Test } from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort } from './targets.js'
import { holds } from './poll.js'

export const SQUID = '/usr/sbin/squid'
const SHIPPED = fileURLToPath(new URL('../../deploy/squid.conf', import.meta.url))

export interface Squid {
  port: number
  /** Squid's access log so far: one line per CONNECT, with its result. */
  log(): string
}

/**
 * Whether Debian's squid is here. CI installs it (`.ci/run`) and there its absence is a failure;
 * on a machine set up with the README's commands alone the squid tests are skipped, saying why.
 */
export function squidMissing(): string | null {
  if (existsSync(SQUID)) return null
  if (process.env.CI) throw new Error(`${SQUID} is missing: install Debian's squid (apt-get install -y squid; .ci/run does this)`)
  return `${SQUID} is missing (apt-get install -y squid): the real-proxy tests are skipped`
}

/**
 * Real Squid on a free loopback port, running the shipped deploy/squid.conf. Only what a test
 * machine needs is changed: the port, where it logs, its own hosts table (names only the proxy's
 * network knows), the loopback ports the test's servers listen on, and `exceptions`, addresses
 * that stand in for public sites (the test network has only loopback, which the config denies).
 */
export async function startSquid(
  t: Test,
  { hosts, ports, exceptions }: { hosts: Record<string, string>; ports: number[]; exceptions: string[] }
): Promise<Squid> {
  const dir = mkdtempSync(join(tmpdir(), 'squid-'))
  // Squid drops root for its own user, which must still write its logs and pid here.
  chmodSync(dir, 0o777)
  const port = await freePort()
  writeFileSync(
    join(dir, 'hosts'),
    Object.entries(hosts)
      .map(([name, ip]) => `${ip} ${name}\n`)
      .join('')
  )
  const shipped = readFileSync(SHIPPED, 'utf8')
  if (
    !/^http_port 3128$/m.test(shipped) ||
    !/^acl web_ports port 80 443$/m.test(shipped) ||
    !/^http_access deny nonpublic$/m.test(shipped)
  ) {
    throw new Error('deploy/squid.conf changed shape: update test/helpers/squid.ts')
  }
  const config =
    shipped
      .replace(/^http_port 3128$/m, `http_port 127.0.0.1:${port}`)
      .replace(/^acl web_ports port 80 443$/m, `acl web_ports port 80 443 ${ports.join(' ')}`)
      .replace(
        /^http_access deny nonpublic$/m,
        `acl test_sites dst ${exceptions.join(' ')}\nhttp_access allow CONNECT test_sites web_ports\nhttp_access deny nonpublic`
      ) +
    [
      `pid_filename ${join(dir, 'squid.pid')}`,
      `access_log stdio:${join(dir, 'access.log')}`,
      `cache_log ${join(dir, 'cache.log')}`,
      `hosts_file ${join(dir, 'hosts')}`,
      'dns_nameservers 127.0.0.1', // never asked: every name a test uses is in the hosts file
      'shutdown_lifetime 0 seconds',
      'coredump_dir none',
      ''
    ].join('\n')
  writeFileSync(join(dir, 'squid.conf'), config)
  const child: ChildProcess = spawn(SQUID, ['-N', '-f', join(dir, 'squid.conf')], { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr?.on('data', (c: Buffer) => {
    stderr += c.toString()
  })
  t.teardown(async () => {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGKILL')
      await exited
    }
    rmSync(dir, { recursive: true, force: true })
  })
  const accepting = () =>
    new Promise<boolean>((resolve) => {
      const s = net.connect({ host: '127.0.0.1', port }, () => {
        s.destroy()
        resolve(true)
      })
      s.on('error', () => {
        resolve(false)
      })
    })
  if (!(await holds(async () => child.exitCode === null && (await accepting()), 30_000))) {
    throw new Error(
      `squid did not start: ${stderr}${existsSync(join(dir, 'cache.log')) ? readFileSync(join(dir, 'cache.log'), 'utf8') : ''}`
    )
  }
  return { port, log: () => (existsSync(join(dir, 'access.log')) ? readFileSync(join(dir, 'access.log'), 'utf8') : '') }
}
