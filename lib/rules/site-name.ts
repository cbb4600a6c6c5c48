/** A site's display name is wrong: empty, over 200 characters or with control characters. */
export class SiteNameError extends Error {
  constructor() {
    super('name must be 1 to 200 printable characters')
    this.name = 'SiteNameError'
  }
}

/** A site's display name, trimmed; null when none is given. The operator tool and the sites API both use it. */
export function parseSiteName(text: string | undefined): string | null {
  if (text === undefined) return null
  const name = text.trim()
  if (name === '' || name.length > 200 || /\p{Cc}/u.test(name)) throw new SiteNameError()
  return name
}
