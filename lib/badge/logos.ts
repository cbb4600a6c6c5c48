/**
 * The logos a badge may carry (`?logo=`): a short list drawn here, never fetched. Each is a white
 * 14 x 14 line drawing for the badge's dark label side, sent inline: as a data URL inside the SVG
 * badge, and as `logoSvg` in shields.io's endpoint JSON.
 */

const OPEN =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 14 14" fill="none" stroke="#fff" stroke-width="1.5" stroke-linecap="round" stroke-linejoin="round">'

const DRAWINGS = {
  /** A heartbeat line: a monitor. */
  pulse: '<path d="M1 7.5h3l1.5-4.5L8 12l1.5-4.5H13"/>',
  /** A clock face: uptime. */
  clock: '<circle cx="7" cy="7" r="5.75"/><path d="M7 3.75V7l2.25 1.5"/>',
  /** A globe: a web site. */
  globe: '<circle cx="7" cy="7" r="5.75"/><ellipse cx="7" cy="7" rx="2.5" ry="5.75"/><path d="M1.25 7h11.5"/>',
  /** Two stacked servers: a service. */
  server:
    '<rect x="1.75" y="1.75" width="10.5" height="4.5" rx="1"/><rect x="1.75" y="7.75" width="10.5" height="4.5" rx="1"/><path d="M4 4h.01M4 10h.01"/>',
  /** A tick in a circle: all is well. */
  check: '<circle cx="7" cy="7" r="5.75"/><path d="m4.5 7.25 1.75 1.75L9.75 5.5"/>',
  /** A lightning bolt: speed. */
  bolt: '<path fill="#fff" d="M8 1 3 8h3.5l-1 5 5-7H7z"/>'
} as const

export type LogoName = keyof typeof DRAWINGS

export const LOGO_NAMES = Object.keys(DRAWINGS) as LogoName[]

export interface Logo {
  /** The drawing as an SVG document, for shields.io's `logoSvg`. */
  svg: string
  /** The same as a data URL, for badge-maker's `logoBase64`. */
  dataUrl: string
}

/** Each logo, encoded once. */
export const LOGOS: Readonly<Record<LogoName, Logo>> = Object.fromEntries(
  LOGO_NAMES.map((name) => {
    const svg = `${OPEN}${DRAWINGS[name]}</svg>`
    return [name, { svg, dataUrl: `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}` }]
  })
) as Record<LogoName, Logo>

export function isLogoName(value: unknown): value is LogoName {
  return typeof value === 'string' && Object.hasOwn(DRAWINGS, value)
}
