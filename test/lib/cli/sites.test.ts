import { join } from 'node:path'
import t from 'tap'
import { toDate } from '../../../lib/store/db.js'
import { addSites } from '../../../lib/monitoring/add-sites.js'
import { hasStackTrace, lines, runCli, spawnCli } from '../../helpers/cli.js'
import { engines, migratedDb } from '../../helpers/db.js'

const BOOKS = 'xn--bcher-kva.de'
const IMPORT_DOMAIN = (i: number): string => `site${i}.import-test.com`

/** Four of the import's 500-site batches (bench/import times 10,000). */
const IMPORT_LINES = 2000

/** An import file of IMPORT_LINES sites with comments, blank lines, duplicates, names and four bad lines. */
function bigImportFile(): { text: string; bad: string[] } {
  const out: string[] = ['# sites to import', '']
  const bad: string[] = []
  const rejects: Record<number, [string, string]> = {
    10: ['localhost', 'domain must be a fully qualified name such as example.com'],
    500: ['127.0.0.1', 'domain must be a hostname, not an IP address'],
    1000: ['example.com:8080', 'domain must not include a port'],
    1999: [
      'bad_domain!.com,Bad',
      'domain may contain only letters, digits, hyphens and dots; labels must not be empty or start or end with a hyphen'
    ]
  }
  for (let i = 0; i < IMPORT_LINES; i++) {
    out.push(i % 1000 === 0 ? `${IMPORT_DOMAIN(i)},Site number ${i}` : IMPORT_DOMAIN(i))
    const reject = rejects[i]
    if (reject) {
      out.push(reject[0])
      bad.push(`line ${out.length}: ${reject[1]}`)
    }
    if (i === 20) out.push('SITE5.IMPORT-TEST.COM', '', '   # an indented comment', `https://${IMPORT_DOMAIN(6)}/`)
  }
  return { text: out.join('\n') + '\n', bad }
}

for (const engine of engines()) {
  t.test(`sites commands on ${engine}`, async (t) => {
    const { db, url } = await migratedDb(engine, t)
    const env = { DATABASE_URL: url }
    const siteRow = async (domain: string): Promise<Record<string, unknown> | undefined> => db('sites').where({ domain }).first()
    const siteCount = async (): Promise<number> => Number((await db('sites').count({ n: '*' }))[0]?.n)
    const listed = async (): Promise<string[][]> => lines((await runCli(['sites', 'list'], { env })).stdout).map((l) => l.split(/ {2,}/))

    t.test('sites add normalises the domain and prints it on stdout', async (t) => {
      const res = await spawnCli(['sites', 'add', 'HTTPS://Bücher.DE/', '--name', 'Books'], { env })
      t.equal(res.code, 0, 'exits 0')
      t.equal(res.stdout, `${BOOKS}\n`, 'stdout is the normalised domain alone')
      t.equal(res.stderr, 'now tracking\n', 'stderr says it is now tracked')
      const row = await siteRow(BOOKS)
      t.match(row, { name: 'Books', removed_at: null, status: 'unavailable' }, 'the site is stored, tracked, not yet checked')

      const again = await runCli(['sites', 'add', 'bücher.de'], { env })
      t.same([again.code, again.stdout, again.stderr], [0, `${BOOKS}\n`, 'already tracked\n'], 'adding it again says already tracked')
      t.equal((await siteRow(BOOKS))?.name, 'Books', 'without --name the name is kept')
      t.equal(await siteCount(), 1, 'no second row')
    })

    t.test('sites add refuses what is not a public domain name', async (t) => {
      const cases: Array<[string, RegExp]> = [
        ['localhost', /fully qualified name/],
        ['127.0.0.1', /not an IP address/],
        ['example.com:8080', /must not include a port/],
        ['ftp://example.com', /http:\/\/ or https:\/\//],
        ['https://example.com/path', /must not include a path/],
        ['exa mple.com', /may contain only letters/]
      ]
      for (const [domain, message] of cases) {
        const res = await runCli(['sites', 'add', domain], { env })
        t.equal(res.code, 1, `${domain}: exits 1`)
        t.equal(res.stdout, '', `${domain}: nothing on stdout`)
        t.equal(lines(res.stderr).length, 1, `${domain}: one stderr line`)
        t.match(res.stderr, message, `${domain}: says why`)
      }
      const badName = await runCli(['sites', 'add', 'named.example.com', '--name', 'a\u0007b'], { env })
      t.equal(badName.code, 2, 'a --name with a control character is a usage error')
      t.match(badName.stderr, /--name must be 1 to 200 printable characters/)
      t.equal(await siteCount(), 1, 'nothing was stored')
    })

    t.test('sites list, remove and add again', async (t) => {
      await db('sites')
        .where({ domain: BOOKS })
        .update({ status: 'down', blocked: true, partial: true, response_ms: 123.4, checked_at: new Date() })
      const list = await spawnCli(['sites', 'list'], { env })
      t.equal(list.code, 0, 'list exits 0')
      const table = lines(list.stdout).map((l) => l.split(/ {2,}/))
      t.same(table[0], ['DOMAIN', 'NAME', 'STATUS', 'RESPONSE_MS', 'CHECKED_AT', 'SETTINGS'], 'the header names the columns')
      t.same(table[1]?.slice(0, 4), [BOOKS, 'Books', 'down (blocked) (partial)', '123'], 'the site shows its current status')

      const remove = await spawnCli(['sites', 'remove', 'bücher.de'], { env })
      t.equal(remove.code, 0, 'remove exits 0')
      t.equal(remove.stdout, `stopped tracking ${BOOKS} (its history is kept)\n`, 'remove confirms')
      t.same(await listed(), [['DOMAIN', 'NAME', 'STATUS', 'RESPONSE_MS', 'CHECKED_AT', 'SETTINGS']], 'the list no longer shows it')
      const removed = await siteRow(BOOKS)
      t.ok(removed, 'the row is kept')
      t.ok(toDate(removed?.removed_at) instanceof Date, 'with removed_at set')

      for (const domain of [BOOKS, 'never-added.example.com']) {
        const res = await runCli(['sites', 'remove', domain], { env })
        t.equal(res.code, 1, `removing untracked ${domain} exits 1`)
        t.equal(res.stderr, `site-status: ${domain} is not tracked\n`, 'and says it is not tracked')
      }
      t.equal((await runCli(['sites', 'remove', 'localhost'], { env })).code, 1, 'removing a bad domain exits 1')

      const resumed = await runCli(['sites', 'add', BOOKS], { env })
      t.same([resumed.code, resumed.stderr], [0, 'tracking again\n'], 'adding it again resumes tracking')
      t.same((await listed())[1], [BOOKS, 'Books', 'pending', '-', '-', '-'], 'listed again, unchecked in its new tracking period')
      const row = await siteRow(BOOKS)
      t.equal(row?.removed_at, null, 'removed_at is cleared')
      t.ok((toDate(row?.added_at)?.getTime() ?? 0) >= (toDate(removed?.removed_at)?.getTime() ?? Infinity), 'the tracking period restarts')
    })

    t.test(`sites import adds ${IMPORT_LINES} lines, reports rejected lines and counts`, async (t) => {
      const { text, bad } = bigImportFile()
      const dir = t.testdir({ 'sites.txt': text })
      const file = join(dir, 'sites.txt')
      const res = await spawnCli(['sites', 'import', file], { env })
      // How fast is bench/import's question; this test is about what an import does.
      t.comment(`${engine}: importing ${IMPORT_LINES} lines took ${res.ms} ms (process start-up included)`)
      t.equal(res.code, 3, 'exits 3 because some lines were rejected')
      t.equal(
        res.stdout,
        `added ${IMPORT_LINES}, tracking again 0, already tracked 0, duplicate lines 2, rejected lines 4\n`,
        'stdout has the counts'
      )
      t.same(lines(res.stderr), bad, 'stderr lists each bad line by its number, and nothing else off a terminal')
      t.equal(
        Number((await db('sites').where('domain', 'like', '%.import-test.com').count({ n: '*' }))[0]?.n),
        IMPORT_LINES,
        'all are stored'
      )
      t.equal((await siteRow(IMPORT_DOMAIN(1000)))?.name, 'Site number 1000', 'a domain,name line sets the name')
      t.equal((await siteRow(IMPORT_DOMAIN(7)))?.name, IMPORT_DOMAIN(7), 'a bare domain is named after itself')

      const again = await runCli(['sites', 'import', file], { env })
      t.equal(again.code, 3, 're-import exits 3 again')
      t.equal(
        again.stdout,
        `added 0, tracking again 0, already tracked ${IMPORT_LINES}, duplicate lines 2, rejected lines 4\n`,
        're-import reports them as already tracked'
      )
      t.equal(await siteCount(), IMPORT_LINES + 1, 'and stores nothing new')
    })

    t.test('sites import shows progress only on a terminal and exits 0 when every line is good', async (t) => {
      await runCli(['sites', 'remove', IMPORT_DOMAIN(3)], { env })
      const clean = Array.from({ length: 1200 }, (_, i) => `tty${i}.import-test.org`)
      const dir = t.testdir({
        'tty.txt': clean.join('\n'),
        'plain.txt': `${IMPORT_DOMAIN(3)}\n${IMPORT_DOMAIN(4)}\nplain.import-test.org\n`
      })

      const tty = await runCli(['sites', 'import', join(dir, 'tty.txt')], { env, stderrTTY: true })
      t.equal(tty.code, 0, 'exits 0 when no line was rejected')
      t.match(tty.stderr, /importing: 500\/1200/, 'a terminal sees progress')
      t.match(tty.stderr, /importing: 1200\/1200\n/, 'up to the end')
      t.equal(tty.stdout, 'added 1200, tracking again 0, already tracked 0, duplicate lines 0, rejected lines 0\n')

      const plain = await runCli(['sites', 'import', join(dir, 'plain.txt')], { env })
      t.equal(plain.code, 0)
      t.equal(plain.stderr, '', 'off a terminal there is no progress')
      t.equal(
        plain.stdout,
        'added 1, tracking again 1, already tracked 1, duplicate lines 0, rejected lines 0\n',
        'a removed site counts as tracked again'
      )
      t.equal((await siteRow(IMPORT_DOMAIN(3)))?.removed_at, null, 'and is tracked')
    })

    t.test('sites import - reads standard input', async (t) => {
      const res = await spawnCli(['sites', 'import', '-'], {
        env,
        input: 'stdin1.import-test.net\n# comment\nstdin2.import-test.net,From stdin\n'
      })
      t.equal(res.code, 0)
      t.equal(res.stdout, 'added 2, tracking again 0, already tracked 0, duplicate lines 0, rejected lines 0\n')
      t.equal(res.stderr, '', 'no progress without a terminal')
      t.equal((await siteRow('stdin2.import-test.net'))?.name, 'From stdin')
    })

    t.test('sites import fails clearly on a file it cannot read', async (t) => {
      const dir = t.testdir({})
      for (const [file, code] of [
        [join(dir, 'missing.txt'), 'ENOENT'],
        [dir, 'EISDIR']
      ] as const) {
        const res = await runCli(['sites', 'import', file], { env })
        t.equal(res.code, 1, `${code}: exits 1`)
        t.equal(res.stderr, `site-status: cannot read ${file}: ${code}\n`, `${code}: one clear line`)
        t.equal(res.stdout, '')
      }
      const none = await runCli(['sites', 'import'], { env })
      t.equal(none.code, 2, 'no FILE is a usage error')
      t.notOk(hasStackTrace(none.stderr))
    })
  })
}

for (const engine of engines()) {
  t.test(`sites list shows a site without a fresh check as unavailable, like the status endpoint, on ${engine}`, async (t) => {
    const { db, url } = await migratedDb(engine, t)
    const checkedAt = new Date(Date.now() - 150_000)
    await addSites({
      db,
      entries: [
        { domain: 'stale.example.com', name: 'Stale' },
        { domain: 'never.example.com', name: 'Never' }
      ],
      now: new Date(Date.now() - 3_600_000)
    })
    await db('sites')
      .where({ domain: 'stale.example.com' })
      .update({ status: 'down', blocked: true, partial: true, response_ms: 80, checked_at: checkedAt })
    const list = async (interval: string): Promise<string[][]> =>
      lines((await runCli(['sites', 'list'], { env: { DATABASE_URL: url, CHECK_INTERVAL_S: interval } })).stdout)
        .slice(1)
        .map((l) => l.split(/ {2,}/))
    t.same(
      await list('60'),
      [
        ['never.example.com', 'Never', 'pending', '-', '-', '-'],
        ['stale.example.com', 'Stale', 'down (blocked) (partial)', '80', checkedAt.toISOString(), '-']
      ],
      'checked 150 s ago with a 60 s interval: still fresh'
    )
    t.same(
      await list('30'),
      [
        ['never.example.com', 'Never', 'pending', '-', '-', '-'],
        ['stale.example.com', 'Stale', 'unavailable', '-', checkedAt.toISOString(), '-']
      ],
      'with a 30 s interval that is over three intervals ago: unavailable, and when it was last checked'
    )
  })
}
