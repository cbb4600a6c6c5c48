import type { AlertKind, StepWhat } from '../rules/alert-timeline.js'
import type { AlertSubject } from '../store/alert-state.js'
import type { MessageKind } from '../store/alert-messages.js'

/** One alert's step in a message. */
export interface MessageItem {
  alert_id: number
  step: string
  what: StepWhat
  kind: AlertKind
  subject: AlertSubject
  started_at: string
  ended_at: string | null
  detail: string | null
  /** The incident it belongs to on this channel: PagerDuty's dedup key. */
  incident: string
  /** For a resolution: whether it ends its incident (the last of a group to end). */
  resolves: boolean
}

/** A message's content, stored as it was composed and rendered for its channel's kind at each attempt. */
export interface MessageBody {
  kind: MessageKind
  /** The policy it came from (null: a summary, a test, a channel's failing). */
  policy: string | null
  title: string
  /** A line of text for messages without items (a test, a channel's failing). */
  text: string | null
  /** When it was composed (ISO 8601). */
  at: string
  items: MessageItem[]
}

/** Items a text message lists by name; the rest are counted. */
export const LISTED = 10

/** `16 min`, `2 h 5 min`, `3 d 4 h`, `40 s`. */
export function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000))
  if (s < 60) return `${s} s`
  const m = Math.floor(s / 60)
  if (m < 60) return `${m} min`
  const h = Math.floor(m / 60)
  if (h < 48) return m % 60 === 0 ? `${h} h` : `${h} h ${m % 60} min`
  return `${Math.floor(h / 24)} d ${h % 24} h`
}

/** How a message names a monitor: `Example (example.com)`, `backup (heartbeat backup-job)`. */
export function label(s: AlertSubject): string {
  const id = s.domain ?? (s.slug === null ? null : `${s.monitor} ${s.slug}`)
  if (id === null || id === s.name) return s.name
  return `${s.name} (${id})`
}

/** The short id of a monitor: its domain, or kind and slug. */
export function shortId(s: AlertSubject): string {
  return s.domain ?? `${s.monitor}:${s.slug ?? s.name}`
}

/** What an item says, as one line. */
export function itemLine(item: MessageItem, at: Date): string {
  const since = Date.parse(item.started_at)
  const name = label(item.subject)
  const detail = item.detail === null ? '' : ` (${item.detail})`
  switch (item.what) {
    case 'opened':
      return `DOWN: ${name}, for ${duration(at.getTime() - since)}${detail}`
    case 'reminder':
      return `STILL DOWN: ${name}, for ${duration(at.getTime() - since)}`
    case 'escalated':
      return `DOWN (escalated): ${name}, for ${duration(at.getTime() - since)}`
    case 'resolved': {
      const ended = item.ended_at === null ? at.getTime() : Date.parse(item.ended_at)
      return item.kind === 'slow' ? `RESOLVED: ${name} is no longer slow` : `RESOLVED: ${name} is up again after ${duration(ended - since)}`
    }
    case 'notice':
      return `${NOTICE[item.kind]}: ${name}${detail}`
  }
}

const NOTICE: Record<AlertKind, string> = { outage: 'DOWN', slow: 'SLOW', certificate: 'CERTIFICATE EXPIRING', late: 'LATE' }

const PLURAL: Record<StepWhat, string> = {
  opened: 'down',
  reminder: 'still down',
  escalated: 'escalated',
  resolved: 'resolved',
  notice: 'notices'
}

/** A message's title: the one item's line, or the counts and the first names. */
export function titleOf(items: readonly MessageItem[], at: Date): string {
  const [first] = items
  if (first === undefined) return 'No alerts'
  if (items.length === 1) return itemLine(first, at)
  const counts = new Map<StepWhat, number>()
  for (const i of items) counts.set(i.what, (counts.get(i.what) ?? 0) + 1)
  const parts = [...counts].map(([what, n]) => `${n} ${PLURAL[what]}`)
  const names = [...new Set(items.map((i) => shortId(i.subject)))]
  const shown = names.slice(0, 3).join(', ')
  return `${parts.join(', ')}: ${shown}${names.length > 3 ? ` and ${names.length - 3} more` : ''}`
}

/** The lines a text message lists: the first {@link LISTED} items, then how many more. */
export function bodyLines(body: MessageBody, at: Date): string[] {
  if (body.items.length === 0) return body.text === null ? [] : [body.text]
  const lines = body.items.slice(0, LISTED).map((i) => itemLine(i, at))
  if (body.items.length > LISTED) lines.push(`... and ${body.items.length - LISTED} more`)
  return lines
}

/** Whether anything in the message is bad news (for colours and priorities). */
export function isBad(body: MessageBody): boolean {
  if (body.kind === 'failing') return !/recovered/i.test(body.title)
  return body.items.some((i) => i.what !== 'resolved')
}
