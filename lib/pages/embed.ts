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
  return snippets(`${publicUrl}/api/badge/${domain}`, `${publicUrl}/sites/${domain}`, name)
}

/** The page badge's embed code for a status page; the slug is `[a-z0-9-]`, safe in a URL as it is. */
export function pageEmbedCode({ publicUrl, slug, title }: { publicUrl: string; slug: string; title: string }): EmbedCode {
  return snippets(`${publicUrl}/api/badge/page/${slug}`, `${publicUrl}/status/${slug}`, title)
}

function snippets(url: string, page: string, name: string): EmbedCode {
  const alt = `${name.replace(CONTROL, ' ')} status`
  return {
    html: `<img src="${url}" alt="${escapeAttribute(alt)}">`,
    markdown: `[![${escapeMarkdown(alt)}](${url})](${page})`,
    url
  }
}
