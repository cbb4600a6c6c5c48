import type { CheckSpec } from '../../rules/check-spec.js'

/**
 * The tracked sites' own checks, opened for sending (their secret header values unsealed by
 * `open`), once per stored form: a site's check is opened again only after it changed.
 */
export class SiteChecks {
  readonly #open: (stored: string) => CheckSpec
  readonly #opened = new Map<number, { stored: string; spec: CheckSpec }>()

  constructor(open: (stored: string) => CheckSpec) {
    this.#open = open
  }

  /** The site's check ready to send; null: the plain web check. */
  of(site: { id: number; check: string | null }): CheckSpec | null {
    if (site.check === null) return null
    const opened = this.#opened.get(site.id)
    if (opened?.stored === site.check) return opened.spec
    const spec = this.#open(site.check)
    this.#opened.set(site.id, { stored: site.check, spec })
    return spec
  }

  forget(siteId: number): void {
    this.#opened.delete(siteId)
  }
}
