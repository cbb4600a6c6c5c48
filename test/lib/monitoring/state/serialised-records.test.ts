/**
 * lib/monitoring/state/serialised-records.ts: a site's record is served for less than a second and
 * dropped when its state changes; every change is counted, all sites together and each site's last,
 * so that what follows the counts (badge answers, lib/routes/badge-hits.ts) can tell whose changed.
 */
import t from 'tap'
import { SERIALISED_MS, SerialisedRecords } from '../../../../lib/monitoring/state/serialised-records.js'

t.test('a record is served until its site changes or a second has passed', async (t) => {
  const records = new SerialisedRecords()
  records.set(1, '{"a":1}', 1000)
  t.equal(records.get(1, 1000 + SERIALISED_MS - 1), '{"a":1}')
  t.equal(records.get(1, 1000 + SERIALISED_MS), undefined, 'not a second on')
  records.set(1, '{"a":2}', 5000)
  records.delete(1)
  t.equal(records.get(1, 5000), undefined, 'nor once its site changed')
})

t.test("each change is counted, and each site's last change has a place no other shares", async (t) => {
  const records = new SerialisedRecords()
  t.equal(records.changes, 0)
  t.equal(records.changesOf(1), -1, 'a site never seen')
  records.delete(1)
  records.delete(2)
  t.equal(records.changes, 2)
  t.equal(records.changesOf(1), 1)
  t.equal(records.changesOf(2), 2)
  records.delete(1)
  t.equal(records.changesOf(1), 3, "a site's next change moves its place")
  t.equal(records.changesOf(2), 2, "and leaves the others'")
  records.forget(2)
  t.equal(records.changes, 4, 'a site no longer tracked is a change too')
  t.equal(records.changesOf(2), -1, 'and has no place any more')
})
