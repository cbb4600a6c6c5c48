import t from 'tap'
import { addSite } from '../../../lib/monitoring/add-sites.js'
import { outagesJson, SlaHistory, type NamedSite } from '../../../lib/routes/sla-history.js'
import { closeOutage, insertOutage, listOutageTimes } from '../../../lib/store/outages.js'
import { engines, migratedDb } from '../../helpers/db.js'

const NOW = Date.parse('2026-11-24T12:00:00.000Z')
const MIN = 60_000
const DAY = 24 * 60 * MIN

/** A deterministic sequence in [0, 1), so a failure can be replayed. */
function random(seed: number): () => number {
  let x = seed
  return () => {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    return (x >>> 0) / 2 ** 32
  }
}

for (const engine of engines()) {
  t.test(`the kept copy of closed outages answers as the store does, through every change, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    await addSite({ db, entry: { domain: 'flap.example.com', name: 'Flap' }, now: new Date(NOW - 420 * DAY) })
    const id = Number((await db('sites').where({ domain: 'flap.example.com' }).first('id')).id)
    const site: NamedSite = { id, domain: 'flap.example.com', name: 'Flap' }
    const next = random(20261124)

    // 300 outages over the 410 days before NOW - 10 days, the newest still open.
    let at = NOW - 420 * DAY
    let open = null as number | null
    const addOutage = async (
      close: boolean,
      gap = Math.round(next() * 2 * DAY) + MIN,
      length = Math.round(next() * 6 * 60 * MIN) + 1000
    ) => {
      at += gap
      open = await insertOutage({ db, siteId: id, startedAt: new Date(at) })
      if (close) {
        at += length
        await closeOutage({ db, id: open, endedAt: new Date(at) })
        open = null
      }
    }
    for (let i = 0; i < 300; i++) await addOutage(i < 299)
    let now = NOW

    let queries = 0
    db.on('query', () => queries++)
    const history = new SlaHistory()
    /** Asks the copy for [from, to) and compares it with the store read afresh; returns the queries it made. */
    const ask = async (from: number, to: number, name: string) => {
      queries = 0
      const got = await history.window({ db, site, from, to, now })
      const made = queries
      const want = await listOutageTimes({ db, siteId: id, from: new Date(from), to: new Date(to) })
      if (got === null) {
        t.fail(`${name}: answered`)
        return 0
      }
      t.same(
        got.outages.map((o) => [o.started, o.ended]),
        want.map((o) => [o.started, o.ended]),
        `${name}: the outages the store holds`
      )
      const json = got.json(got.outages)
      t.equal(json && Buffer.concat(json).toString(), outagesJson(want, site, now), `${name}: their records, byte for byte`)
      if (got.outages.length > 1) t.equal(got.json(got.outages.slice(1)), null, `${name}: not copied for a list it does not hold`)
      return made
    }
    const window = () => {
      const from = now - Math.round(next() * 400 * DAY)
      return [from, Math.min(now, from + Math.round(next() * 60 * DAY) + 1)] as const
    }

    t.ok((await ask(now - 400 * DAY, now, 'the first answer: the store read whole')) > 1, 'the first answer reads the history')
    t.equal(await ask(now - 400 * DAY, now, 'asked again'), 1, 'asked again: one short read checks the copy')
    for (let round = 0; round < 6; round++) {
      for (let i = 0; i < 8; i++) {
        const [from, to] = window()
        t.equal(await ask(from, to, `round ${round}, window ${i}`), 1, `round ${round}, window ${i}: from the copy`)
      }
      // A change made elsewhere (another instance, the recorder): a closed outage more or a new
      // name replaces the copy at once; an outage opening needs no new copy (the open one is read
      // on every request).
      now += 10 * MIN
      const change = round % 3
      if (change === 0 && open !== null) {
        at = now - 5 * MIN
        await closeOutage({ db, id: open, endedAt: new Date(at) })
        open = null
      } else if (change === 1) {
        at = now - 3 * MIN
        await addOutage(round === 4, MIN, MIN)
      } else if (change === 2) {
        site.name = `Flap ${round}`
        await db('sites').where({ id }).update({ name: site.name })
      }
      const made = await ask(now - 30 * DAY, now, `after change ${round}`)
      if (change === 1 && round === 1) t.equal(made, 1, 'an outage opened: still from the copy, with the open one read fresh')
      else t.ok(made > 1, `after change ${round}: read again`)
    }
    t.equal(await history.window({ db, site, from: now - 402 * DAY, to: now, now }), null, 'older than a copy covers: the store answers')
    t.end()
  })
}
