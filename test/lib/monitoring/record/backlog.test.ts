import t from 'tap'
import { outageTransitions, RecordingBacklog } from '../../../../lib/monitoring/record/backlog.js'
import type { CheckStatus as SiteStatus } from '../../../../lib/rules/consensus.js'
import type { OutageSnapshot } from '../../../../lib/rules/outages.js'
import type { CheckRecord } from '../../../../lib/store/checks.js'

const T0 = Date.parse('2026-11-22T06:00:00.000Z')
const MIN = 60_000

function check(siteId: number, status: SiteStatus, minute: number): CheckRecord {
  return {
    siteId,
    checkedAt: new Date(T0 + minute * MIN),
    status,
    blocked: false,
    partial: false,
    responseMs: null,
    locationsAnswered: 3,
    locationsTotal: 3,
    source: 'schedule',
    locations: []
  }
}

const closed: OutageSnapshot = { checkedAt: null, open: null }

t.test('a check is a transition when it would open or close an outage, as recorded in order', async (t) => {
  const cases: Array<[string, OutageSnapshot, Array<[SiteStatus, number]>, boolean[]]> = [
    [
      'down opens, repeats do nothing, up closes',
      closed,
      [
        ['up', 0],
        ['down', 1],
        ['down', 2],
        ['up', 3]
      ],
      [false, true, false, true]
    ],
    [
      'unconfirmed and unavailable say nothing',
      closed,
      [
        ['down', 0],
        ['unconfirmed', 1],
        ['unavailable', 2],
        ['up', 3]
      ],
      [true, false, false, true]
    ],
    [
      'an outage already open is closed by the first up',
      { checkedAt: new Date(T0 - MIN), open: { started_at: new Date(T0 - MIN) } },
      [
        ['down', 0],
        ['up', 1]
      ],
      [false, true]
    ],
    [
      'a check older than the newest changes nothing',
      closed,
      [
        ['up', 2],
        ['down', 1],
        ['down', 3]
      ],
      [false, false, true]
    ],
    [
      'nor does one older than the committed newest',
      { checkedAt: new Date(T0 + 5 * MIN), open: null },
      [
        ['down', 4],
        ['down', 6]
      ],
      [false, true]
    ]
  ]
  for (const [name, context, checks, expected] of cases) {
    t.same(
      outageTransitions(
        context,
        checks.map(([s, m]) => check(1, s, m))
      ).transitions,
      expected,
      name
    )
  }
})

t.test('a full backlog drops the oldest check that changes no outage, from any site', async (t) => {
  const backlog = new RecordingBacklog({ perSite: 30, total: 4, context: () => closed })
  const a = [check(1, 'up', 0), check(1, 'down', 1), check(1, 'up', 2)]
  const b = [check(2, 'down', 0), check(2, 'down', 1)]
  for (const c of [...a, ...b]) backlog.add(c)
  // Site 1's first up changes nothing (no outage open): it goes, not the transitions after it.
  t.equal(backlog.size, 4)
  t.same(backlog.dropped, { harmless: 1, transitions: 0 })
  const dropped = backlog.add(check(2, 'up', 2))
  t.same(dropped, { check: b[1], reason: 'total' }, 'then the repeated down of site 2')
  t.same(backlog.take(10), [a[1], a[2], b[0], check(2, 'up', 2)], 'what stays is every transition, in order per site')
})

t.test('when every waiting check is a transition, the bound still holds and a lost pair goes next', async (t) => {
  const backlog = new RecordingBacklog({ perSite: 30, total: 3, context: () => closed })
  const flap = [check(1, 'down', 0), check(1, 'up', 1), check(1, 'down', 2), check(1, 'up', 3)]
  for (const c of flap) backlog.add(c)
  t.equal(backlog.size, 3, 'bounded')
  t.same(backlog.dropped, { harmless: 0, transitions: 1 }, 'the oldest transition went, since nothing else could')
  // Without its down, the up after it closes nothing: it is the first to go now.
  t.same(backlog.add(check(2, 'up', 0))?.check, flap[1])
  t.same(backlog.take(10), [flap[2], flap[3], check(2, 'up', 0)])
})

t.test('checks being written count against the bounds and are never dropped', async (t) => {
  const backlog = new RecordingBacklog({ perSite: 3, total: 100, context: () => closed })
  backlog.add(check(1, 'up', 0))
  const batch = backlog.take(10)
  for (let m = 1; m <= 4; m++) backlog.add(check(1, 'up', m))
  t.equal(backlog.size, 3, 'one being written and two waiting')
  backlog.done(batch)
  t.same(
    backlog.take(10).map((c) => c.checkedAt.getTime()),
    [T0 + 3 * MIN, T0 + 4 * MIN],
    'the newest stayed'
  )
})
