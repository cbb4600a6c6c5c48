import t from 'tap'
import { decide, type LocationOutcome, type LocationVerdict, type Consensus } from '../../../lib/rules/consensus.js'

const at = (status: LocationVerdict, response_ms = 100): LocationOutcome => ({ status, response_ms })
const many = (n: number, status: LocationVerdict, response_ms = 100): LocationOutcome[] =>
  Array.from({ length: n }, () => at(status, response_ms))

interface Row {
  title: string
  input: LocationOutcome[]
  expect: Partial<Consensus>
}

const rows: Row[] = [
  {
    title: 'three locations up make the site up and nothing else',
    input: many(3, 'up'),
    expect: { status: 'up', partial: false, blocked: false, locations_answered: 3, locations_total: 3 }
  },
  {
    title: 'two down and one up make the site down, partially',
    input: [...many(2, 'down'), at('up')],
    expect: { status: 'down', partial: true, blocked: false }
  },
  {
    title: 'one down and two up keep the site up, partially',
    input: [at('down'), ...many(2, 'up')],
    expect: { status: 'up', partial: true, blocked: false }
  },
  {
    title: 'three down make the site down, not partially',
    input: many(3, 'down'),
    expect: { status: 'down', partial: false, blocked: false, locations_answered: 3 }
  },
  {
    title: 'one up beside two probe errors is unconfirmed',
    input: [at('up'), ...many(2, 'error')],
    expect: { status: 'unconfirmed', partial: false, locations_answered: 1, locations_total: 3 }
  },
  {
    title: 'one down beside two probe errors is unconfirmed, not down',
    input: [at('down'), ...many(2, 'error')],
    expect: { status: 'unconfirmed', partial: false, locations_answered: 1 }
  },
  {
    title: 'three probe errors leave the site unavailable with no response time',
    input: many(3, 'error'),
    expect: { status: 'unavailable', partial: false, blocked: false, response_ms: null, locations_answered: 0, locations_total: 3 }
  },
  {
    title: 'no locations at all leave the site unavailable',
    input: [],
    expect: { status: 'unavailable', partial: false, blocked: false, response_ms: null, locations_answered: 0, locations_total: 0 }
  },
  {
    title: 'two blocked and one up make the site up and not blocked',
    input: [...many(2, 'blocked'), at('up')],
    expect: { status: 'up', partial: false, blocked: false, locations_answered: 3 }
  },
  {
    title: 'three blocked make the site up but blocked, since a refusal is an answer',
    input: many(3, 'blocked'),
    expect: { status: 'up', partial: false, blocked: true, locations_answered: 3 }
  },
  {
    title: 'two blocked and one down stay up with one failure, blocked and partial',
    input: [...many(2, 'blocked'), at('down')],
    expect: { status: 'up', partial: true, blocked: true }
  },
  {
    title: 'two down and one blocked make the site down, partial and blocked',
    input: [...many(2, 'down'), at('blocked')],
    expect: { status: 'down', partial: true, blocked: true }
  },
  {
    title: 'two up and one probe error keep the site up',
    input: [...many(2, 'up'), at('error')],
    expect: { status: 'up', partial: false, blocked: false, locations_answered: 2, locations_total: 3 }
  },
  {
    title: 'one blocked beside two probe errors is unconfirmed and blocked',
    input: [at('blocked'), ...many(2, 'error')],
    expect: { status: 'unconfirmed', blocked: true, locations_answered: 1 }
  },
  {
    title: 'two down beside a probe error make the site down, not partially',
    input: [...many(2, 'down'), at('error')],
    expect: { status: 'down', partial: false, blocked: false, locations_answered: 2, locations_total: 3 }
  },
  {
    title: 'one up and one down beside a probe error keep the site up, partially',
    input: [at('up'), at('down'), at('error')],
    expect: { status: 'up', partial: true, blocked: false, locations_answered: 2, locations_total: 3 }
  },
  {
    title: 'an odd number of answers takes the middle response time, ignoring probe errors',
    input: [at('up', 300), at('down', 10), at('up', 120.04), at('error', 5000)],
    expect: { response_ms: 120 }
  },
  {
    title: 'an even number of answers averages the two middle response times',
    input: [at('up', 400), at('up', 100), at('blocked', 150), at('down', 250)],
    expect: { response_ms: 200 }
  },
  {
    title: 'the median is rounded to a tenth of a millisecond',
    input: [at('up', 10.11), at('up', 10.25)],
    expect: { response_ms: 10.2 }
  }
]

for (const row of rows) {
  t.test(row.title, async (t) => {
    const got = decide(row.input)
    for (const [key, value] of Object.entries(row.expect)) {
      t.equal(got[key as keyof Consensus], value, key)
    }
  })
}

t.test('the verdict does not depend on the order of the locations', async (t) => {
  const input = [at('down', 30), at('up', 10), at('down', 20), at('blocked', 40)]
  t.same(decide([...input].reverse()), decide(input))
})
