import t from 'tap'
import { PageDirectory } from '../../../lib/pages/page-directory.js'
import { addSites } from '../../../lib/monitoring/add-sites.js'
import { deleteStatusPage, insertStatusPage, updateStatusPage } from '../../../lib/store/status-pages.js'
import { migratedDb } from '../../helpers/db.js'

const NOW = Date.parse('2026-11-28T12:00:00.000Z')

t.test('pages are held in memory: read at most once a second, or at once after a change said so', async (t) => {
  const { db } = await migratedDb('sqlite', t)
  await addSites({ db, entries: [{ domain: 'a.example.com', name: 'A' }], now: new Date(NOW - 60_000) })
  const siteId = Number((await db('sites').first('id')).id)
  await db.transaction((trx) =>
    insertStatusPage({
      db: trx,
      page: { slug: 'one', title: 'One', description: null, logo_url: null },
      sites: [{ siteId, displayName: null }],
      now: new Date(NOW)
    })
  )
  let queries = 0
  db.on('query', () => queries++)
  const directory = new PageDirectory({ db })
  t.match(await directory.get('one', NOW), { slug: 'one', title: 'One', domains: ['a.example.com'] }, 'the first look reads')
  t.equal(await directory.get('none', NOW), null)
  const read = queries
  for (let i = 0; i < 100; i++) void directory.get(i % 2 === 0 ? 'one' : `none-${i}`, NOW + 500)
  t.equal(queries, read, 'within the second: no query, for a page or a slug that is none')

  await db.transaction((trx) => updateStatusPage({ db: trx, slug: 'one', fields: { title: 'Uno' }, now: new Date(NOW + 1) }))
  t.match(directory.get('one', NOW + 600), { title: 'One' }, 'a change elsewhere is not seen within the second')
  directory.changed('one')
  t.match(await directory.get('one', NOW + 700), { title: 'Uno' }, 'a change said here is seen at the next look')
  await deleteStatusPage({ db, slug: 'one' })
  directory.changed('one')
  t.equal(await directory.get('one', NOW + 800), null, 'and so is a deletion')
})
