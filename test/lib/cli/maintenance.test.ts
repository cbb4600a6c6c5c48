import t from 'tap'
import { addSites } from '../../../lib/monitoring/add-sites.js'
import { SiteStates } from '../../../lib/monitoring/state/site-state.js'
import { hasStackTrace, lines, runCli, spawnCli } from '../../helpers/cli.js'
import { engines, migratedDb } from '../../helpers/db.js'

const T0 = Date.parse('2026-11-20T12:00:00.000Z')

for (const engine of engines()) {
  t.test(`sites maintenance add, list and remove, on ${engine}`, async (t) => {
    const { db, url } = await migratedDb(engine, t)
    const env = { DATABASE_URL: url }
    await addSites({ db, entries: [{ domain: 'shop.example.com', name: 'Shop' }], now: new Date(T0) })
    // What a running server holds: it must see the CLI's windows without being told.
    const states = new SiteStates({ intervalMs: 60_000, publicUrl: 'https://status.example.net' })
    await states.refresh(db, new Date(T0))

    const oneOff = await spawnCli(
      [
        'sites',
        'maintenance',
        'add',
        'Shop.Example.com',
        '--from',
        '2026-11-20T13:00:00+01:00',
        '--to',
        '2026-11-20T13:00Z',
        '--reason',
        'upgrade'
      ],
      { env }
    )
    t.equal(oneOff.code, 0, 'the real command exits 0')
    t.match(oneOff.stdout, /^\d+\n$/, 'stdout is the id alone')
    t.equal(oneOff.stderr, 'maintenance window added to shop.example.com: 2026-11-20T12:00:00.000Z to 2026-11-20T13:00:00.000Z\n')
    const weekly = await runCli(
      [
        'sites',
        'maintenance',
        'add',
        'shop.example.com',
        '--weekly-day',
        'tue',
        '--time',
        '02:00',
        '--duration',
        '30',
        '--zone',
        'europe/berlin'
      ],
      { env }
    )
    t.equal(weekly.code, 0)
    t.equal(weekly.stderr, 'maintenance window added to shop.example.com: weekly tue 02:00 Europe/Berlin for 30 min\n')
    const [oneOffId, weeklyId] = [Number(oneOff.stdout), Number(weekly.stdout)]

    const list = await runCli(['sites', 'maintenance', 'list', 'shop.example.com'], { env })
    t.equal(list.code, 0)
    t.same(
      lines(list.stdout).map((l) => l.split(/ {2,}/)),
      [
        ['ID', 'WINDOW', 'REASON'],
        [String(oneOffId), '2026-11-20T12:00:00.000Z to 2026-11-20T13:00:00.000Z', 'upgrade'],
        [String(weeklyId), 'weekly tue 02:00 Europe/Berlin for 30 min', '-']
      ]
    )
    await states.refresh(db, new Date(T0 + 1))
    t.same(
      states.statusRecord('shop.example.com', new Date(T0 + 1))?.maintenance,
      { until: '2026-11-20T13:00:00.000Z', reason: 'upgrade' },
      "the server's state takes the CLI's window at its next refresh"
    )

    const removed = await runCli(['sites', 'maintenance', 'remove', 'shop.example.com', String(oneOffId)], { env })
    t.same([removed.code, removed.stdout], [0, `removed maintenance window ${oneOffId} of shop.example.com\n`])
    await states.refresh(db, new Date(T0 + 2))
    t.equal(states.statusRecord('shop.example.com', new Date(T0 + 2))?.maintenance, undefined, 'and its removal')
    const again = await runCli(['sites', 'maintenance', 'remove', 'shop.example.com', String(oneOffId)], { env })
    t.same([again.code, again.stderr], [1, `site-status: shop.example.com has no maintenance window ${oneOffId}\n`])
    t.equal(lines((await runCli(['sites', 'maintenance', 'list', 'shop.example.com'], { env })).stdout).length, 2, 'one left')
  })

  t.test(`sites maintenance refuses what the API refuses, naming the options, on ${engine}`, async (t) => {
    const { db, url } = await migratedDb(engine, t)
    const env = { DATABASE_URL: url }
    await addSites({ db, entries: [{ domain: 'shop.example.com', name: null }], now: new Date(T0) })
    const add = (...options: string[]) => runCli(['sites', 'maintenance', 'add', 'shop.example.com', ...options], { env })
    const weekly = ['--weekly-day', 'tue', '--time', '02:00', '--duration', '30', '--zone', 'UTC']
    const usage: Array<[string[], string]> = [
      [[], 'sites maintenance add needs either --from and --to, or --weekly-day, --time, --duration and --zone'],
      [['--from', '2026-12-01', '--to', '2026-12-02', ...weekly], 'sites maintenance add needs either --from and --to'],
      [['--from', '2026-12-01'], '--from and --to go together'],
      [['--from', '2026-12-02', '--to', '2026-12-01'], '--from must be before --to'],
      [['--from', '2026-12-01', '--to', '2027-01-02'], '--to must be at most 31 days after --from'],
      [['--from', 'tomorrow', '--to', '2026-12-01'], '--from must be an ISO 8601 date-time with a time zone'],
      [['--weekly-day', 'tuesday', ...weekly.slice(2)], '--weekly-day must be one of mon, tue, wed, thu, fri, sat, sun'],
      [[...weekly.slice(0, 6)], '--zone is required'],
      [[...weekly.slice(0, 5), '30m', ...weekly.slice(6)], '--duration must be a whole number of minutes from 1 to 10080'],
      [[...weekly.slice(0, 5), '0', ...weekly.slice(6)], '--duration must be a whole number of minutes from 1 to 10080'],
      [[...weekly.slice(0, 7), 'CET+1'], '--zone must be an IANA time zone'],
      [['--from', '2026-12-01', '--to', '2026-12-02', '--reason', ''], '--reason must be 1 to 200 printable characters'],
      [['--from', '2026-12-01', '--to', '2026-12-02', '--until', 'x'], "Unknown option '--until'"]
    ]
    for (const [options, message] of usage) {
      const res = await add(...options)
      t.equal(res.code, 2, `${options.join(' ')}: a usage error`)
      t.match(res.stderr, message, `${options.join(' ')}: says why`)
      t.equal(lines(res.stderr).length, 1, 'in one line')
      t.notOk(hasStackTrace(res.stderr))
    }
    const cases: Array<[string[], number, string]> = [
      [
        ['sites', 'maintenance', 'add', 'never.example.com', '--from', '2026-12-01', '--to', '2026-12-02'],
        1,
        'never.example.com is not tracked'
      ],
      [['sites', 'maintenance', 'add', 'localhost', '--from', '2026-12-01', '--to', '2026-12-02'], 1, 'fully qualified'],
      [['sites', 'maintenance', 'list', 'never.example.com'], 1, 'never.example.com is not tracked'],
      [['sites', 'maintenance', 'list'], 2, 'sites maintenance list needs one DOMAIN'],
      [['sites', 'maintenance', 'remove', 'shop.example.com', 'x'], 2, 'needs a DOMAIN and a window ID (a whole number)'],
      [['sites', 'maintenance', 'remove', 'never.example.com', '1'], 1, 'never.example.com is not tracked'],
      [['sites', 'maintenance'], 2, 'sites maintenance needs add, list or remove'],
      [['sites', 'maintenance', 'pause', 'shop.example.com'], 2, 'unknown sites maintenance command "pause"']
    ]
    for (const [args, code, message] of cases) {
      const res = await runCli(args, { env })
      t.equal(res.code, code, `${args.join(' ')}: exits ${code}`)
      t.match(res.stderr, message, `${args.join(' ')}: says why`)
    }
    t.equal(Number((await db('maintenance_windows').count({ n: '*' }).first())?.n), 0, 'nothing was stored')
    const help = await runCli(['sites', 'maintenance', '--help'], { env })
    t.equal(help.code, 0)
    t.match(help.stdout, /site-status sites maintenance add DOMAIN --weekly-day DAY --time HH:MM --duration MINUTES --zone ZONE/)
  })
}
