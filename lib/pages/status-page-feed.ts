import { humanDuration, humanTime } from './format.js'
import type { StatusPageIncident, StatusPageView } from './status-page-view.js'

// XML 1.0 cannot carry most control characters, not even escaped; a name stored by other means
// than the API might hold one.
// eslint-disable-next-line no-control-regex
const NOT_XML = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\ufffe\uffff]/g
const ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' }

/** Text made safe for XML content and attribute values (double or single quoted). */
export function xmlText(text: string): string {
  return text.replace(NOT_XML, '').replace(/[&<>"']/g, (c) => ENTITIES[c] as string)
}

/** The page's public links. */
export function statusPageUrls(publicUrl: string, slug: string): { page: string; feed: string; json: string; badge: string } {
  return {
    page: `${publicUrl}/status/${slug}`,
    feed: `${publicUrl}/status/${slug}/feed.atom`,
    json: `${publicUrl}/status/${slug}.json`,
    badge: `${publicUrl}/api/badge/page/${slug}`
  }
}

/**
 * An entry's id: a tag URI (RFC 4151) of the service's host, the page and the outage, so that it
 * never changes while the outage goes from ongoing to ended, and no two entries share one.
 */
function entryId(host: string, slug: string, incident: StatusPageIncident): string {
  return `tag:${host},2026:status/${slug}/outage/${incident.id}`
}

function entryTitle(i: StatusPageIncident): string {
  return i.ended_at === null ? `${i.name} is down` : `${i.name} was down for ${humanDuration(i.duration_seconds)}`
}

function entryText(i: StatusPageIncident): string {
  const site = i.domain === null ? i.name : `${i.name} (${i.domain})`
  if (i.ended_at === null) return `${site} has been down since ${humanTime(i.started_at)} (${humanDuration(i.duration_seconds)} so far).`
  return `${site} was down from ${humanTime(i.started_at)} to ${humanTime(i.ended_at)} (${humanDuration(i.duration_seconds)}).`
}

/**
 * The page's incidents as an Atom 1.0 feed (RFC 4287): one entry per incident, updated when it
 * started or, once over, when it ended; the feed is updated when the page or an incident last
 * changed, so a reader polling it sees a change only when there is one. Every value is escaped.
 */
export function statusPageFeed(view: StatusPageView, publicUrl: string): string {
  const urls = statusPageUrls(publicUrl, view.slug)
  const host = new URL(publicUrl).hostname
  const page = xmlText(urls.page)
  const entries = view.incidents.map((i) =>
    [
      '  <entry>',
      `    <id>${xmlText(entryId(host, view.slug, i))}</id>`,
      `    <title type="text">${xmlText(entryTitle(i))}</title>`,
      `    <published>${i.started_at}</published>`,
      `    <updated>${i.ended_at ?? i.started_at}</updated>`,
      `    <link rel="alternate" type="text/html" href="${page}"/>`,
      `    <content type="text">${xmlText(entryText(i))}</content>`,
      '  </entry>'
    ].join('\n')
  )
  return [
    '<?xml version="1.0" encoding="utf-8"?>',
    '<feed xmlns="http://www.w3.org/2005/Atom">',
    `  <id>${page}</id>`,
    `  <title type="text">${xmlText(view.title)}</title>`,
    ...(view.description === null ? [] : [`  <subtitle type="text">${xmlText(view.description)}</subtitle>`]),
    `  <updated>${view.updated_at}</updated>`,
    `  <link rel="self" type="application/atom+xml" href="${xmlText(urls.feed)}"/>`,
    `  <link rel="alternate" type="text/html" href="${page}"/>`,
    `  <author><name>${xmlText(view.title)}</name></author>`,
    '  <generator>Site Status API</generator>',
    ...entries,
    '</feed>',
    ''
  ].join('\n')
}
