// Keeps a status page current without a reload: the page's event stream says when one of its sites
// or heartbeats changed, and the page is then fetched again and its states, bars and incidents updated in place
// (the server forgets its kept render before it sends the event). Without this script the page
// shows the same, as of when it was loaded.
'use strict'

const TYPES = [
  'outage.opened',
  'outage.closed',
  'site.slow',
  'site.slow_ended',
  'maintenance.started',
  'maintenance.ended',
  'heartbeat.late',
  'heartbeat.late_ended'
]
// Also once a minute: today's uptime moves with the clock, and a page's list of sites changes without an event.
const REFRESH_MS = 60_000

const sentence = document.getElementById('page-state')
const path = sentence && `/status/${sentence.dataset.slug}`
let running = false
let again = false

async function refresh () {
  if (running) {
    again = true
    return
  }
  running = true
  try {
    const res = await fetch(path, { headers: { accept: 'text/html' }, cache: 'no-store' })
    if (res.ok) update(new DOMParser().parseFromString(await res.text(), 'text/html'))
  } catch {
    // Offline for a moment: the next event or the periodic refresh tries again.
  } finally {
    running = false
    if (again) {
      again = false
      void refresh()
    }
  }
}

const ids = (root) => [...root.querySelectorAll('#sites > .site')].map((site) => site.id).join(' ')

function swap (next, id) {
  const old = document.getElementById(id)
  const fresh = next.getElementById(id)
  if (old && fresh && old.outerHTML !== fresh.outerHTML) old.replaceWith(document.importNode(fresh, true))
}

function update (next) {
  const state = next.getElementById('page-state')
  if (!state) return
  // Changed in place, not replaced: a live region announces a change of its text.
  if (sentence.textContent !== state.textContent) sentence.textContent = state.textContent
  sentence.className = state.className
  document.querySelector('.generated')?.replaceWith(document.importNode(next.querySelector('.generated'), true))
  if (ids(document) !== ids(next)) swap(next, 'sites')
  else {
    for (const site of next.querySelectorAll('#sites > .site')) {
      const key = site.id.slice('site-'.length)
      // The state, uptime and cause lines: a cause line comes and goes, so their holder is swapped.
      swap(next, `head-${key}`)
      // Each bar updated in place, so that a bar with the keyboard focus keeps it.
      const bars = document.getElementById(`days-${key}`).children
      const fresh = next.getElementById(`days-${key}`).children
      for (let i = 0; i < fresh.length && i < bars.length; i++) {
        if (bars[i].className !== fresh[i].className) bars[i].className = fresh[i].className
        if (bars[i].textContent !== fresh[i].textContent) bars[i].firstChild.textContent = fresh[i].textContent
      }
    }
  }
  swap(next, 'incidents')
}

if (path && window.EventSource && window.DOMParser) {
  const source = new EventSource(`${path}/events`)
  let opened = false
  // A stream that reconnects may have missed events while it was away.
  source.addEventListener('open', () => {
    if (opened) void refresh()
    opened = true
  })
  for (const type of TYPES) source.addEventListener(type, () => void refresh())
  setInterval(() => void refresh(), REFRESH_MS)
}
