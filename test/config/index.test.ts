import t, { type Test } from 'tap'
import { hostname } from 'node:os'
import { join, resolve } from 'node:path'
import { ConfigError, loadConfig, parseConnectTo, type Config, type ConnectToRule } from '../../config/index.js'

const VARIABLES = [
  'PORT',
  'HOST',
  'PUBLIC_URL',
  'DATABASE_URL',
  'LOCATIONS',
  'CHECK_INTERVAL_S',
  'CHECK_RETENTION_DAYS',
  'PROBE_TIMEOUT_MS',
  'CACHE_TTL_S',
  'RATE_LIMIT_PER_MIN',
  'ALLOW_PRIVATE_TARGETS',
  'CONNECT_TO',
  'LOG_LEVEL',
  'LOG_FORMAT',
  'DNS_SERVERS',
  'MAX_CHECKS_IN_FLIGHT',
  'MAX_KEY_SHARE',
  'DENY_TARGETS',
  'TRUSTED_PROXIES',
  'WEBHOOK_KEY',
  'INSTANCE_ID',
  'REDIS_URL',
  'METRICS_TOKEN'
]

/** Runs loadConfig on a bad env and returns the ConfigError's message (fails the test when it does not throw one). */
function configError(t: Test, env: Record<string, string>): string {
  try {
    loadConfig(env)
  } catch (err) {
    t.type(err, ConfigError, 'throws a ConfigError')
    t.equal((err as Error).name, 'ConfigError')
    return (err as Error).message
  }
  t.fail(`loadConfig(${JSON.stringify(env)}) did not throw`)
  return ''
}

/** Variables the message names, as `NAME:` at the start of a problem. */
function named(message: string): string[] {
  return VARIABLES.filter((v) => new RegExp(`(^|[ ;:])${v}:`).test(message))
}

function isOneLine(message: string): boolean {
  return !/[\r\n\u2028\u2029]/.test(message)
}

const direct = (label: string): { label: string; proxy: null; resolve: 'local' } => ({ label, proxy: null, resolve: 'local' })

t.test('an empty environment gives the documented defaults', async (t) => {
  const c = loadConfig({})
  t.strictSame(
    { ...c, locations: [...c.locations], connectTo: [...c.connectTo], dnsServers: [...c.dnsServers] },
    {
      port: 3000,
      host: '127.0.0.1',
      publicUrl: 'http://127.0.0.1:3000',
      publicUrlSet: false,
      databaseUrl: 'sqlite:data/site-status.sqlite',
      locations: [direct('Local 1, Local'), direct('Local 2, Local'), direct('Local 3, Local')],
      checkIntervalS: 60,
      checkRetentionDays: 35,
      probeTimeoutMs: 10000,
      cacheTtlS: 60,
      rateLimitPerMin: 60,
      allowPrivateTargets: false,
      allowedTargetRanges: [],
      deniedTargetRanges: [],
      connectTo: [],
      logLevel: 'info',
      logFormat: null,
      dnsServers: [],
      maxChecksInFlight: 4000,
      maxKeyShare: 0.5,
      webhookKey: null,
      webhookKeyFile: resolve('data/webhook.key'),
      instanceId: `${hostname()}:${process.pid}`,
      redisUrl: null,
      metricsToken: null,
      nats: null,
      trustedProxies: []
    }
  )
})

t.test('the configuration is frozen all the way down', async (t) => {
  const c = loadConfig({ CONNECT_TO: 'example.com:443:127.0.0.1:8443' })
  t.ok(Object.isFrozen(c), 'the object')
  t.ok(Object.isFrozen(c.locations), 'the locations array')
  t.ok(
    c.locations.every((l) => Object.isFrozen(l)),
    'each location'
  )
  t.ok(Object.isFrozen(c.connectTo), 'the connectTo array')
  t.ok(
    c.connectTo.every((r) => Object.isFrozen(r)),
    'each connectTo rule'
  )
  t.throws(
    () => {
      ;(c as { port: number }).port = 1
    },
    TypeError,
    'assigning a field throws in strict mode'
  )
  t.throws(() => {
    ;(c.locations[0] as { label: string }).label = 'Hacked 1, Nowhere'
  }, TypeError)
  t.equal(loadConfig({}).locations[0]?.label, 'Local 1, Local', 'the defaults are not shared mutable state')
})

t.test('the environment is read from process.env when no argument is given', async (t) => {
  const saved = process.env.CHECK_INTERVAL_S
  process.env.CHECK_INTERVAL_S = '17'
  t.teardown(() => {
    if (saved === undefined) delete process.env.CHECK_INTERVAL_S
    else process.env.CHECK_INTERVAL_S = saved
  })
  t.equal(loadConfig().checkIntervalS, 17)
})

t.test('good values of each variable are taken and converted', async (t) => {
  const cases: Array<[string, Record<string, string>, Partial<Config>]> = [
    ['PORT', { PORT: '8080' }, { port: 8080 }],
    ['HOST', { HOST: '0.0.0.0' }, { host: '0.0.0.0' }],
    ['an IPv6 HOST', { HOST: '::' }, { host: '::' }],
    ['a host name HOST', { HOST: 'status-1.internal' }, { host: 'status-1.internal' }],
    ['a single-label HOST', { HOST: 'localhost' }, { host: 'localhost' }],
    [
      'a mysql DATABASE_URL without a port',
      { DATABASE_URL: 'mysql://u@db.internal/site_status' },
      { databaseUrl: 'mysql://u@db.internal/site_status' }
    ],
    ['a mysql DATABASE_URL', { DATABASE_URL: 'mysql://u:p@db:3306/site' }, { databaseUrl: 'mysql://u:p@db:3306/site' }],
    ['a sqlite DATABASE_URL', { DATABASE_URL: 'sqlite::memory:' }, { databaseUrl: 'sqlite::memory:' }],
    ['CHECK_INTERVAL_S', { CHECK_INTERVAL_S: '300' }, { checkIntervalS: 300 }],
    ['CHECK_RETENTION_DAYS', { CHECK_RETENTION_DAYS: '90' }, { checkRetentionDays: 90 }],
    ['PROBE_TIMEOUT_MS', { PROBE_TIMEOUT_MS: '2500' }, { probeTimeoutMs: 2500 }],
    ['CACHE_TTL_S of 0', { CACHE_TTL_S: '0' }, { cacheTtlS: 0 }],
    ['RATE_LIMIT_PER_MIN', { RATE_LIMIT_PER_MIN: '600' }, { rateLimitPerMin: 600 }],
    ['LOG_LEVEL', { LOG_LEVEL: 'debug' }, { logLevel: 'debug' }],
    ['LOG_FORMAT pretty', { LOG_FORMAT: 'pretty' }, { logFormat: 'pretty' }],
    ['LOG_FORMAT json', { LOG_FORMAT: 'json' }, { logFormat: 'json' }],
    ['an empty LOG_FORMAT: chosen by the terminal', { LOG_FORMAT: '' }, { logFormat: null }],
    [
      'DNS_SERVERS',
      { DNS_SERVERS: '10.0.0.2, 10.0.0.3:5353,[fd00::53]:53,fd00::54' },
      { dnsServers: ['10.0.0.2', '10.0.0.3:5353', '[fd00::53]:53', 'fd00::54'] }
    ],
    ['an empty DNS_SERVERS', { DNS_SERVERS: '' }, { dnsServers: [] }],
    ['MAX_CHECKS_IN_FLIGHT', { MAX_CHECKS_IN_FLIGHT: '20000' }, { maxChecksInFlight: 20000 }],
    ['MAX_KEY_SHARE', { MAX_KEY_SHARE: '0.25' }, { maxKeyShare: 0.25 }],
    ['MAX_KEY_SHARE of 1', { MAX_KEY_SHARE: '1' }, { maxKeyShare: 1 }],
    [
      'DENY_TARGETS',
      { DENY_TARGETS: '203.0.113.0/24, 2001:db8::/32,198.51.100.7' },
      { deniedTargetRanges: ['203.0.113.0/24', '2001:db8::/32', '198.51.100.7'] }
    ],
    ['TRUSTED_PROXIES', { TRUSTED_PROXIES: '10.0.0.0/8, 127.0.0.1' }, { trustedProxies: ['10.0.0.0/8', '127.0.0.1'] }],
    ['no TRUSTED_PROXIES', {}, { trustedProxies: [] }],
    ['ALLOW_PRIVATE_TARGETS=1', { ALLOW_PRIVATE_TARGETS: '1' }, { allowPrivateTargets: true }],
    ['ALLOW_PRIVATE_TARGETS=true', { ALLOW_PRIVATE_TARGETS: 'true' }, { allowPrivateTargets: true }],
    ['ALLOW_PRIVATE_TARGETS=0', { ALLOW_PRIVATE_TARGETS: '0' }, { allowPrivateTargets: false }],
    ['ALLOW_PRIVATE_TARGETS=false', { ALLOW_PRIVATE_TARGETS: 'false' }, { allowPrivateTargets: false }],
    [
      'ALLOW_PRIVATE_TARGETS as CIDR ranges',
      { ALLOW_PRIVATE_TARGETS: '10.20.0.0/16, 127.0.0.2/32,fd00::/8,192.168.1.7' },
      { allowPrivateTargets: false, allowedTargetRanges: ['10.20.0.0/16', '127.0.0.2/32', 'fd00::/8', '192.168.1.7'] }
    ],
    ['WEBHOOK_KEY', { WEBHOOK_KEY: Buffer.alloc(32, 9).toString('base64') }, { webhookKey: Buffer.alloc(32, 9) }],
    ['REDIS_URL', { REDIS_URL: 'redis://127.0.0.1:6379/3' }, { redisUrl: 'redis://127.0.0.1:6379/3' }],
    [
      'REDIS_URL with a password, over TLS',
      { REDIS_URL: 'rediss://:s3cret@cache.internal:6380/0' },
      { redisUrl: 'rediss://:s3cret@cache.internal:6380/0' }
    ],
    ['METRICS_TOKEN', { METRICS_TOKEN: 'a1b2c3d4e5f6a7b8-~!' }, { metricsToken: 'a1b2c3d4e5f6a7b8-~!' }],
    ['an empty METRICS_TOKEN is unset', { METRICS_TOKEN: '' }, { metricsToken: null }],
    ['INSTANCE_ID', { INSTANCE_ID: 'web-1' }, { instanceId: 'web-1' }],
    ['REDIS_URL', { REDIS_URL: 'redis://10.0.0.7:6379/2' }, { redisUrl: 'redis://10.0.0.7:6379/2' }],
    ['REDIS_URL over TLS', { REDIS_URL: 'rediss://cache.internal:6380/0' }, { redisUrl: 'rediss://cache.internal:6380/0' }],
    ['an empty REDIS_URL', { REDIS_URL: '' }, { redisUrl: null }],
    [
      'the webhook key file beside a SQLite file',
      { DATABASE_URL: 'sqlite:/var/lib/site-status/db.sqlite' },
      { webhookKeyFile: '/var/lib/site-status/webhook.key' }
    ],
    [
      'the webhook key file under data/ for MySQL',
      { DATABASE_URL: 'mysql://u:p@db:3306/site' },
      { webhookKeyFile: resolve('data/webhook.key') }
    ]
  ]
  for (const [title, env, expected] of cases) {
    t.test(`${title} is accepted`, async (t) => {
      const c = loadConfig(env)
      for (const [key, value] of Object.entries(expected)) t.strictSame(c[key as keyof Config], value, key)
    })
  }
})

t.test('PUBLIC_URL', async (t) => {
  const cases: Array<[string, Record<string, string>, string]> = [
    ['defaults to HOST and PORT', { HOST: '10.1.2.3', PORT: '8081' }, 'http://10.1.2.3:8081'],
    ['defaults to a host name', { HOST: 'status.internal' }, 'http://status.internal:3000'],
    ['puts brackets around an IPv6 HOST', { HOST: '::1', PORT: '4000' }, 'http://[::1]:4000'],
    ['is taken as given', { PUBLIC_URL: 'https://status.example.com' }, 'https://status.example.com'],
    [
      'is preferred over HOST and PORT',
      { PUBLIC_URL: 'https://status.example.com', HOST: '0.0.0.0', PORT: '9000' },
      'https://status.example.com'
    ],
    ['loses a trailing slash', { PUBLIC_URL: 'https://status.example.com/' }, 'https://status.example.com'],
    ['loses several trailing slashes', { PUBLIC_URL: 'https://status.example.com//' }, 'https://status.example.com'],
    ['keeps a base path without its trailing slash', { PUBLIC_URL: 'https://example.com/status/' }, 'https://example.com/status']
  ]
  for (const [title, env, expected] of cases) {
    t.test(title, async (t) => {
      t.equal(loadConfig(env).publicUrl, expected)
    })
  }
})

t.test('LOCATIONS', async (t) => {
  const frankfurt = { label: 'Frankfurt 1, Germany', proxy: 'http://10.0.0.5:3128' }
  const ashburn = { label: 'Ashburn 1, United States', proxy: 'https://proxy.example.net:8443' }
  const direct1 = { label: 'Paris 1, France' }
  const expected = [
    { ...frankfurt, resolve: 'local' },
    { ...ashburn, resolve: 'local' },
    { label: 'Paris 1, France', proxy: null, resolve: 'local' }
  ]
  const json = JSON.stringify([frankfurt, ashburn, direct1])
  const dir = t.testdir({ 'locations.json': json, 'broken.json': '[{"label":' })

  t.test('is read from inline JSON, with and without a proxy', async (t) => {
    t.strictSame([...loadConfig({ LOCATIONS: json }).locations], expected)
  })

  t.test('is read from inline JSON with surrounding white space', async (t) => {
    t.strictSame([...loadConfig({ LOCATIONS: `  ${json}\n` }).locations], expected)
  })

  t.test('is read from a path to a JSON file', async (t) => {
    t.strictSame([...loadConfig({ LOCATIONS: join(dir, 'locations.json') }).locations], expected)
  })

  t.test('an explicit null proxy means direct', async (t) => {
    t.strictSame(
      [...loadConfig({ LOCATIONS: '[{"label":"Oslo 2, Norway","proxy":null}]' }).locations],
      [{ label: 'Oslo 2, Norway', proxy: null, resolve: 'local' }]
    )
  })

  t.test('resolve: "proxy" lets the proxy resolve; anything else is refused', async (t) => {
    const located = loadConfig({ LOCATIONS: '[{"label":"Oslo 2, Norway","proxy":"http://10.0.0.5:3128","resolve":"proxy"}]' }).locations
    t.strictSame([...located], [{ label: 'Oslo 2, Norway', proxy: 'http://10.0.0.5:3128', resolve: 'proxy' }])
    const message = configError(t, { LOCATIONS: '[{"label":"Oslo 2, Norway","proxy":"http://10.0.0.5:3128","resolve":"remote"}]' })
    t.strictSame(named(message), ['LOCATIONS'])
    t.match(message, /resolve/)
  })

  t.test('a file holding invalid JSON is refused naming LOCATIONS', async (t) => {
    const message = configError(t, { LOCATIONS: join(dir, 'broken.json') })
    t.strictSame(named(message), ['LOCATIONS'])
    t.match(message, /JSON/)
  })
})

t.test('bad values produce a one-line ConfigError naming the variable', async (t) => {
  const cases: Array<[string, string, RegExp?]> = [
    ['PORT', 'abc'],
    ['PORT', '-1'],
    ['PORT', '70000'],
    ['PORT', '80.5'],
    ['HOST', ''],
    ['HOST', '   '],
    ['HOST', 'not a host', /IP address or a host name/],
    ['HOST', 'http://0.0.0.0', /IP address or a host name/],
    ['HOST', '0.0.0.0:3000', /IP address or a host name/],
    ['HOST', '[::1]', /IP address or a host name/],
    ['HOST', 'bad_name.internal', /IP address or a host name/],
    ['HOST', '-lead.example.com', /IP address or a host name/],
    ['HOST', 'a..b', /IP address or a host name/],
    ['HOST', `${'a'.repeat(64)}.example.com`, /IP address or a host name/],
    ['PUBLIC_URL', 'not a URL'],
    ['PUBLIC_URL', 'ftp://x'],
    ['DATABASE_URL', 'postgres://x'],
    ['DNS_SERVERS', 'dns.google', /IP address with an optional port/],
    ['DNS_SERVERS', '10.0.0.2:0', /not a port number/],
    ['DNS_SERVERS', '10.0.0.2:99999', /not a port number/],
    ['DNS_SERVERS', '[fd00::53', /IP address with an optional port/],
    ['DNS_SERVERS', '10.0.0.300', /IP address with an optional port/],
    ['MAX_CHECKS_IN_FLIGHT', '1'],
    ['DENY_TARGETS', '10.0.0.0/33', /comma-separated list of CIDR ranges/],
    ['TRUSTED_PROXIES', 'the proxy', /comma-separated list of CIDR ranges/],
    ['DENY_TARGETS', 'intranet', /comma-separated list of CIDR ranges/],
    ['MAX_CHECKS_IN_FLIGHT', 'many'],
    ['MAX_KEY_SHARE', '0'],
    ['MAX_KEY_SHARE', '1.5'],
    ['DATABASE_URL', ''],
    ['DATABASE_URL', 'sqlite:'],
    ['DATABASE_URL', 'mysql://u:p@db:3306', /must name the database/],
    ['DATABASE_URL', 'mysql://u:p@db:3306/', /must name the database/],
    ['DATABASE_URL', 'mysql://u:p@db/site/extra', /must name the database/],
    ['DATABASE_URL', 'mysql://u:p@:3306/site'],
    ['LOCATIONS', '[{"label":', /JSON/],
    ['LOCATIONS', '{"label":"Frankfurt 1, Germany"}', /array/],
    ['LOCATIONS', '[]'],
    ['LOCATIONS', ''],
    ['LOCATIONS', '[{"label":"Frankfurt"}]', /City 1, Country/],
    ['LOCATIONS', '[{"label":"Frankfurt, Germany"}]', /City 1, Country/],
    ['LOCATIONS', '[{"label":"Frankfurt 1 Germany"}]', /City 1, Country/],
    ['LOCATIONS', '[{"label":"Frankfurt 1, Germany, Europe"}]', /City 1, Country/],
    ['LOCATIONS', '[{"label":"Frankfurt\\n1, Germany"}]', /City 1, Country/],
    ['LOCATIONS', '[{"proxy":"http://10.0.0.5:3128"}]', /label/],
    ['LOCATIONS', '[{"label":"Frankfurt 1, Germany"},{"label":"Frankfurt 1, Germany"}]', /duplicate/],
    ['LOCATIONS', '[{"label":"Frankfurt 1, Germany","proxy":"not a url"}]', /proxy/],
    ['LOCATIONS', '[{"label":"Frankfurt 1, Germany","proxy":"socks5://10.0.0.5:1080"}]', /proxy/],
    ['LOCATIONS', '[{"label":"Frankfurt 1, Germany","region":"eu"}]', /region/],
    ['LOCATIONS', '/nonexistent/site-status/locations.json', /ENOENT/],
    ['CHECK_INTERVAL_S', '0'],
    ['CHECK_INTERVAL_S', 'abc'],
    ['CHECK_RETENTION_DAYS', '0'],
    ['PROBE_TIMEOUT_MS', '0'],
    ['PROBE_TIMEOUT_MS', 'soon'],
    ['CACHE_TTL_S', '-1'],
    ['RATE_LIMIT_PER_MIN', '0'],
    ['RATE_LIMIT_PER_MIN', '1.5'],
    ['ALLOW_PRIVATE_TARGETS', 'yes'],
    ['ALLOW_PRIVATE_TARGETS', '10.0.0.0/33', /CIDR/],
    ['ALLOW_PRIVATE_TARGETS', '10.0.0.0/8,intranet', /CIDR/],
    ['CONNECT_TO', 'example.com:443:127.0.0.1', /HOST1:PORT1:HOST2:PORT2/],
    ['CONNECT_TO', 'example.com:443', /HOST1:PORT1:HOST2:PORT2/],
    ['CONNECT_TO', 'example.com:443:127.0.0.1:8443:9', /HOST1:PORT1:HOST2:PORT2/],
    ['CONNECT_TO', 'example.com:443:127.0.0.1:99999', /99999/],
    ['CONNECT_TO', 'example.com:https:127.0.0.1:8443', /https/],
    ['CONNECT_TO', 'example.com:443:127.0.0.1:0', /port/],
    ['CONNECT_TO', 'a.test:80:b.test:8080\nc.test:80:d.test:8080'],
    ['LOG_LEVEL', 'verbose'],
    ['LOG_FORMAT', 'text', /json, pretty/],
    ['LOG_FORMAT', 'PRETTY'],
    ['WEBHOOK_KEY', '', /must not be empty/],
    ['WEBHOOK_KEY', Buffer.alloc(31, 7).toString('base64'), /base64 of exactly 32 bytes/],
    ['WEBHOOK_KEY', Buffer.alloc(33, 7).toString('base64'), /base64 of exactly 32 bytes/],
    ['WEBHOOK_KEY', 'not base64 at all, and not 32 bytes!!!!!!!!!', /base64 of exactly 32 bytes/],
    ['REDIS_URL', 'http://127.0.0.1:6379/0', /redis:\/\/host:port\/db/],
    ['REDIS_URL', 'redis://127.0.0.1:6379', /redis:\/\/host:port\/db/],
    ['REDIS_URL', 'redis://127.0.0.1:6379/cache', /redis:\/\/host:port\/db/],
    ['REDIS_URL', 'not a url', /redis:\/\/host:port\/db/],
    ['METRICS_TOKEN', 'short-token', /16 to 512 printable characters/],
    ['METRICS_TOKEN', 'has a space inside it somewhere', /without spaces/],
    ['METRICS_TOKEN', 'x'.repeat(513), /16 to 512/],
    ['INSTANCE_ID', 'web 1', /printable ASCII without spaces/],
    ['INSTANCE_ID', 'x'.repeat(192)],
    ['REDIS_URL', 'http://cache:6379', /redis:\/\/host:port\/db/],
    ['REDIS_URL', 'cache:6379', /redis:\/\/host:port\/db/]
  ]
  for (const [variable, value, detail] of cases) {
    t.test(`${variable}=${JSON.stringify(value)} is refused`, async (t) => {
      const message = configError(t, { [variable]: value })
      t.ok(isOneLine(message), `one line: ${JSON.stringify(message)}`)
      t.strictSame(named(message), [variable], 'names that variable and no other')
      if (detail) t.match(message, detail)
    })
  }
})

t.test('several bad variables are all named in one line', async (t) => {
  const env = {
    PORT: 'abc',
    PUBLIC_URL: 'ftp://x',
    LOCATIONS: '[]',
    RATE_LIMIT_PER_MIN: '0',
    CONNECT_TO: 'nonsense',
    LOG_LEVEL: 'verbose'
  }
  const message = configError(t, env)
  t.ok(isOneLine(message), `one line: ${JSON.stringify(message)}`)
  t.strictSame(named(message).sort(), Object.keys(env).sort())
})

t.test('a refused REDIS_URL, password and all, is not repeated in the error', async (t) => {
  const message = configError(t, { REDIS_URL: 'redis://:hunter2-secret@cache.internal:6379/cache' })
  t.notMatch(message, 'hunter2', 'the password stays out of the message')
  t.notMatch(message, 'cache.internal', 'and so does the rest of the URL')
})

t.test('a refused WEBHOOK_KEY is not repeated in the error', async (t) => {
  const key = Buffer.alloc(31, 7).toString('base64')
  const message = configError(t, { WEBHOOK_KEY: key })
  t.notMatch(message, key.slice(0, 20), 'the key text stays out of the message')
})

t.test('a good variable beside a bad one is not blamed', async (t) => {
  const message = configError(t, { PORT: '8080', LOG_LEVEL: 'verbose', CONNECT_TO: 'example.com:443:127.0.0.1:8443' })
  t.strictSame(named(message), ['LOG_LEVEL'])
})

t.test('CONNECT_TO follows curl --connect-to', async (t) => {
  const rule = (host1: string | null, port1: number | null, host2: string | null, port2: number | null): ConnectToRule => ({
    host1,
    port1,
    host2,
    port2
  })
  const cases: Array<[string, string, ConnectToRule[]]> = [
    ['a full entry', 'example.com:443:127.0.0.1:8443', [rule('example.com', 443, '127.0.0.1', 8443)]],
    ['an empty HOST1 matching any host', ':443:127.0.0.1:8443', [rule(null, 443, '127.0.0.1', 8443)]],
    ['an empty PORT1 matching any port', 'example.com::127.0.0.1:8443', [rule('example.com', null, '127.0.0.1', 8443)]],
    ['an empty HOST2 keeping the original host', 'example.com:443::8443', [rule('example.com', 443, null, 8443)]],
    ['an empty PORT2 keeping the original port', 'example.com:443:127.0.0.1:', [rule('example.com', 443, '127.0.0.1', null)]],
    ['both HOST2 and PORT2 empty', 'example.com:443::', [rule('example.com', 443, null, null)]],
    ['a bracketed IPv6 HOST2', 'example.com:443:[::1]:8443', [rule('example.com', 443, '::1', 8443)]],
    ['a bracketed IPv6 HOST1', '[2001:db8::1]:80:127.0.0.1:8080', [rule('2001:db8::1', 80, '127.0.0.1', 8080)]],
    ['an upper-case host, lower-cased', 'Example.COM:443:LoopBack.Test:8443', [rule('example.com', 443, 'loopback.test', 8443)]],
    [
      'several entries, in order',
      'b.test:443:127.0.0.1:1,a.test:80:127.0.0.2:2,:443:127.0.0.3:3',
      [rule('b.test', 443, '127.0.0.1', 1), rule('a.test', 80, '127.0.0.2', 2), rule(null, 443, '127.0.0.3', 3)]
    ],
    [
      'spaces around entries and empty entries',
      '  a.test:443:127.0.0.1:8443 ,, b.test:80:127.0.0.1:8080  ',
      [rule('a.test', 443, '127.0.0.1', 8443), rule('b.test', 80, '127.0.0.1', 8080)]
    ],
    ['an empty value', '', []],
    ['only spaces and commas', ' , ', []]
  ]
  for (const [title, raw, expected] of cases) {
    t.test(`${title}: ${JSON.stringify(raw)}`, async (t) => {
      t.strictSame(parseConnectTo(raw), expected, 'parseConnectTo')
      t.strictSame([...loadConfig({ CONNECT_TO: raw }).connectTo], expected, 'loadConfig')
    })
  }

  t.test('parseConnectTo throws a ConfigError naming CONNECT_TO and the whole entry', async (t) => {
    t.throws(() => parseConnectTo('ok.test:443:127.0.0.1:8443,example.com:443:127.0.0.1'), {
      name: 'ConfigError',
      message: 'CONNECT_TO: "example.com:443:127.0.0.1" must look like HOST1:PORT1:HOST2:PORT2'
    })
    t.throws(() => parseConnectTo('example.com:443:127.0.0.1:99999'), ConfigError)
  })
})

t.test('a refused mysql DATABASE_URL is not repeated, since it may hold a password', async (t) => {
  for (const url of ['mysql://user:s3cret-pw@db:3306', 'mysql://user:s3cret-pw@:3306/site']) {
    const message = configError(t, { DATABASE_URL: url })
    t.strictSame(named(message), ['DATABASE_URL'])
    t.notMatch(message, /s3cret-pw/, 'the password is not in the message')
  }
})

t.test('a refused METRICS_TOKEN is not repeated in the error', async (t) => {
  const token = 'secret but spaced out'
  const message = configError(t, { METRICS_TOKEN: token })
  t.notOk(message.includes(token), message)
})

t.test('agent locations and NATS_URL', async (t) => {
  const agents = JSON.stringify([{ label: 'Local 1, Local' }, { label: 'Frankfurt 1, Germany', agent: 'fra1' }])
  const c = loadConfig({ LOCATIONS: agents, NATS_URL: 'nats://central:s%40cret@10.0.0.9:4222,nats://central:s%40cret@10.0.0.10' })
  t.strictSame(
    c.locations[1],
    { label: 'Frankfurt 1, Germany', proxy: null, resolve: 'local', agent: 'fra1' },
    'a location may name its agent'
  )
  t.strictSame(
    c.nats,
    { servers: ['10.0.0.9:4222', '10.0.0.10:4222'], tls: false, user: 'central', pass: 's@cret', token: null, credentialsFile: null },
    'a cluster, one user'
  )
  t.match(loadConfig({ NATS_URL: 'tls://t0ken@nats.internal:4443' }).nats, {
    servers: ['nats.internal:4443'],
    tls: true,
    token: 't0ken',
    user: null
  })
  const seed = join(t.testdir({ 'agent.nk': 'SUAEXAMPLE\n' }), 'agent.nk')
  t.match(loadConfig({ NATS_URL: 'nats://127.0.0.1:4222', NATS_CREDENTIALS: seed }).nats, { credentialsFile: seed, user: null })

  const refused: Array<[string, Record<string, string>, RegExp]> = [
    [
      'an agent location without NATS_URL',
      { LOCATIONS: agents },
      /^invalid configuration: NATS_URL: required when a location names an agent$/
    ],
    [
      'an agent name that cannot be a subject',
      { LOCATIONS: '[{"label":"Paris 1, France","agent":"Par.1"}]', NATS_URL: 'nats://n:4222' },
      /LOCATIONS: .*agent "Par\.1" must be/
    ],
    [
      'an agent beside a proxy',
      { LOCATIONS: '[{"label":"Paris 1, France","agent":"par1","proxy":"http://p:3128"}]', NATS_URL: 'nats://n:4222' },
      /LOCATIONS: /
    ],
    ['a URL of another scheme', { NATS_URL: 'http://central:pw@nats:4222' }, /^invalid configuration: NATS_URL: must be nats:\/\//],
    [
      'servers with different credentials',
      { NATS_URL: 'nats://a:b@n1,nats://a:c@n2' },
      /NATS_URL: every server must use the same scheme and credentials/
    ],
    [
      'a credentials file that is not there',
      { NATS_URL: 'nats://n:4222', NATS_CREDENTIALS: '/nonexistent/agent.creds' },
      /NATS_CREDENTIALS: no such file/
    ],
    ['credentials beside a user', { NATS_URL: 'nats://u:p@n:4222', NATS_CREDENTIALS: seed }, /NATS_CREDENTIALS: give either it or a user/]
  ]
  for (const [title, env, message] of refused) {
    t.throws(() => loadConfig(env), { name: 'ConfigError', message }, title)
  }
  let error: unknown
  try {
    loadConfig({ NATS_URL: 'http://central:hunter2@nats:4222' })
  } catch (err) {
    error = err
  }
  t.notMatch((error as Error).message, /hunter2/, 'a refused URL is not repeated')
})
