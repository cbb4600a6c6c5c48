/** The three ways to embed a badge, each as the exact text a user copies. */
export interface EmbedCode {
  html: string
  markdown: string
  url: string
}

/** Escapes text for an HTML attribute value in double quotes (the snippet is HTML the user pastes). */
export function escapeAttribute(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}

/** Escapes text for a Markdown image's alt text: brackets and backslashes would end or bend the syntax. */
export function escapeMarkdown(text: string): string {
  return text.replace(/[\\[\]]/g, (c) => `\\${c}`)
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g

/**
 * The badge's embed code for a tracked site. The domain is already normalised (ASCII letters,
 * digits, hyphens and dots), so it goes into URLs as it is; the name is the site's own text and is
 * escaped for each format.
 */
export function embedCode({ publicUrl, domain, name }: { publicUrl: string; domain: string; name: string }): EmbedCode {
  return snippets(`${publicUrl}/api/badge/${domain}`, `${publicUrl}/sites/${domain}`, altText(name, 'status'))
}

/** The page badge's embed code for a status page; the slug is `[a-z0-9-]`, safe in a URL as it is. */
export function pageEmbedCode({ publicUrl, slug, title }: { publicUrl: string; slug: string; title: string }): EmbedCode {
  return snippets(`${publicUrl}/api/badge/page/${slug}`, `${publicUrl}/status/${slug}`, altText(title, 'status'))
}

/** One of the other badges a page offers: its words, where the page previews it from, and its embed code. */
export interface BadgeEmbed extends EmbedCode {
  /** Part of the snippets' element ids. */
  id: string
  /** The heading the page gives it. */
  title: string
  /** The badge's path on this service, for the page's own preview. */
  preview: string
  alt: string
}

/** The figure badges a page offers, with the windows their snippets use (the defaults). */
const FIGURES = [
  { id: 'uptime', path: 'uptime', title: 'Uptime, last 30 days', alt: 'uptime, last 30 days' },
  { id: 'response-time', path: 'response-time', title: 'Mean response time, last 24 hours', alt: 'response time, last 24 hours' }
] as const
const CHART = { id: 'chart', path: 'chart.svg', title: 'Response-time chart, last 24 hours', alt: 'response-time chart, last 24 hours' }

function embeds(
  publicUrl: string,
  base: string,
  page: string,
  name: string,
  kinds: ReadonlyArray<(typeof FIGURES)[number] | typeof CHART>
): BadgeEmbed[] {
  return kinds.map(({ id, path, title, alt }) => {
    const preview = `${base}/${path}`
    const text = altText(name, alt)
    return { id, title, preview, alt: text, ...snippets(`${publicUrl}${preview}`, page, text) }
  })
}

/** A tracked site's figure badges and chart, each with its embed code. */
export function siteBadgeEmbeds({ publicUrl, domain, name }: { publicUrl: string; domain: string; name: string }): BadgeEmbed[] {
  return embeds(publicUrl, `/api/badge/${domain}`, `${publicUrl}/sites/${domain}`, name, [...FIGURES, CHART])
}

/** A status page's figure badges (the mean of its sites), each with its embed code. */
export function pageBadgeEmbeds({ publicUrl, slug, title }: { publicUrl: string; slug: string; title: string }): BadgeEmbed[] {
  return embeds(publicUrl, `/api/badge/page/${slug}`, `${publicUrl}/status/${slug}`, title, FIGURES)
}

/** The alt text of a badge of `name`: what it shows, after the name, control characters flattened. */
const altText = (name: string, what: string): string => `${name.replace(CONTROL, ' ')} ${what}`

function snippets(url: string, page: string, alt: string): EmbedCode {
  return {
    html: `<img src="${url}" alt="${escapeAttribute(alt)}">`,
    markdown: `[![${escapeMarkdown(alt)}](${url})](${page})`,
    url
  }
}
