import t from 'tap'
import { RateLimiter } from '../../lib/rate-limit.js'

function clock(start = 1_000_000) {
  let now = start
  return {
    now: () => now,
    advance: (ms: number) => {
      now += ms
    }
  }
}

t.test('admits up to the limit and refuses the next request', async (t) => {
  const c = clock()
  const limiter = new RateLimiter(c)
  for (let i = 0; i < 60; i++) t.equal(limiter.take('k', 60, 1).allowed, true)
  const refused = limiter.take('k', 60, 1)
  t.equal(refused.allowed, false)
  t.equal(refused.remaining, 0)
  t.equal(refused.retryAfterMs, 60_000, 'the oldest unit frees in a full minute when all came at once')
})

t.test('a refused request consumes nothing', async (t) => {
  const c = clock()
  const limiter = new RateLimiter(c)
  for (let i = 0; i < 57; i++) limiter.take('k', 60, 1)
  const check = limiter.take('k', 60, 5)
  t.equal(check.allowed, false, 'a cost of 5 does not fit in 3 remaining units')
  t.equal(check.remaining, 3, 'and the 3 units are still there')
  t.equal(limiter.take('k', 60, 3).allowed, true, 'so three single requests still fit')
  t.equal(limiter.take('k', 60, 1).allowed, false)
})

t.test('the window slides: units come back 60 s after they were spent', async (t) => {
  const c = clock()
  const limiter = new RateLimiter(c)
  for (let i = 0; i < 30; i++) limiter.take('k', 60, 1)
  c.advance(30_000)
  for (let i = 0; i < 30; i++) limiter.take('k', 60, 1)
  t.equal(limiter.take('k', 60, 1).allowed, false, 'full at 30 s')
  c.advance(29_999)
  const early = limiter.take('k', 60, 1)
  t.equal(early.allowed, false, 'still full 1 ms before the first half ages out')
  t.equal(early.retryAfterMs, 1)
  c.advance(1)
  const later = limiter.take('k', 60, 1)
  t.equal(later.allowed, true, 'the first 30 units are back after 60 s')
  t.equal(later.remaining, 29)
  t.equal(later.resetMs, 60_000, 'the full limit returns a minute after the newest unit')
})

t.test('no 60-second window ever holds more than the limit', async (t) => {
  const c = clock()
  const limiter = new RateLimiter(c)
  const admitted: number[] = []
  let seed = 7
  const rand = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31
    return seed / 2 ** 31
  }
  for (let i = 0; i < 20_000; i++) {
    c.advance(Math.floor(rand() * 40))
    const cost = rand() < 0.2 ? 5 : 1
    if (limiter.take('k', 60, cost).allowed) for (let j = 0; j < cost; j++) admitted.push(c.now())
  }
  let worst = 0
  for (let lo = 0, hi = 0; hi < admitted.length; hi++) {
    while ((admitted[lo] as number) <= (admitted[hi] as number) - 60_000) lo++
    worst = Math.max(worst, hi - lo + 1)
  }
  t.equal(worst, 60, 'the busiest minute holds exactly the limit')
})

t.test('retry-after is the true wait until the cost fits', async (t) => {
  const c = clock()
  const limiter = new RateLimiter(c)
  for (let i = 0; i < 10; i++) {
    limiter.take('k', 10, 1)
    c.advance(1000)
  }
  // Units were spent at 0..9 s; now is 10 s. A cost of 3 fits once the three oldest age out (at 62 s).
  const refused = limiter.take('k', 10, 3)
  t.equal(refused.allowed, false)
  t.equal(refused.retryAfterMs, 52_000)
  c.advance(51_999)
  t.equal(limiter.take('k', 10, 3).allowed, false, 'not a millisecond early')
  c.advance(1)
  t.equal(limiter.take('k', 10, 3).allowed, true, 'and admitted right on time')
})

t.test('a cost above the whole limit is refused with a minute to wait', async (t) => {
  const limiter = new RateLimiter(clock())
  const refused = limiter.take('k', 3, 5)
  t.equal(refused.allowed, false)
  t.equal(refused.retryAfterMs, 60_000)
  t.equal(refused.remaining, 3)
})

t.test('keys have separate budgets and a free request costs nothing', async (t) => {
  const limiter = new RateLimiter(clock())
  for (let i = 0; i < 5; i++) limiter.take('a', 5, 1)
  t.equal(limiter.take('a', 5, 1).allowed, false)
  t.equal(limiter.take('b', 5, 1).allowed, true)
  t.equal(limiter.take('a', 5, 0).allowed, true, 'cost 0 is always admitted')
  t.equal(limiter.peek('b', 5).remaining, 4)
})

t.test('a refund gives back exactly the units admitted then, and the window stays exact', async (t) => {
  const c = clock()
  const limiter = new RateLimiter(c)
  const first = limiter.take('k', 10, 5)
  c.advance(10_000)
  const second = limiter.take('k', 10, 5)
  t.equal(limiter.take('k', 10, 1).allowed, false, 'full')
  const after = limiter.refund('k', 10, first)
  t.equal(after.remaining, 5, "the first request's 5 units are back")
  t.equal(limiter.take('k', 10, 5).allowed, true, 'and can be spent')
  t.equal(limiter.take('k', 10, 1).allowed, false, 'but no more')
  // Nothing ages out at 60 s any more (the first request's units were refunded); the second
  // request's and the new ones, both taken at 10 s, do so at 70 s.
  c.advance(59_999)
  t.equal(limiter.take('k', 10, 1).allowed, false, 'still full 1 ms before 70 s')
  c.advance(1)
  t.equal(limiter.take('k', 10, 10).allowed, true, 'everything is back at 70 s')
  t.equal(second.admittedAt, 1_010_000)
})

t.test('a part of an admission can be refunded: the rest keeps its admission time', async (t) => {
  const c = clock()
  const limiter = new RateLimiter(c)
  const batch = limiter.take('k', 100, 50)
  t.equal(limiter.refund('k', 100, batch, 15).remaining, 65, '15 of the 50 units are back')
  t.equal(limiter.refund('k', 100, { ...batch, cost: 35 }, 35).remaining, 100, 'and the rest, named by what is left')
  const again = limiter.take('k', 100, 40)
  limiter.refund('k', 100, again, 10)
  c.advance(59_999)
  t.equal(limiter.peek('k', 100).remaining, 70)
  c.advance(1)
  t.equal(limiter.peek('k', 100).remaining, 100, 'what was not refunded ages out when the admission does')
})

t.test('a refund of nothing, or of units that already aged out, changes nothing', async (t) => {
  const c = clock()
  const limiter = new RateLimiter(c)
  const spent = limiter.take('k', 10, 4)
  c.advance(60_000)
  limiter.take('k', 10, 6)
  t.equal(limiter.refund('k', 10, spent).remaining, 4, 'the aged-out units are not given twice')
  t.equal(limiter.refund('k', 10, { admittedAt: 12345, cost: 6 }).remaining, 4, 'an admission that never was changes nothing')
  const refused = limiter.take('k', 10, 5)
  t.equal(refused.admittedAt, undefined, 'a refused request has nothing to refund')
})
