import t from 'tap'
import { DEFAULT_SCOPES, formatScopes, parseScopes, ScopeListError, storedScopes } from '../../../lib/rules/scopes.js'

t.test('parseScopes reads a comma-separated subset into the canonical order', async (t) => {
  const cases: Array<[string, string[]]> = [
    ['read', ['read']],
    ['check', ['check']],
    ['manage', ['manage']],
    ['read,check', ['read', 'check']],
    ['manage,read', ['read', 'manage']],
    [' read , MANAGE ', ['read', 'manage']],
    ['read,read', ['read']],
    ['read,,check,', ['read', 'check']],
    ['check,manage,read', ['read', 'check', 'manage']]
  ]
  for (const [text, scopes] of cases) t.same(parseScopes(text), scopes, JSON.stringify(text))
})

t.test('parseScopes refuses unknown scopes and empty lists, naming the valid ones', async (t) => {
  for (const text of ['', ',', ' ', 'admin', 'read,admin', 'read;check', 'reads', '*']) {
    t.throws(() => parseScopes(text), ScopeListError, JSON.stringify(text))
  }
  t.throws(() => parseScopes('write'), { message: /read, check, manage/ }, 'the message lists the valid scopes')
})

t.test('stored lists: formatted canonically, unknown names grant nothing', async (t) => {
  t.equal(formatScopes(['manage', 'read']), 'read,manage')
  t.equal(formatScopes(DEFAULT_SCOPES), 'read,check', 'the default is what every key could do before scopes')
  t.same(storedScopes('read,check'), ['read', 'check'])
  t.same(storedScopes('manage,future'), ['manage'], 'a scope this version does not know grants nothing')
  t.same(storedScopes(''), [])
})
