import t from 'tap'
import { daysRemaining, dueExpiryThreshold, expiresSoon, siteCertificate, type ExpiryNotice } from '../../../lib/rules/certificates.js'

const NOW = new Date('2026-11-24T12:00:00.000Z')
const DAY = 86_400_000
const HOUR = 3_600_000
const left = (ms: number): Date => new Date(NOW.getTime() + ms)
const notice = (expiresAt: Date, days: number): ExpiryNotice => ({ expiresAt, days })

const IN_3D = left(3 * DAY - 5_000)
const IN_30D = left(30 * DAY - 5_000)

const dueRows: Array<{ title: string; expiresAt: Date; announced: ExpiryNotice | null; due: number | null }> = [
  { title: '30 days left: no threshold is crossed', expiresAt: IN_30D, announced: null, due: null },
  { title: '14 days and one hour left: not yet', expiresAt: left(14 * DAY + HOUR), announced: null, due: null },
  { title: 'exactly 14 days left: 14 is due', expiresAt: left(14 * DAY), announced: null, due: 14 },
  { title: '10 days left, nothing announced: 14', expiresAt: left(10 * DAY), announced: null, due: 14 },
  {
    title: '10 days left, 14 announced for this certificate: nothing',
    expiresAt: left(10 * DAY),
    announced: notice(left(10 * DAY), 14),
    due: null
  },
  { title: 'first seen with 3 days left: one event, for 7 (the lowest crossed)', expiresAt: IN_3D, announced: null, due: 7 },
  { title: '3 days left, 14 announced for it: 7', expiresAt: IN_3D, announced: notice(IN_3D, 14), due: 7 },
  { title: '3 days left, 7 announced for it: nothing', expiresAt: IN_3D, announced: notice(IN_3D, 7), due: null },
  { title: '12 hours left, 7 announced for it: 1', expiresAt: left(12 * HOUR), announced: notice(left(12 * HOUR), 7), due: 1 },
  { title: '12 hours left, 1 announced for it: nothing', expiresAt: left(12 * HOUR), announced: notice(left(12 * HOUR), 1), due: null },
  { title: 'already expired, nothing announced: 1', expiresAt: left(-HOUR), announced: null, due: 1 },
  {
    title: 'a renewed certificate (another expiry) announces afresh',
    expiresAt: left(13 * DAY),
    announced: notice(IN_3D, 1),
    due: 14
  },
  {
    title: 'an announcement for another certificate does not silence this one',
    expiresAt: IN_3D,
    announced: notice(left(40 * DAY), 1),
    due: 7
  },
  { title: 'a renewal out of every threshold announces nothing', expiresAt: left(90 * DAY), announced: notice(IN_3D, 7), due: null }
]

t.test('which certificate.expiring threshold is due', async (t) => {
  for (const row of dueRows) t.equal(dueExpiryThreshold(row.expiresAt, NOW, row.announced), row.due, row.title)
})

t.test('days remaining are whole days, rounded down', async (t) => {
  const rows: Array<[number, number]> = [
    [30 * DAY - 5_000, 29],
    [30 * DAY, 30],
    [3 * DAY - 5_000, 2],
    [DAY + 1, 1],
    [DAY - 1, 0],
    [1, 0],
    [0, 0],
    [-1, -1],
    [-2 * DAY, -2]
  ]
  for (const [ms, days] of rows) t.equal(daysRemaining(left(ms), NOW), days, `${ms} ms left is ${days} days`)
})

t.test('pages warn under 14 days', async (t) => {
  const rows: Array<[number, boolean]> = [
    [29, false],
    [14, false],
    [13, true],
    [2, true],
    [0, true],
    [-1, true]
  ]
  for (const [days, warns] of rows) t.equal(expiresSoon(days), warns, `${days} days left ${warns ? 'warns' : 'does not warn'}`)
})

t.test("a check's certificate is the one a majority of its locations agree on", async (t) => {
  const A = '2026-12-01T00:00:00.000Z'
  const B = '2027-01-01T00:00:00.000Z'
  const C = '2027-02-01T00:00:00.000Z'
  const rows: Array<{
    title: string
    locations: Array<{ status?: string; tls_expires_at?: string | null; tls_issuer?: string | null }>
    want: unknown
  }> = [
    { title: 'no location reports one', locations: [{}, { tls_expires_at: null, tls_issuer: null }], want: null },
    { title: 'no locations at all', locations: [], want: null },
    {
      title: 'the only location saw one',
      locations: [{ tls_expires_at: A, tls_issuer: 'CN=A' }],
      want: { expiresAt: new Date(A), issuer: 'CN=A' }
    },
    {
      title: "one of two locations saw one: one location's word is not enough",
      locations: [{ tls_expires_at: null }, { tls_expires_at: A, tls_issuer: 'CN=A' }],
      want: null
    },
    {
      title: 'one location sees an earlier expiry than the other two: the two decide',
      locations: [
        { tls_expires_at: B, tls_issuer: 'CN=Later' },
        { tls_expires_at: A, tls_issuer: 'CN=Sooner' },
        { tls_expires_at: B, tls_issuer: 'CN=Later' }
      ],
      want: { expiresAt: new Date(B), issuer: 'CN=Later' }
    },
    {
      title: 'three locations, three certificates: no majority',
      locations: [{ tls_expires_at: A }, { tls_expires_at: B }, { tls_expires_at: C }],
      want: null
    },
    {
      title: 'two agree and the third gave no verdict',
      locations: [{ tls_expires_at: A }, { tls_expires_at: A }, { status: 'error', tls_expires_at: null }],
      want: { expiresAt: new Date(A), issuer: null }
    },
    {
      title: 'a location that gave no verdict does not count: the one that did decides',
      locations: [
        { status: 'error', tls_expires_at: null },
        { status: 'up', tls_expires_at: A }
      ],
      want: { expiresAt: new Date(A), issuer: null }
    },
    {
      title: 'two of four agree, the others differ: not a majority of those that saw one',
      locations: [{ tls_expires_at: A }, { tls_expires_at: A }, { tls_expires_at: B }, { tls_expires_at: C }],
      want: null
    },
    {
      title: 'an unreadable time is skipped',
      locations: [{ tls_expires_at: 'soon', tls_issuer: 'CN=X' }],
      want: null
    },
    {
      title: 'an issuer left out is null',
      locations: [{ tls_expires_at: A }],
      want: { expiresAt: new Date(A), issuer: null }
    }
  ]
  for (const row of rows) t.same(siteCertificate(row.locations), row.want, row.title)
})
