import type { StatusRecord } from '../monitoring/state/status-record.js'
import type { DownCause } from '../rules/down-cause.js'

/** "3 d 4 h", "2 h 5 min", "4 min 10 s", "45 s": two units at most, enough to compare outages at a glance. */
export function humanDuration(totalSeconds: number): string {
  const s = Math.max(0, Math.floor(totalSeconds))
  const units: Array<[string, number]> = [
    ['d', 86_400],
    ['h', 3600],
    ['min', 60],
    ['s', 1]
  ]
  const i = units.findIndex(([, size]) => s >= size)
  if (i === -1) return '0 s'
  const [bigName, bigSize] = units[i] as [string, number]
  const big = Math.floor(s / bigSize)
  const next = units[i + 1]
  const small = next ? Math.floor((s - big * bigSize) / next[1]) : 0
  return next && small > 0 ? `${big} ${bigName} ${small} ${next[0]}` : `${big} ${bigName}`
}

/** "2026-11-22 06:25:07 UTC": unambiguous for every reader, whatever their zone. */
export function humanTime(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`
}

/** "99.95 %", "100 %". */
export function humanPercent(value: number): string {
  return `${Number(value.toFixed(3))} %`
}

/** "123 ms", or a dash when there is no figure. */
export function humanMs(value: number | null): string {
  return value === null ? '–' : `${Math.round(value)} ms`
}

/** The short status text shown next to a site: the status, with blocked and partial noted. */
export function statusLabel(record: Pick<StatusRecord, 'status' | 'blocked' | 'partial'>): string {
  const notes = [record.blocked ? 'blocked' : '', record.partial ? 'partial' : ''].filter(Boolean)
  return notes.length === 0 ? record.status : `${record.status} (${notes.join(', ')})`
}

const STATUS_WORDS: Record<StatusRecord['status'], string> = {
  up: 'Up: the monitoring locations reach the site.',
  down: 'Down: at least two monitoring locations found the site failing (the reason is below).',
  unconfirmed: 'Unconfirmed: only one monitoring location could look, so no second location confirms its result.',
  unavailable: 'Unavailable: there is no recent check result (no location could look lately).',
  pending: 'Pending: the site is tracked but has not been checked yet; its first check comes within one check interval.'
}

/** Why a check was not clean, for a page: its words, and each failing location's own error text. */
export function causeContext(cause: DownCause | null): { summary: string; locations: Array<{ location: string; error: string }> } | null {
  if (cause === null) return null
  return { summary: cause.summary, locations: cause.locations.map((l) => ({ location: l.location, error: l.error })) }
}

/** The status explained in sentences, blocked and partial included. */
export function statusExplanation(record: Pick<StatusRecord, 'status' | 'blocked' | 'partial'>): string[] {
  const words = [STATUS_WORDS[record.status]]
  if (record.blocked) {
    words.push(
      'Blocked: the site answered but refused the automated check (for example with a bot challenge). It is reachable, so this does not count as downtime.'
    )
  }
  if (record.partial) {
    words.push('Partial: some locations reached the site while others could not, so it may be down for visitors in some regions.')
  }
  return words
}
