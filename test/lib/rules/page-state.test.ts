import t from 'tap'
import type { SiteStatus } from '../../../lib/rules/consensus.js'
import { pageState, type PageSiteState, type PageState } from '../../../lib/rules/page-state.js'

/**
 * A site by letter: `U` up, `D` down, `C` unconfirmed, `N` unavailable, `W` pending, `P` up and partial,
 * `S` up and slow, `M` up in maintenance, `X` down in maintenance.
 */
function site(letter: string): PageSiteState {
  const status: Record<string, SiteStatus> = {
    U: 'up',
    D: 'down',
    C: 'unconfirmed',
    N: 'unavailable',
    W: 'pending',
    P: 'up',
    S: 'up',
    M: 'up',
    X: 'down'
  }
  return { status: status[letter]!, partial: letter === 'P', slow: letter === 'S', maintenance: letter === 'M' || letter === 'X' }
}

t.test('a page state from its sites, by the rule of decisions.md', async (t) => {
  const rows: Array<[string, string, PageState]> = [
    ['every site up', 'UUUUU', 'operational'],
    ['no sites: nothing failing', '', 'operational'],
    ['one of five down', 'DUUUU', 'partial outage'],
    ['two of five down', 'DDUUU', 'partial outage'],
    ['three of five down', 'DDDUU', 'major outage'],
    ['exactly half down is major', 'DDUU', 'major outage'],
    ['one of one down', 'D', 'major outage'],
    ['a down site outranks a slow one', 'DSUUU', 'partial outage'],
    ['one slow site', 'SUUUU', 'degraded'],
    ['one unconfirmed site', 'CUUUU', 'degraded'],
    ['one unavailable site', 'NUUUU', 'degraded'],
    ['one site not checked yet', 'WUUUU', 'degraded'],
    ['one partial site', 'PUUUU', 'degraded'],
    ['degraded outranks maintenance', 'SMUUU', 'degraded'],
    ['one site in maintenance', 'MUUUU', 'maintenance'],
    ['every site in maintenance', 'MM', 'maintenance'],
    ['a site down inside its window is in maintenance', 'XUUUU', 'maintenance'],
    ['down outside a window still counts beside one inside', 'XDUU', 'partial outage']
  ]
  for (const [name, letters, want] of rows) t.equal(pageState(Array.from(letters, site)), want, name)
})
