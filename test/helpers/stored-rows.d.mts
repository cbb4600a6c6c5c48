import type { Knex } from 'knex'

export interface StoredSite {
  id: number
  domain: string
  status: string
  at: number | null
}
export interface StoredCheck {
  site: number
  at: number
  status: string
  source: string
  locations: string
  answered: number
  total: number
}
export interface StoredOutage {
  site: number
  start: number
  end: number | null
  open: unknown
}
export interface StoredRows {
  sites: StoredSite[]
  checks: StoredCheck[]
  outages: StoredOutage[]
}
type OutageStep = (hasOpenOutage: boolean, status: any) => 'open' | 'close' | 'none'

export function readStoredRows(db: Knex, toDate: (value: unknown) => Date | null): Promise<StoredRows>
export function replayOutages(
  checks: ReadonlyArray<{ at: number; status: string }>,
  outageStep: OutageStep
): Array<{ start: number; end: number | null }>
export function incompleteCheck(check: StoredCheck): string | null
export function storedRowProblems(rows: StoredRows, outageStep: OutageStep): string[]
