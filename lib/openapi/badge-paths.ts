import { BADGE_WINDOWS, CHART_WINDOWS, DEFAULT_WINDOWS, RESPONSE_THRESHOLDS_MS, THRESHOLD_BOUNDS } from '../badge/figures.js'
import { errors, json, noKey } from './operations.js'
import { ref, type Json } from './parts.js'

/**
 * The figure badges (uptime, response time, the chart) of sites and status pages, made by one
 * function per family so that another kind of monitor (heartbeats) documents its own with one call.
 */

const headers = {
  ETag: ref('headers', 'ETag'),
  'Cache-Control': ref('headers', 'Cache-Control'),
  'Access-Control-Allow-Origin': ref('headers', 'Access-Control-Allow-Origin')
}
const notModified: Json = { description: 'Not modified: the If-None-Match ETag is still current.', headers }
const svg = (description: string): Json => ({ description, headers, content: { 'image/svg+xml': { schema: { type: 'string' } } } })
const endpointJson = (description: string): Json => ({ description, headers, content: json(ref('schemas', 'EndpointBadge')) })
const style = [ref('parameters', 'BadgeStyle'), ref('parameters', 'BadgeLabel'), ref('parameters', 'BadgeLogo')]

const windowParameter = (windows: readonly string[], fallback: string, what: string): Json => ({
  name: 'window',
  in: 'query',
  required: false,
  description: `The window ending now that ${what} covers.`,
  schema: { type: 'string', enum: [...windows], default: fallback }
})

const thresholds: Json = {
  name: 'thresholds',
  in: 'query',
  required: false,
  description: `The colour thresholds in milliseconds, three ascending whole numbers from ${THRESHOLD_BOUNDS.min} to ${THRESHOLD_BOUNDS.max}: green below the first, yellow below the second, orange below the third, red from there.`,
  schema: { type: 'string', pattern: '^\\d{1,5},\\d{1,5},\\d{1,5}$', default: RESPONSE_THRESHOLDS_MS.join(',') }
}

const UPTIME =
  "Uptime over the window by the status record's rule: monitored time starts at the first check (before it is unknown, never up) and maintenance counts as neither up nor down. Message `99.95 %` (two decimals rounded down, so any down time shows), or `no data` in grey when nothing of the window was monitored; when monitoring began inside the window, the message says how much it covers: `100 % (2 d of data)`. Colour: from 99.9 % green, from 99 % yellow, from 95 % orange, below red. Label `uptime <window>` unless `label` replaces it."
const RESPONSE =
  'The mean of the consensus response times of the checks that got an answer, over the UTC hours overlapping the window (it may start up to an hour early). Message `182 ms` (`1.25 s` from a second), `no data` in grey without any answered check, and `(2 d of data)` as the uptime badge says it. Colour by `thresholds`. Label `response time <window>` unless `label` replaces it. Response times are re-read at most every 30 s.'
const ENDPOINT =
  'The same badge as shields.io endpoint JSON, for `https://img.shields.io/endpoint?url=<this URL>` (shields.io keeps it at least `cacheSeconds`, 300 s); `style` is passed on when given, a `logo` as `logoSvg`.'

/**
 * One family's paths under `base`, its operations named `get<prefix>UptimeBadge` and so on. `note`
 * ends every description (how the family is special); `notFound`: a name that is no monitor is a 404.
 */
export function figureFamilyPaths({
  base,
  name,
  prefix,
  who,
  note,
  notFound,
  responseTime
}: {
  base: string
  name: Json
  prefix: string
  who: string
  note: string
  notFound: boolean
  responseTime: boolean
}): Json {
  const failures = errors('BadRequest', ...(notFound ? ['NotFound'] : []), 'MethodNotAllowed', 'InternalError', 'ServiceUnavailable')
  const op = (id: string, summary: string, description: string, parameters: Json[], ok: Json): Json => ({
    get: {
      operationId: id,
      tags: ['badge'],
      summary,
      description: `${description} ${note}`,
      security: noKey,
      parameters: [name, ...parameters],
      responses: { 200: ok, 304: notModified, ...failures }
    }
  })
  const uptimeWindow = windowParameter(BADGE_WINDOWS, DEFAULT_WINDOWS.uptime, 'the uptime')
  const speedWindow = windowParameter(BADGE_WINDOWS, DEFAULT_WINDOWS.responseTime, 'the mean')
  const paths: Json = {
    [`${base}/uptime`]: op(
      `get${prefix}UptimeBadge`,
      `${who}'s uptime as an SVG badge (no key)`,
      UPTIME,
      [uptimeWindow, ...style],
      svg('The badge.')
    ),
    [`${base}/uptime/endpoint`]: op(
      `get${prefix}UptimeEndpointBadge`,
      `${who}'s uptime badge as shields.io endpoint JSON (no key)`,
      ENDPOINT,
      [uptimeWindow, ...style],
      endpointJson('The endpoint badge.')
    )
  }
  if (responseTime) {
    paths[`${base}/response-time`] = op(
      `get${prefix}ResponseTimeBadge`,
      `${who}'s mean response time as an SVG badge (no key)`,
      RESPONSE,
      [speedWindow, thresholds, ...style],
      svg('The badge.')
    )
    paths[`${base}/response-time/endpoint`] = op(
      `get${prefix}ResponseTimeEndpointBadge`,
      `${who}'s response-time badge as shields.io endpoint JSON (no key)`,
      ENDPOINT,
      [speedWindow, thresholds, ...style],
      endpointJson('The endpoint badge.')
    )
  }
  return paths
}

const NOT_TRACKED = 'An untracked domain gets a grey `not tracked` badge with status 200 and `Cache-Control: no-store`.'
const PAGE_MEAN =
  "A page's figure is the mean of its sites' (those with no data left out); it says how much it covers only when none of them covers the whole window."

export const figureBadgePaths: { sites: Json; pages: Json } = {
  sites: {
    ...figureFamilyPaths({
      base: '/api/badge/{domain}',
      name: ref('parameters', 'Domain'),
      prefix: '',
      who: 'A site',
      note: NOT_TRACKED,
      notFound: false,
      responseTime: true
    }),
    '/api/badge/{domain}/chart.svg': {
      get: {
        operationId: 'getChartBadge',
        tags: ['badge'],
        summary: "A site's response times as a small SVG chart (no key)",
        description: `A 240 x 48 sparkline of the hourly mean response time over the window's UTC hours, broken where no check answered and where an outage came between two hours; outages are marked in red. Its title and description say the period, the mean, the fastest and slowest hours and the outages. No script, nothing loaded from elsewhere. ${NOT_TRACKED.replace('badge', 'chart')}`,
        security: noKey,
        parameters: [ref('parameters', 'Domain'), windowParameter(CHART_WINDOWS, DEFAULT_WINDOWS.chart, 'the chart')],
        responses: {
          200: svg('The chart.'),
          304: notModified,
          ...errors('BadRequest', 'MethodNotAllowed', 'InternalError', 'ServiceUnavailable')
        }
      }
    }
  },
  pages: {
    '/api/badge/page/{slug}/endpoint': {
      get: {
        operationId: 'getPageEndpointBadge',
        tags: ['badge'],
        summary: "A status page's state badge as shields.io endpoint JSON (no key)",
        description: `The page badge's label, message and colour. ${ENDPOINT}`,
        security: noKey,
        parameters: [ref('parameters', 'PageSlug'), ...style],
        responses: {
          200: endpointJson('The endpoint badge.'),
          304: notModified,
          ...errors('BadRequest', 'NotFound', 'MethodNotAllowed', 'InternalError', 'ServiceUnavailable')
        }
      }
    },
    ...figureFamilyPaths({
      base: '/api/badge/page/{slug}',
      name: ref('parameters', 'PageSlug'),
      prefix: 'Page',
      who: 'A status page',
      note: PAGE_MEAN,
      notFound: true,
      responseTime: true
    })
  }
}
