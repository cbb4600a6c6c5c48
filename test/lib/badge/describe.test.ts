import t from 'tap'
import { describeBadge, parseBadgeOptions } from '../../../lib/badge/describe.js'

const site = (status: 'up' | 'down' | 'unconfirmed' | 'unavailable', blocked = false, partial = false, name = 'Shop', slow = false) => ({
  name,
  status,
  blocked,
  partial,
  slow
})

t.test('label, message and colour per status', async (t) => {
  const cases: Array<[ReturnType<typeof site> | null, string, string, string]> = [
    [site('up'), 'Shop', 'up', 'green'],
    [site('down'), 'Shop', 'down', 'red'],
    [site('unconfirmed'), 'Shop', 'unconfirmed', 'yellow'],
    [site('unavailable'), 'Shop', 'unavailable', 'lightgrey'],
    [site('up', true), 'Shop', 'up (blocked)', 'green'],
    [site('up', false, true), 'Shop', 'up (partial)', 'green'],
    [site('up', true, true), 'Shop', 'up (blocked, partial)', 'green'],
    [site('down', false, true), 'Shop', 'down (partial)', 'red'],
    [site('up', false, false, 'Shop', true), 'Shop', 'up (slow)', 'green'],
    [site('up', false, true, 'Shop', true), 'Shop', 'up (partial, slow)', 'green'],
    [site('up', true, true, 'Shop', true), 'Shop', 'up (blocked, partial, slow)', 'green'],
    [null, 'status', 'not tracked', 'lightgrey']
  ]
  for (const [state, label, message, color] of cases) {
    t.same(describeBadge(state), { label, message, color }, `${state?.status ?? 'untracked'} ${message}`)
  }
})

t.test('a site in a maintenance window shows `maintenance` in blue, whatever its status', async (t) => {
  for (const status of ['up', 'down', 'unconfirmed', 'unavailable'] as const) {
    t.same(
      describeBadge({ ...site(status, false, true), maintenance: true }),
      { label: 'Shop', message: 'maintenance', color: 'blue' },
      status
    )
  }
  t.same(describeBadge({ ...site('down'), maintenance: false }), { label: 'Shop', message: 'down', color: 'red' })
  t.equal(describeBadge({ ...site('down'), maintenance: true }, 'deploys').label, 'deploys', 'the label stays the label')
})

t.test('the label is the name, `status` for a name too long for a badge, or the override', async (t) => {
  t.equal(describeBadge(site('up', false, false, 'x'.repeat(64))).label, 'x'.repeat(64))
  t.equal(describeBadge(site('up', false, false, 'x'.repeat(65))).label, 'status')
  t.equal(describeBadge(site('up'), 'uptime').label, 'uptime')
  t.equal(describeBadge(site('up'), '').label, '', 'an empty override leaves the message alone')
  t.equal(describeBadge(null, 'mine').label, 'mine', 'untracked badges take the override too')
})

t.test('badge options', async (t) => {
  t.same(parseBadgeOptions({}), { style: 'flat' }, 'flat by default')
  for (const style of ['flat', 'flat-square', 'plastic', 'for-the-badge']) t.same(parseBadgeOptions({ style }), { style })
  t.same(parseBadgeOptions({ label: 'a b', v: '2', color: 'x' }), { style: 'flat', label: 'a b' }, 'other parameters are ignored')
  for (const logo of ['pulse', 'clock', 'globe', 'server', 'check', 'bolt']) t.same(parseBadgeOptions({ logo }), { style: 'flat', logo })
  const bad: Array<[Record<string, unknown>, RegExp]> = [
    [{ style: 'social' }, /"style" must be one of flat, flat-square, plastic, for-the-badge/],
    [{ style: '' }, /"style"/],
    [{ style: ['flat', 'plastic'] }, /"style"/],
    [{ label: 'x'.repeat(65) }, /"label" must be at most 64 characters/],
    [{ label: ['a', 'b'] }, /"label" must be given once/],
    [{ label: 'a\nb' }, /control characters/],
    [{ logo: 'github' }, /"logo" must be one of pulse, clock, globe, server, check, bolt/],
    [{ logo: 'https://example.com/logo.svg' }, /"logo"/],
    [{ logo: 'toString' }, /"logo"/],
    [{ logo: ['pulse', 'bolt'] }, /"logo"/]
  ]
  for (const [query, message] of bad) {
    t.throws(() => parseBadgeOptions(query), { name: 'BadgeOptionError', message }, JSON.stringify(query))
  }
})
