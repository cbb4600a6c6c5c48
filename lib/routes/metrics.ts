import type { ServerRoute } from '@hapi/hapi'
import { keyStrategy, METRICS_TOKEN_STRATEGY } from '../auth.js'
import type { ServiceMetrics } from '../metrics/service-metrics.js'

/**
 * `GET /metrics`: Prometheus's text exposition, for a key with `read` or, when METRICS_TOKEN is
 * set, that token (a scraper's config holds one secret that can do nothing else). It costs no
 * units: a scrape every 15 s must not eat the budget of the key it uses.
 */
export function metricsRoutes({ metrics, tokenAuth }: { metrics: ServiceMetrics; tokenAuth: boolean }): ServerRoute[] {
  return [
    {
      method: 'GET',
      path: '/metrics',
      options: {
        // The token grants `read` alone; hapi checks it holds that, the key strategy checks keys.
        auth: {
          strategies: tokenAuth ? [METRICS_TOKEN_STRATEGY, keyStrategy('read')] : [keyStrategy('read')],
          access: { scope: ['read'] }
        },
        plugins: { rateLimit: { cost: 0 } }
      },
      handler: (request, h) => {
        const stream = metrics.stream()
        // hapi stops writing when the scraper goes, but leaves the source open: end it there.
        request.raw.res.once('close', () => stream.destroy())
        return h.response(stream).type(metrics.contentType)
      }
    }
  ]
}
