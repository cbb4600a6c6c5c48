import { createHash } from 'node:crypto'
import t from 'tap'
import { toDate } from '../../../lib/store/db.js'
import { hasStackTrace, lines, runCli, spawnCli } from '../../helpers/cli.js'
import { engines, migratedDb } from '../../helpers/db.js'

const KEY = /^ssk_[A-Za-z0-9_-]{43}$/
const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex')

/** A `keys list` table as rows of cells (columns are separated by at least two spaces). */
function parseTable(text: string): string[][] {
  return lines(text).map((l) => l.split(/ {2,}/))
}

for (const engine of engines()) {
  t.test(`keys commands on ${engine}`, async (t) => {
    const { db, url } = await migratedDb(engine, t)
    const env = { DATABASE_URL: url }
    const keyCount = async (): Promise<number> => Number((await db('api_keys').count({ n: '*' }))[0]?.n)

    t.test('keys create prints the key alone on the last line and stores only its SHA-256', async (t) => {
      const res = await spawnCli(['keys', 'create', '--name', 'ci', '--limit', '5'], { env })
      t.equal(res.code, 0, 'exits 0')
      const out = lines(res.stdout)
      const key = out[out.length - 1] ?? ''
      t.match(key, KEY, 'the last stdout line is the key and nothing else')
      t.notOk(res.stderr.includes(key), 'the key is not repeated on stderr')
      t.match(res.stderr, /created key \d+ "ci" with a limit of 5 requests\/minute/, 'stderr says what was created')
      t.notOk(hasStackTrace(res.stderr), 'no stack trace')

      const rows = await db('api_keys').select('*')
      t.equal(rows.length, 1, 'one row was stored')
      const row = rows[0]
      t.equal(row.key_hash, sha256(key), 'the row holds the SHA-256 hex of the key')
      t.equal(row.name, 'ci')
      t.equal(Number(row.rate_limit), 5, '--limit 5 is stored')
      t.equal(row.revoked_at, null, 'a new key is not revoked')
      const stored = JSON.stringify(Object.values(row).map(String))
      t.notOk(stored.includes(key), 'the key text appears nowhere in the row')
      t.notOk(stored.includes(key.slice(4)), 'nor does its random part without the prefix')
    })

    t.test('two creates give different keys; without --limit the default applies', async (t) => {
      const a = await runCli(['keys', 'create', '--name', 'first'], { env })
      const b = await runCli(['keys', 'create', '--name', 'second'], { env: { ...env, RATE_LIMIT_PER_MIN: '77' } })
      t.equal(a.code, 0)
      t.equal(b.code, 0)
      const keyA = lines(a.stdout).pop() ?? ''
      const keyB = lines(b.stdout).pop() ?? ''
      t.match(keyA, KEY)
      t.match(keyB, KEY)
      t.not(keyA, keyB, 'the keys differ')
      t.match(b.stderr, /limit of 77 requests\/minute \(the default\)/, 'the default limit comes from RATE_LIMIT_PER_MIN')
      const rows = await db('api_keys').whereIn('name', ['first', 'second']).orderBy('id')
      t.same(
        rows.map((r) => r.key_hash),
        [sha256(keyA), sha256(keyB)],
        'each key has its own hash'
      )
      t.same(
        rows.map((r) => r.rate_limit),
        [null, null],
        'no --limit is stored as null (follow the default)'
      )
    })

    t.test('a bad --limit or a missing --name is refused with one line and nothing stored', async (t) => {
      const before = await keyCount()
      const cases: Array<[string, string[], RegExp]> = [
        ['--limit 0', ['--name', 'x', '--limit', '0'], /--limit/],
        ['--limit -1', ['--name', 'x', '--limit', '-1'], /--limit/],
        ['--limit=-1', ['--name', 'x', '--limit=-1'], /--limit must be a whole number/],
        ['--limit abc', ['--name', 'x', '--limit', 'abc'], /--limit must be a whole number/],
        ['--limit 1.5', ['--name', 'x', '--limit', '1.5'], /--limit must be a whole number/],
        ['--limit 1000001', ['--name', 'x', '--limit', '1000001'], /--limit must be a whole number from 1 to 1000000/],
        ['--limit without a value', ['--name', 'x', '--limit'], /--limit/],
        ['no --name', ['--limit', '5'], /--name/],
        ['an empty --name', ['--name', '  '], /--name/],
        ['a --name with a control character', ['--name', 'a\u0007b'], /--name/]
      ]
      for (const [what, args, message] of cases) {
        const res = await runCli(['keys', 'create', ...args], { env })
        t.not(res.code, 0, `${what}: exits non-zero`)
        t.equal(res.stdout, '', `${what}: prints nothing on stdout`)
        t.equal(lines(res.stderr).length, 1, `${what}: one stderr line`)
        t.match(res.stderr, message, `${what}: says what is wrong`)
      }
      t.equal(await keyCount(), before, 'no key was created')
    })

    t.test('keys list and keys revoke', async (t) => {
      const created = await runCli(['keys', 'create', '--name', 'to-revoke', '--limit', '9'], { env })
      const [row] = await db('api_keys').where({ name: 'to-revoke' }).select('id')
      const id = String(row.id)
      t.ok(created.code === 0 && Number(id) > 0, 'a key to revoke exists')

      const revoke = await spawnCli(['keys', 'revoke', id], { env })
      t.equal(revoke.code, 0, 'revoke exits 0')
      t.equal(revoke.stdout.trim(), `revoked key ${id}`, 'revoke confirms on stdout')
      const revokedAt = toDate((await db('api_keys').where({ id }).first()).revoked_at)
      t.ok(revokedAt instanceof Date && !Number.isNaN(revokedAt.getTime()), 'revoked_at is set in the database')

      const again = await runCli(['keys', 'revoke', id], { env })
      t.equal(again.code, 0, 'a second revoke exits 0')
      t.match(again.stdout, new RegExp(`key ${id} was already revoked`), 'and says it was already revoked')
      const after = toDate((await db('api_keys').where({ id }).first()).revoked_at)
      t.equal(after?.toISOString(), revokedAt?.toISOString(), 'the first revoked time is kept')

      const list = await spawnCli(['keys', 'list'], { env })
      t.equal(list.code, 0, 'list exits 0')
      const table = parseTable(list.stdout)
      t.same(table[0], ['ID', 'NAME', 'LIMIT', 'CREATED', 'REVOKED', 'SCOPES'], 'the header names the columns')
      const revokedRow = table.find((r) => r[0] === id)
      t.same(revokedRow?.slice(1, 3), ['to-revoke', '9'], 'the revoked key is listed with its name and limit')
      t.match(revokedRow?.[3] ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, 'created is an ISO time')
      t.equal(revokedRow?.[4], revokedAt?.toISOString(), 'the revoked time is shown')
      const defaultRow = table.find((r) => r[1] === 'first')
      t.equal(defaultRow?.[4], '-', 'a live key shows - as revoked')
      t.equal(defaultRow?.[2], '60 (default)', 'a key without its own limit shows the default')
      t.equal(table.length, 1 + (await keyCount()), 'one line per key plus the header')
      t.notOk(list.stdout.includes('ssk_'), 'the list never shows keys')
    })

    t.test('keys create --scopes stores the scopes and keys list shows them', async (t) => {
      const cases: Array<[string, string[], string]> = [
        ['scoped-default', [], 'read,check'],
        ['scoped-read', ['--scopes', 'read'], 'read'],
        ['scoped-manage', ['--scopes', 'manage,READ'], 'read,manage'],
        ['scoped-all', ['--scopes=check, manage ,read'], 'read,check,manage']
      ]
      for (const [name, args, stored] of cases) {
        const res = await runCli(['keys', 'create', '--name', name, ...args], { env })
        t.equal(res.code, 0, `${name}: exits 0`)
        t.match(res.stderr, new RegExp(`and the scopes ${stored}\n`), `${name}: stderr names the scopes`)
        t.equal((await db('api_keys').where({ name }).first()).scopes, stored, `${name}: ${stored} is stored`)
      }
      const table = parseTable((await runCli(['keys', 'list'], { env })).stdout)
      for (const [name, , stored] of cases) t.equal(table.find((r) => r[1] === name)?.[5], stored, `keys list shows ${name}'s scopes`)
    })

    t.test('a bad --scopes is a usage error naming the valid scopes, and nothing is stored', async (t) => {
      const before = await keyCount()
      for (const scopes of ['admin', 'read,write', '', ',', 'read;check']) {
        const res = await runCli(['keys', 'create', '--name', 'bad-scopes', '--scopes', scopes], { env })
        t.equal(res.code, 2, `--scopes ${JSON.stringify(scopes)}: exits 2`)
        t.equal(res.stdout, '', 'prints nothing on stdout')
        t.equal(lines(res.stderr).length, 1, 'one stderr line')
        t.match(res.stderr, /--scopes must be a comma-separated list of read, check, manage/, 'names the valid scopes')
      }
      const missing = await runCli(['keys', 'create', '--name', 'bad-scopes', '--scopes'], { env })
      t.equal(missing.code, 2, '--scopes without a value exits 2')
      t.equal(await keyCount(), before, 'no key was created')
    })

    t.test('revoking an unknown or malformed ID fails clearly', async (t) => {
      const unknown = await runCli(['keys', 'revoke', '999999'], { env })
      t.equal(unknown.code, 1, 'an unknown ID exits 1')
      t.equal(unknown.stderr, 'site-status: no key with ID 999999\n', 'and says so in one line')
      t.equal(unknown.stdout, '')
      const huge = await runCli(['keys', 'revoke', '99999999999999999999999'], { env })
      t.equal(huge.code, 1, 'an ID too large to exist exits 1')
      t.equal(huge.stderr, 'site-status: no key with ID 99999999999999999999999\n', 'and names the ID as given')
      for (const args of [['abc'], ['1x'], ['1.5'], ['-1'], [], ['1', '2']]) {
        const res = await runCli(['keys', 'revoke', ...args], { env })
        t.equal(res.code, 2, `revoke ${JSON.stringify(args)} is a usage error`)
        t.equal(lines(res.stderr).length, 1, `revoke ${JSON.stringify(args)}: one stderr line`)
        t.equal(res.stdout, '')
      }
      t.equal(
        await db('api_keys')
          .whereNotNull('revoked_at')
          .count({ n: '*' })
          .then((r) => Number(r[0]?.n)),
        1,
        'only the one key was revoked'
      )
    })
  })
}
