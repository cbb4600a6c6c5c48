/**
 * Generated from the service's OpenAPI document (lib/openapi/) by openapi-typescript: do not edit.
 * Regenerate with `npm run client:types` after changing the document.
 */

export interface paths {
    "/healthz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Liveness, the instance, and database and Redis reachability */
        get: operations["health"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Prometheus metrics in the text exposition format (costs nothing)
         * @description For Prometheus to scrape, with a key holding `read` or with METRICS_TOKEN. Per tracked site and location, blackbox_exporter's `probe_success`, `probe_duration_seconds`, `probe_http_status_code` and `probe_ssl_earliest_cert_expiry` (labels `domain`, `location`) from the site's newest check while it is fresh; per site `site_status_up` (1 up, 0 down, absent otherwise) and `site_status_outage_ongoing`; the service's own `site_status_*` counters, gauges and histograms, and Node's process metrics. Series: at most 4 per site and location plus 2 per site.
         */
        get: operations["getMetrics"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/rate_limit": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The key's current budget (costs nothing) */
        get: operations["getRateLimit"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/check": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Check a domain now from every location (costs 5)
         * @description Works for any public domain, tracked or not. A result younger than CACHE_TTL_S seconds is reused (`cached: true`) and costs the same; concurrent checks of one domain share one probe run. Domains resolving to non-public addresses are refused with 400. A check that would start a new probe run while the instance has MAX_CHECKS_IN_FLIGHT checks running, or while this key holds its share of them (MAX_KEY_SHARE), is refused at once with 503 and Retry-After, and costs nothing.
         */
        post: operations["checkDomain"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/checks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Check up to 100 domains now from every location (costs 5 per distinct domain)
         * @description Each domain is checked as `POST /api/v1/check` checks it, sharing its reuse and single flight. The batch is charged whole, up front, 5 units per distinct valid domain; a domain refused by the target policy is an error line and its units are refunded. A batch never fails whole for one domain. Its domains wait for this key's share of the checks in flight (MAX_KEY_SHARE) instead of being refused; other keys keep theirs. With `Accept: application/x-ndjson` the answer streams one JSON line per domain as each completes, then a summary line; a client that goes away stops the probing only it was waiting for. Otherwise one JSON object once all are done.
         */
        post: operations["checkDomains"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/status/{domain}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A tracked site's stored status, uptime and last outage (costs 1) */
        get: operations["getStatus"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/outages": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Confirmed outages, newest first (costs 1)
         * @description Ordered by start, newest first, ties by id. To page past `limit`, repeat the query with `cursor` set to `next_cursor` until it is null. Any parameter not listed here is refused with 400.
         */
        get: operations["listOutages"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/sites": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Tracked sites with their status records, by domain (costs 1)
         * @description Ordered by domain. To page past `limit`, repeat the query with `cursor` set to `next_cursor` until it is null; sites added or removed meanwhile never shift the ones not yet listed. Any parameter not listed here is refused with 400.
         */
        get: operations["listSites"];
        put?: never;
        /**
         * Track a site (costs 1)
         * @description The domain is normalised and judged by the same rules as `site-status sites add`. A site removed earlier is tracked again (its history kept, a new tracking period). The scheduler takes it at once; its first check comes within one check interval.
         */
        post: operations["addSite"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/sites/{domain}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Stop tracking a site (costs 1)
         * @description Its checks and outages are kept; an ongoing outage ends now. The scheduler drops it at once.
         */
        delete: operations["removeSite"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/sites/{domain}/sla": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A site's uptime, downtime and outages over any window (costs 1)
         * @description Over [from, to), at most 400 days; `to` defaults to now and `from` to 30 days before `to`. Computed from the site's outages and its first recorded check: monitored time starts at that check (time before it is unknown, not up) and ends now, or when the site was removed (a removed site keeps its history). Any parameter not listed here is refused with 400.
         */
        get: operations["getSla"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/webhooks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Every webhook, oldest first, without secrets (costs 1) */
        get: operations["listWebhooks"];
        put?: never;
        /**
         * Register a webhook (costs 1)
         * @description Events committed from now on that match `events` and `domains` are POSTed to `url` as Standard Webhooks: body `{"type", "timestamp", "data"}`, headers `webhook-id` (the event id, the same on every retry), `webhook-timestamp` (Unix seconds of the attempt) and `webhook-signature` (`v1,` + base64 HMAC-SHA256 of `{id}.{timestamp}.{body}` keyed with the base64-decoded part of the secret after `whsec_`). A 2xx within 15 s delivers; anything else is retried after about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, then daily while three days have not passed, then the delivery is `failed`; a 410 disables the webhook. Redirects are not followed. A URL whose host resolves to a non-public address is refused with 400.
         */
        post: operations["createWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/webhooks/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Remove a webhook and its delivery log (costs 1) */
        delete: operations["deleteWebhook"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/webhooks/{id}/deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A webhook's deliveries, newest first (costs 1)
         * @description Ordered by id, newest first. To page past `limit`, repeat the query with `cursor` set to `next_cursor` until it is null. Deliveries are kept 30 days.
         */
        get: operations["listDeliveries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/webhooks/{id}/deliveries/{delivery_id}/retry": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Send a delivery again now (costs 1)
         * @description Whatever its status, the delivery goes back to `pending`, due now, with its retry schedule started over; the same `webhook-id` is sent. A disabled webhook (its receiver answered 410) is refused with 409, and so is a delivery whose event is no longer stored (events are kept 7 days).
         */
        post: operations["retryDelivery"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Server-Sent Events: every outage, site change and certificate warning as it commits (costs 1 when opened)
         * @description A `text/event-stream` that stays open. Each event is `id: <id>`, `event: <type>` and `data: <JSON>` followed by a blank line; ids increase strictly without gaps. Types: `outage.opened`, `outage.closed` (data: OutageEventData), `site.added`, `site.removed` (data: SiteEventData), `certificate.expiring` (data: CertificateEventData).
         *
         *     With `Last-Event-ID` (what EventSource sends when it reconnects) or `since`, the events after that id are replayed from the stored log, then the stream goes on live, with nothing missed or repeated. The header wins over `since`. Events are kept 7 days: an id older than the oldest kept replays from the oldest, and the first comment says which ids were pruned. Without either, the stream starts with the events after the newest one.
         *
         *     Lines starting with `:` are comments: one first, then one at least every 15 s. Never compressed. A key may hold 10 open streams; the eleventh is refused with 429 and costs nothing. When the server stops, every stream ends cleanly: reconnect with Last-Event-ID.
         */
        get: operations["streamEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/badge/{domain}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The status badge as SVG (no key)
         * @description Drawn with shields.io's renderer. Label: the site's name (`status` for a name over 64 characters or an untracked domain); message: the status, with blocked and partial noted; colour: up green, down red, unconfirmed yellow, unavailable grey. An untracked domain gets a grey `not tracked` badge with status 200, so image proxies still show it. Parameters other than `style` and `label` are ignored (cache busters).
         */
        get: operations["getBadge"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/badge/{domain}/endpoint": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The badge as shields.io endpoint JSON (no key)
         * @description For routing the badge through shields.io: `https://img.shields.io/endpoint?url=<this URL>`. Same label, message and colour as the SVG badge; `style` is passed on when given.
         */
        get: operations["getEndpointBadge"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/openapi.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** This document (no key) */
        get: operations["getOpenApi"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** HTML: the tracked sites and their status (no key) */
        get: operations["siteListPage"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sites/{domain}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * HTML: a site's status, uptime, response times, outages and badge embed code (no key)
         * @description The page a status record's `url` points at.
         */
        get: operations["sitePage"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface webhooks {
    "outage.opened": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * The `outage.opened` event, delivered to a webhook's URL
         * @description Signed as Standard Webhooks says: `webhook-signature` is `v1,` + base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}` keyed with the base64-decoded part of the secret. A 2xx within 15 s delivers; anything else is retried with backoff; 410 disables the webhook.
         */
        post: operations["webhookOutageOpened"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "outage.closed": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * The `outage.closed` event, delivered to a webhook's URL
         * @description Signed as Standard Webhooks says: `webhook-signature` is `v1,` + base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}` keyed with the base64-decoded part of the secret. A 2xx within 15 s delivers; anything else is retried with backoff; 410 disables the webhook.
         */
        post: operations["webhookOutageClosed"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "site.added": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * The `site.added` event, delivered to a webhook's URL
         * @description Signed as Standard Webhooks says: `webhook-signature` is `v1,` + base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}` keyed with the base64-decoded part of the secret. A 2xx within 15 s delivers; anything else is retried with backoff; 410 disables the webhook.
         */
        post: operations["webhookSiteAdded"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "site.removed": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * The `site.removed` event, delivered to a webhook's URL
         * @description Signed as Standard Webhooks says: `webhook-signature` is `v1,` + base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}` keyed with the base64-decoded part of the secret. A 2xx within 15 s delivers; anything else is retried with backoff; 410 disables the webhook.
         */
        post: operations["webhookSiteRemoved"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "certificate.expiring": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * The `certificate.expiring` event, delivered to a webhook's URL
         * @description Signed as Standard Webhooks says: `webhook-signature` is `v1,` + base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}` keyed with the base64-decoded part of the secret. A 2xx within 15 s delivers; anything else is retried with backoff; 410 disables the webhook.
         */
        post: operations["webhookCertificateExpiring"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface components {
    schemas: {
        /** @description Every error: one field, a human-readable text. Tests match the status, not the text. */
        Error: {
            error: string;
        };
        Health: {
            /** @constant */
            status: "ok";
            /** @constant */
            database: "ok";
            /** @description INSTANCE_ID: which instance answered (default `hostname:pid`). */
            instance: string;
            /**
             * @description `null` when REDIS_URL is unset; otherwise whether Redis answered a PING within half a second. Never makes the answer 503.
             * @enum {string|null}
             */
            redis: "ok" | "unreachable" | null;
            /**
             * @description `behind` when, over the last minute, a scheduled check was shed (it could not start within one interval of its due time) or more than 1% of those started were over 5 s late. The instance still serves.
             * @enum {string}
             */
            schedule: "ok" | "behind";
            /** @description Every location, in LOCATIONS order: how it reaches sites; for one served by agents, how many answer now. */
            locations?: {
                label: string;
                /** @enum {string} */
                kind: "local" | "proxy" | "agent";
                /** @description The agent location (`site-status agent --location`). */
                agent?: string;
                /** @description Agents that answered the last services ping (every few seconds); 0: none, its checks go unanswered (unconfirmed). */
                agents?: number;
                /**
                 * Format: date-time
                 * @description When an agent of it last answered a probe or a ping.
                 */
                last_seen?: string | null;
                /** @description The versions its agents run. */
                versions?: string[];
            }[];
        };
        HealthDegraded: {
            /** @constant */
            status: "degraded";
            /** @constant */
            database: "unreachable";
            instance: string;
            /** @enum {string|null} */
            redis: "ok" | "unreachable" | null;
            /** @description Every location, in LOCATIONS order: how it reaches sites; for one served by agents, how many answer now. */
            locations?: {
                label: string;
                /** @enum {string} */
                kind: "local" | "proxy" | "agent";
                /** @description The agent location (`site-status agent --location`). */
                agent?: string;
                /** @description Agents that answered the last services ping (every few seconds); 0: none, its checks go unanswered (unconfirmed). */
                agents?: number;
                /**
                 * Format: date-time
                 * @description When an agent of it last answered a probe or a ping.
                 */
                last_seen?: string | null;
                /** @description The versions its agents run. */
                versions?: string[];
            }[];
            /** @constant */
            error: "database unavailable";
        };
        /** @description The key's budget over the sliding 60-second window. */
        RateLimit: {
            limit: number;
            remaining: number;
            used: number;
            /** @description Seconds until the full limit is back. */
            reset_seconds: number;
            /**
             * Format: date-time
             * @example 2026-11-22T06:25:07.123Z
             */
            reset_at: string;
        };
        CheckRequest: {
            /**
             * @description A hostname, or an http(s) URL reduced to its host.
             * @example example.com
             */
            domain: string;
            expect?: components["schemas"]["CheckExpectations"];
        };
        /** @description What this check expects of each location's final answer, as a site's `expect` setting: a location whose answer fails reports `down` (`unexpected_status`, `body_mismatch`) and the quorum counts it. A result judged by expectations is reused only by checks with the same ones, and never recorded for a tracked site. A key set to null is as if absent. */
        CheckExpectations: {
            /**
             * @description Status codes and inclusive ranges the final answer (after redirects) may have; set, it decides instead of the default rule (below 500 up, 403/429 and challenge pages blocked).
             * @example [
             *       200,
             *       "300-399"
             *     ]
             * @example [
             *       401
             *     ]
             */
            status?: (number | string)[] | null;
            /** @description A literal, case-sensitive text (at most 256 bytes in UTF-8) the first 64 KiB of the final body must hold. */
            body_contains?: string | null;
            /** @description The result says `slow: true` when it is up and its response_ms is over this. */
            max_response_ms?: number | null;
        };
        /** @description Milliseconds per phase, summed over every redirect hop. */
        Timings: {
            dns: number;
            connect: number;
            tls: number;
            first_byte: number;
            total: number;
        };
        LocationResult: {
            /** @example Frankfurt 1, Germany */
            location: string;
            /**
             * @description up: answered below 500 (or as the check's expectations ask); down: no answer, 5xx, or an answer that fails the check's expectations; blocked: refused the automated check; error: the location itself failed.
             * @enum {string}
             */
            status: "up" | "down" | "blocked" | "error";
            /** @description Last HTTP status seen; 0 when there was no HTTP response. */
            http_code: number;
            response_ms: number;
            /** @description null when up, otherwise a short stable text such as "dns: NXDOMAIN". */
            error: string | null;
            final_url: string | null;
            timings: components["schemas"]["Timings"];
            /** @description `notAfter` of the leaf certificate presented in the final hop's TLS handshake (a fresh connection, never a pooled one); null when the final hop was plain http or no handshake completed. */
            tls_expires_at?: string | null;
            /** @description That certificate's issuer, most specific first (`CN=R11, O=Let's Encrypt, C=US`). */
            tls_issuer?: string | null;
        };
        CheckResult: {
            /** @description The normalised domain (lower case, punycode). */
            domain: string;
            /** @enum {string} */
            status: "up" | "down" | "unconfirmed" | "unavailable";
            locations_answered: number;
            locations_total: number;
            /** @description Median of the answering locations; null when none answered. */
            response_ms: number | null;
            /** @description True when a result from the last CACHE_TTL_S seconds was reused. */
            cached: boolean;
            locations: components["schemas"]["LocationResult"][];
            /**
             * Format: date-time
             * @example 2026-11-22T06:25:07.123Z
             */
            checked_at: string;
            partial: boolean;
            blocked: boolean;
            /** @description Only when the check gave `expect.max_response_ms`: up, with response_ms over it. */
            slow?: boolean;
        };
        BatchCheckRequest: {
            /**
             * @description Hostnames or http(s) URLs, as for a single check; duplicates after normalisation are checked once.
             * @example [
             *       "example.com",
             *       "example.org"
             *     ]
             */
            domains: string[];
            expect?: components["schemas"]["CheckExpectations"];
        };
        /** @description One domain of a batch that was not checked; the batch's other domains are unaffected. */
        BatchCheckError: {
            /** @description The normalised domain, or the entry as sent when it is not a valid domain. */
            domain: string;
            error: string;
            /**
             * @description invalid_domain: not a hostname or URL (never charged); non_public_target: refused by the target policy (its 5 units refunded); check_failed: the service failed to check it (refunded).
             * @enum {string}
             */
            code: "invalid_domain" | "non_public_target" | "check_failed";
        };
        BatchCheckSummary: {
            /** @description Distinct entries after normalisation: one line each. */
            domains: number;
            /** @description Check results, reused ones included. */
            checked: number;
            /** @description Of those, results reused from the last CACHE_TTL_S seconds. */
            cached: number;
            /** @description Error lines. */
            errors: number;
        };
        /** @description One line of the NDJSON stream: a check result, an error for one domain, or the last line, the summary. */
        BatchCheckLine: components["schemas"]["CheckResult"] | components["schemas"]["BatchCheckError"] | {
            summary: components["schemas"]["BatchCheckSummary"];
        };
        BatchCheckResults: {
            /** @description In the order the domains completed. */
            results: (components["schemas"]["CheckResult"] | components["schemas"]["BatchCheckError"])[];
            summary: components["schemas"]["BatchCheckSummary"];
        };
        BatchOverBudget: {
            error: string;
            /** @description How many of the batch's domains the key's budget would cover now. */
            fits: number;
        };
        LastOutage: {
            /**
             * Format: date-time
             * @example 2026-11-22T06:25:07.123Z
             */
            started_at: string;
            ended_at: string | null;
            duration_seconds: number;
        };
        StatusRecord: {
            domain: string;
            name: string;
            /** @enum {string} */
            status: "up" | "down" | "unconfirmed" | "unavailable";
            /** @description The site is reachable but refused the automated check. */
            blocked: boolean;
            /** @description Reachable from some locations only. */
            partial: boolean;
            response_ms: number | null;
            /** @description When the site was last checked; null if never. */
            checked_at: string | null;
            uptime_percent: {
                day: number;
                week: number;
                month: number;
            };
            last_outage: components["schemas"]["LastOutage"] | null;
            /** @description The certificate the newest check saw; null when no location completed an https handshake on its final hop. */
            tls: components["schemas"]["Certificate"] | null;
            /**
             * Format: uri
             * @description The site's HTML page on this service.
             */
            url: string;
        };
        /** @description A TLS certificate as the newest check saw it: where locations saw different ones, the one that expires first. `certificate.expiring` events announce 14, 7 and 1 days left. */
        Certificate: {
            /**
             * Format: date-time
             * @description The leaf certificate's `notAfter`.
             * @example 2026-11-22T06:25:07.123Z
             */
            expires_at: string;
            /** @description Whole days left, rounded down: 0 on the last day, negative once expired. */
            days_remaining: number;
            /** @description The issuer, most specific first (`CN=R11, O=Let's Encrypt, C=US`). */
            issuer: string | null;
        };
        Outage: {
            domain: string;
            name: string;
            /**
             * Format: date-time
             * @example 2026-11-22T06:25:07.123Z
             */
            started_at: string;
            /** @description null while the outage is ongoing. */
            ended_at: string | null;
            /** @description To the end, or to now while ongoing. */
            duration_seconds: number;
        };
        Sla: {
            domain: string;
            name: string;
            /**
             * Format: date-time
             * @description Start of the window (inclusive).
             * @example 2026-11-22T06:25:07.123Z
             */
            from: string;
            /**
             * Format: date-time
             * @description End of the window (exclusive).
             * @example 2026-11-22T06:25:07.123Z
             */
            to: string;
            /** @description 100 x (1 - downtime / monitored time), rounded to 3 decimals; 100 when nothing of the window was monitored (see monitored_seconds). */
            uptime_percent: number;
            /** @description The part of the window from the site's first recorded check (of its current tracking period) to now, or to its removal. Time before the first check is unknown, not up. */
            monitored_seconds: number;
            /** @description Outage time inside the monitored part of the window. */
            downtime_seconds: number;
            /** @description Outages overlapping the monitored part of the window (those listed). */
            incidents: number;
            /** @description The most time one outage was down inside the window; 0 without outages. */
            longest_outage_seconds: number;
            /** @description Mean time to recovery: the mean whole duration of the outages that ended inside the window; null when none did. */
            mttr_seconds: number | null;
            /** @description The outages overlapping the monitored part of the window, oldest first, with their whole durations. */
            outages: components["schemas"]["Outage"][];
        };
        SiteList: {
            sites: components["schemas"]["StatusRecord"][];
            /** @description Pass as `cursor` for the next page; null on the last page. */
            next_cursor: string | null;
        };
        AddSiteRequest: {
            /**
             * @description A hostname, or an http(s) URL reduced to its host; normalised like everywhere (lower case, punycode).
             * @example example.com
             */
            domain: string;
            /** @description Display name; the domain when absent. */
            name?: string;
        };
        OutageList: {
            outages: components["schemas"]["Outage"][];
            /** @description Pass as `cursor` for the next page; null on the last page. */
            next_cursor: string | null;
        };
        WebhookRequest: {
            /**
             * @description http:// or https:// (no username or password). Its host must resolve to public addresses only (the target policy of checks), judged again at every send.
             * @example https://hooks.example.com/site-status
             */
            url: string;
            /** @description The event types to receive; absent or null: all. */
            events?: ("outage.opened" | "outage.closed" | "site.added" | "site.removed" | "certificate.expiring")[] | null;
            /** @description Only events of these sites (normalised like every domain); absent or null: all. */
            domains?: string[] | null;
        };
        WebhookCreated: {
            id: number;
            /** Format: uri */
            url: string;
            events: ("outage.opened" | "outage.closed" | "site.added" | "site.removed" | "certificate.expiring")[] | null;
            domains: string[] | null;
            /** @description The signing secret (Standard Webhooks), shown only in this answer: store it now. */
            secret: string;
            /**
             * Format: date-time
             * @example 2026-11-22T06:25:07.123Z
             */
            created_at: string;
        };
        Webhook: {
            id: number;
            /** Format: uri */
            url: string;
            events: ("outage.opened" | "outage.closed" | "site.added" | "site.removed" | "certificate.expiring")[] | null;
            domains: string[] | null;
            /**
             * Format: date-time
             * @example 2026-11-22T06:25:07.123Z
             */
            created_at: string;
            /** @description When the receiver answered 410 Gone; nothing is sent since. */
            disabled_at: string | null;
            disabled_reason: string | null;
        };
        WebhookList: {
            webhooks: components["schemas"]["Webhook"][];
        };
        Delivery: {
            id: number;
            /** @description Also the `webhook-id` header of every attempt. */
            event_id: number;
            /** @enum {string} */
            type: "outage.opened" | "outage.closed" | "site.added" | "site.removed" | "certificate.expiring";
            attempts: number;
            /** @enum {string} */
            status: "pending" | "delivered" | "failed";
            /** @description null when no answer came. */
            last_http_code: number | null;
            /** @description A short stable text, such as "http: 503" or "timeout: no response in 15000 ms". */
            last_error: string | null;
            /** @description When a pending delivery is sent next; null once delivered or failed. */
            next_attempt_at: string | null;
            /**
             * Format: date-time
             * @example 2026-11-22T06:25:07.123Z
             */
            created_at: string;
            delivered_at: string | null;
        };
        DeliveryList: {
            deliveries: components["schemas"]["Delivery"][];
            /** @description Pass as `cursor` for the next page; null on the last page. */
            next_cursor: string | null;
        };
        /** @description shields.io's endpoint-badge format (https://shields.io/badges/endpoint-badge). */
        EndpointBadge: {
            /** @constant */
            schemaVersion: 1;
            label: string;
            message: string;
            /** @enum {string} */
            color: "green" | "red" | "yellow" | "lightgrey";
            cacheSeconds?: number;
            /** @enum {string} */
            style?: "flat" | "flat-square" | "plastic" | "for-the-badge";
        };
        /** @description The data of `outage.opened` and `outage.closed`: the outage record as the outages endpoint lists it, as it stood when the event happened (`duration_seconds` then), plus its site. */
        OutageEventData: {
            domain: string;
            name: string;
            /** Format: date-time */
            started_at: string;
            ended_at: string | null;
            duration_seconds: number;
            site: {
                domain: string;
                name: string;
            };
        };
        /** @description The data of `certificate.expiring`: a check found the site's certificate (the earliest-expiring one its locations saw) at most `threshold_days` (14, 7 or 1) days from expiry. Each threshold is announced once per certificate; when a certificate is first seen past several thresholds, one event names the lowest. A renewed certificate (another expiry) is announced afresh. */
        CertificateEventData: {
            site: {
                domain: string;
                name: string;
            };
            /** Format: date-time */
            expires_at: string;
            /** @description Whole days left at the check, rounded down. */
            days_remaining: number;
            /** @enum {integer} */
            threshold_days: 14 | 7 | 1;
            issuer: string | null;
            /**
             * Format: date-time
             * @description When the check ran.
             */
            at: string;
        };
        /** @description The data of `site.added` (tracked, or tracked again after a removal) and `site.removed`: the site and when. */
        SiteEventData: {
            site: {
                domain: string;
                name: string;
            };
            /** Format: date-time */
            at: string;
        };
    };
    responses: {
        /** @description Invalid input: a bad domain, parameter or body. The text says what is wrong. */
        BadRequest: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Missing, malformed, unknown or revoked key. */
        Unauthorized: {
            headers: {
                "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description The key lacks the scope this operation needs (its `security` names it); the text names the scope. The request consumed nothing. */
        Forbidden: {
            headers: {
                /** @description The key's limit of request units per minute. */
                "RateLimit-Limit": number;
                /** @description Units left in the current 60-second window. */
                "RateLimit-Remaining": number;
                /** @description Seconds until the full limit is back. */
                "RateLimit-Reset": number;
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description The site is not tracked, or no such route. */
        NotFound: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description The path exists but not with this method. */
        MethodNotAllowed: {
            headers: {
                Allow: components["headers"]["Allow"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description The request body is over 4 KiB. */
        PayloadTooLarge: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description The request body is not application/json. */
        UnsupportedMediaType: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description The key's per-minute limit is reached; the request was refused whole and consumed nothing. */
        TooManyRequests: {
            headers: {
                "Retry-After": components["headers"]["Retry-After"];
                /** @description The key's limit of request units per minute. */
                "RateLimit-Limit": number;
                /** @description Units left in the current 60-second window. */
                "RateLimit-Remaining": number;
                /** @description Seconds until the full limit is back. */
                "RateLimit-Reset": number;
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description The request conflicts with what is stored: the site is already tracked, the webhook is disabled, or the delivery's event was pruned. The text says why. */
        Conflict: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description The key's remaining budget does not cover the whole batch (5 units per distinct domain); nothing was charged. `fits` says how many domains it covers now. Also: the key's limit is reached. */
        BatchOverBudget: {
            headers: {
                "Retry-After": components["headers"]["Retry-After"];
                /** @description The key's limit of request units per minute. */
                "RateLimit-Limit": number;
                /** @description Units left in the current 60-second window. */
                "RateLimit-Remaining": number;
                /** @description Seconds until the full limit is back. */
                "RateLimit-Reset": number;
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["BatchOverBudget"];
            };
        };
        /** @description The request body is over 32 KiB. */
        BatchPayloadTooLarge: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description An unexpected fault; the body says only "internal server error". */
        InternalError: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description The database is unreachable. */
        ServiceUnavailable: {
            headers: {
                "Retry-After": components["headers"]["Retry-After"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Too many checks in flight, in the instance or for this key; nothing was checked and the request consumed nothing. Retry-After says when a slot is free at the latest. Also: the database is unreachable. */
        OverCapacity: {
            headers: {
                "Retry-After": components["headers"]["Retry-After"];
                /** @description The key's limit of request units per minute. */
                "RateLimit-Limit": number;
                /** @description Units left in the current 60-second window. */
                "RateLimit-Remaining": number;
                /** @description Seconds until the full limit is back. */
                "RateLimit-Reset": number;
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
    };
    parameters: {
        /** @description The webhook's id. */
        WebhookId: number;
        /** @description The delivery's id (from the webhook's deliveries). */
        DeliveryId: number;
        /** @description A hostname (`example.com`, `bücher.de`); normalised to lower-case punycode. IP literals, ports and single-label names are refused with 400. */
        Domain: string;
        /** @description The badge's look, as on shields.io. */
        BadgeStyle: "flat" | "flat-square" | "plastic" | "for-the-badge";
        /** @description Replaces the label (the site's name, or `status`); empty draws the message alone. */
        BadgeLabel: string;
    };
    requestBodies: never;
    headers: {
        /** @description The key's limit of request units per minute. */
        "RateLimit-Limit": number;
        /** @description Units left in the current 60-second window. */
        "RateLimit-Remaining": number;
        /** @description Seconds until the full limit is back. */
        "RateLimit-Reset": number;
        /** @description Whole seconds to wait before retrying. */
        "Retry-After": number;
        /** @description Bearer, with the reason as error="...". */
        "WWW-Authenticate": string;
        /** @description The methods this path accepts. */
        Allow: string;
        /** @description A strong validator; send it back in If-None-Match. */
        ETag: string;
        /** @description Badges may be cached for a minute by anyone. */
        "Cache-Control": "public, max-age=60";
        /** @description Any origin may load a badge. */
        "Access-Control-Allow-Origin": "*";
    };
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    health: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Serving, database reachable; `schedule` says whether the scheduled checks keep up. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Health"];
                };
            };
            405: components["responses"]["MethodNotAllowed"];
            /** @description Serving, but the database is unreachable. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["HealthDegraded"];
                };
            };
        };
    };
    getMetrics: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The exposition (Prometheus text format 0.0.4). The budget headers come with a key, not with METRICS_TOKEN. */
            200: {
                headers: {
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "text/plain": string;
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            405: components["responses"]["MethodNotAllowed"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getRateLimit: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The budget. */
            200: {
                headers: {
                    /** @description The key's limit of request units per minute. */
                    "RateLimit-Limit": number;
                    /** @description Units left in the current 60-second window. */
                    "RateLimit-Remaining": number;
                    /** @description Seconds until the full limit is back. */
                    "RateLimit-Reset": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RateLimit"];
                };
            };
            401: components["responses"]["Unauthorized"];
            405: components["responses"]["MethodNotAllowed"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    checkDomain: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CheckRequest"];
            };
        };
        responses: {
            /** @description Each location's result and the verdict. */
            200: {
                headers: {
                    /** @description The key's limit of request units per minute. */
                    "RateLimit-Limit": number;
                    /** @description Units left in the current 60-second window. */
                    "RateLimit-Remaining": number;
                    /** @description Seconds until the full limit is back. */
                    "RateLimit-Reset": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CheckResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            405: components["responses"]["MethodNotAllowed"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["OverCapacity"];
        };
    };
    checkDomains: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["BatchCheckRequest"];
            };
        };
        responses: {
            /** @description Every domain answered: one line each as it completes and a summary last (NDJSON), or all at once (JSON). */
            200: {
                headers: {
                    /** @description The key's limit of request units per minute. */
                    "RateLimit-Limit": number;
                    /** @description Units left in the current 60-second window. */
                    "RateLimit-Remaining": number;
                    /** @description Seconds until the full limit is back. */
                    "RateLimit-Reset": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["BatchCheckResults"];
                    "application/x-ndjson": components["schemas"]["BatchCheckLine"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            405: components["responses"]["MethodNotAllowed"];
            413: components["responses"]["BatchPayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["BatchOverBudget"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getStatus: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A hostname (`example.com`, `bücher.de`); normalised to lower-case punycode. IP literals, ports and single-label names are refused with 400. */
                domain: components["parameters"]["Domain"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The status record. */
            200: {
                headers: {
                    /** @description The key's limit of request units per minute. */
                    "RateLimit-Limit": number;
                    /** @description Units left in the current 60-second window. */
                    "RateLimit-Remaining": number;
                    /** @description Seconds until the full limit is back. */
                    "RateLimit-Reset": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["StatusRecord"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            405: components["responses"]["MethodNotAllowed"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listOutages: {
        parameters: {
            query?: {
                /** @description Only this domain (normalised); an untracked one gives an empty list. */
                domain?: string;
                /** @description 1: only outages still ongoing; 0: all. */
                ongoing?: "0" | "1";
                limit?: number;
                /** @description The `next_cursor` of the previous page, as given. */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of outages. */
            200: {
                headers: {
                    /** @description The key's limit of request units per minute. */
                    "RateLimit-Limit": number;
                    /** @description Units left in the current 60-second window. */
                    "RateLimit-Remaining": number;
                    /** @description Seconds until the full limit is back. */
                    "RateLimit-Reset": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["OutageList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            405: components["responses"]["MethodNotAllowed"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listSites: {
        parameters: {
            query?: {
                limit?: number;
                /** @description The `next_cursor` of the previous page, as given. */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of sites. */
            200: {
                headers: {
                    /** @description The key's limit of request units per minute. */
                    "RateLimit-Limit": number;
                    /** @description Units left in the current 60-second window. */
                    "RateLimit-Remaining": number;
                    /** @description Seconds until the full limit is back. */
                    "RateLimit-Reset": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SiteList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            405: components["responses"]["MethodNotAllowed"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    addSite: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["AddSiteRequest"];
            };
        };
        responses: {
            /** @description Now tracked: its status record (`unavailable` until its first check). */
            201: {
                headers: {
                    /** @description The key's limit of request units per minute. */
                    "RateLimit-Limit": number;
                    /** @description Units left in the current 60-second window. */
                    "RateLimit-Remaining": number;
                    /** @description Seconds until the full limit is back. */
                    "RateLimit-Reset": number;
                    /** @description The site's status endpoint. */
                    Location: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["StatusRecord"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            405: components["responses"]["MethodNotAllowed"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    removeSite: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A hostname (`example.com`, `bücher.de`); normalised to lower-case punycode. IP literals, ports and single-label names are refused with 400. */
                domain: components["parameters"]["Domain"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description No longer tracked. */
            204: {
                headers: {
                    /** @description The key's limit of request units per minute. */
                    "RateLimit-Limit": number;
                    /** @description Units left in the current 60-second window. */
                    "RateLimit-Remaining": number;
                    /** @description Seconds until the full limit is back. */
                    "RateLimit-Reset": number;
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            405: components["responses"]["MethodNotAllowed"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getSla: {
        parameters: {
            query?: {
                /** @description Start of the window, inclusive: an ISO 8601 date (midnight UTC) or date-time with `Z` or an offset. */
                from?: string;
                /** @description End of the window, exclusive, in the same forms; after `from`. */
                to?: string;
            };
            header?: never;
            path: {
                /** @description A hostname (`example.com`, `bücher.de`); normalised to lower-case punycode. IP literals, ports and single-label names are refused with 400. */
                domain: components["parameters"]["Domain"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The SLA figures of the window. */
            200: {
                headers: {
                    /** @description The key's limit of request units per minute. */
                    "RateLimit-Limit": number;
                    /** @description Units left in the current 60-second window. */
                    "RateLimit-Remaining": number;
                    /** @description Seconds until the full limit is back. */
                    "RateLimit-Reset": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Sla"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            405: components["responses"]["MethodNotAllowed"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listWebhooks: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The webhooks. */
            200: {
                headers: {
                    /** @description The key's limit of request units per minute. */
                    "RateLimit-Limit": number;
                    /** @description Units left in the current 60-second window. */
                    "RateLimit-Remaining": number;
                    /** @description Seconds until the full limit is back. */
                    "RateLimit-Reset": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookList"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            405: components["responses"]["MethodNotAllowed"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["WebhookRequest"];
            };
        };
        responses: {
            /** @description The webhook, with its secret: the only time the secret is shown. */
            201: {
                headers: {
                    /** @description The key's limit of request units per minute. */
                    "RateLimit-Limit": number;
                    /** @description Units left in the current 60-second window. */
                    "RateLimit-Remaining": number;
                    /** @description Seconds until the full limit is back. */
                    "RateLimit-Reset": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookCreated"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            405: components["responses"]["MethodNotAllowed"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deleteWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The webhook's id. */
                id: components["parameters"]["WebhookId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Removed; nothing more is sent. */
            204: {
                headers: {
                    /** @description The key's limit of request units per minute. */
                    "RateLimit-Limit": number;
                    /** @description Units left in the current 60-second window. */
                    "RateLimit-Remaining": number;
                    /** @description Seconds until the full limit is back. */
                    "RateLimit-Reset": number;
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            405: components["responses"]["MethodNotAllowed"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listDeliveries: {
        parameters: {
            query?: {
                limit?: number;
                /** @description The `next_cursor` of the previous page, as given. */
                cursor?: string;
            };
            header?: never;
            path: {
                /** @description The webhook's id. */
                id: components["parameters"]["WebhookId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of deliveries. */
            200: {
                headers: {
                    /** @description The key's limit of request units per minute. */
                    "RateLimit-Limit": number;
                    /** @description Units left in the current 60-second window. */
                    "RateLimit-Remaining": number;
                    /** @description Seconds until the full limit is back. */
                    "RateLimit-Reset": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DeliveryList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            405: components["responses"]["MethodNotAllowed"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    retryDelivery: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The webhook's id. */
                id: components["parameters"]["WebhookId"];
                /** @description The delivery's id (from the webhook's deliveries). */
                delivery_id: components["parameters"]["DeliveryId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Queued: the delivery as it now stands. */
            202: {
                headers: {
                    /** @description The key's limit of request units per minute. */
                    "RateLimit-Limit": number;
                    /** @description Units left in the current 60-second window. */
                    "RateLimit-Remaining": number;
                    /** @description Seconds until the full limit is back. */
                    "RateLimit-Reset": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Delivery"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            405: components["responses"]["MethodNotAllowed"];
            409: components["responses"]["Conflict"];
            429: components["responses"]["TooManyRequests"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    streamEvents: {
        parameters: {
            query?: {
                /** @description Replay the events after this id. */
                since?: string;
            };
            header?: {
                /** @description The id of the last event received; wins over `since`. */
                "Last-Event-ID"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The stream. */
            200: {
                headers: {
                    /** @description The key's limit of request units per minute. */
                    "RateLimit-Limit": number;
                    /** @description Units left in the current 60-second window. */
                    "RateLimit-Remaining": number;
                    /** @description Seconds until the full limit is back. */
                    "RateLimit-Reset": number;
                    /** @description Never cached. */
                    "Cache-Control": "no-cache";
                    /** @description Tells nginx not to buffer the stream. */
                    "X-Accel-Buffering": "no";
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example id: 42
                     *     event: outage.opened
                     *     data: {"domain":"example.com","name":"Example","started_at":"2026-11-22T06:25:07.123Z","ended_at":null,"duration_seconds":0,"site":{"domain":"example.com","name":"Example"}}
                     */
                    "text/event-stream": string;
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            405: components["responses"]["MethodNotAllowed"];
            /** @description The key's per-minute limit is reached, or this key already holds 10 open streams (close one first); either way nothing was consumed. */
            429: {
                headers: {
                    "Retry-After": components["headers"]["Retry-After"];
                    /** @description The key's limit of request units per minute. */
                    "RateLimit-Limit": number;
                    /** @description Units left in the current 60-second window. */
                    "RateLimit-Remaining": number;
                    /** @description Seconds until the full limit is back. */
                    "RateLimit-Reset": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            500: components["responses"]["InternalError"];
            /** @description The database is unreachable, the server holds its most open streams (10,000), or it is stopping. */
            503: {
                headers: {
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getBadge: {
        parameters: {
            query?: {
                /** @description The badge's look, as on shields.io. */
                style?: components["parameters"]["BadgeStyle"];
                /** @description Replaces the label (the site's name, or `status`); empty draws the message alone. */
                label?: components["parameters"]["BadgeLabel"];
            };
            header?: never;
            path: {
                /** @description A hostname (`example.com`, `bücher.de`); normalised to lower-case punycode. IP literals, ports and single-label names are refused with 400. */
                domain: components["parameters"]["Domain"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The badge. */
            200: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    [name: string]: unknown;
                };
                content: {
                    "image/svg+xml": string;
                };
            };
            /** @description Not modified: the If-None-Match ETag is still current. */
            304: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            405: components["responses"]["MethodNotAllowed"];
            500: components["responses"]["InternalError"];
        };
    };
    getEndpointBadge: {
        parameters: {
            query?: {
                /** @description The badge's look, as on shields.io. */
                style?: components["parameters"]["BadgeStyle"];
                /** @description Replaces the label (the site's name, or `status`); empty draws the message alone. */
                label?: components["parameters"]["BadgeLabel"];
            };
            header?: never;
            path: {
                /** @description A hostname (`example.com`, `bücher.de`); normalised to lower-case punycode. IP literals, ports and single-label names are refused with 400. */
                domain: components["parameters"]["Domain"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The endpoint badge. */
            200: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EndpointBadge"];
                };
            };
            /** @description Not modified: the If-None-Match ETag is still current. */
            304: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            405: components["responses"]["MethodNotAllowed"];
            500: components["responses"]["InternalError"];
        };
    };
    getOpenApi: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The OpenAPI 3.1 description of the service. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        openapi: "3.1.0";
                        info: Record<string, never>;
                        paths: Record<string, never>;
                        components: Record<string, never>;
                    };
                };
            };
            405: components["responses"]["MethodNotAllowed"];
        };
    };
    siteListPage: {
        parameters: {
            query?: {
                /** @description 500 sites a page. */
                page?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The site list. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": string;
                };
            };
            /** @description A page number that is not a whole number. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": string;
                };
            };
            /** @description No such page. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": string;
                };
            };
            405: components["responses"]["MethodNotAllowed"];
        };
    };
    sitePage: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A hostname (`example.com`, `bücher.de`); normalised to lower-case punycode. IP literals, ports and single-label names are refused with 400. */
                domain: components["parameters"]["Domain"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The site page. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": string;
                };
            };
            /** @description Not a valid domain. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": string;
                };
            };
            /** @description The site is not tracked. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": string;
                };
            };
            405: components["responses"]["MethodNotAllowed"];
            /** @description An unexpected fault. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": string;
                };
            };
            /** @description The database is unreachable. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": string;
                };
            };
        };
    };
    webhookOutageOpened: {
        parameters: {
            query?: never;
            header: {
                /** @description The event id, the same on every retry. */
                "webhook-id": string;
                /** @description Unix seconds. */
                "webhook-timestamp": string;
                "webhook-signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @constant */
                    type: "outage.opened";
                    /** Format: date-time */
                    timestamp: string;
                    data: components["schemas"]["OutageEventData"];
                };
            };
        };
        responses: {
            /** @description Gone: the webhook is disabled. */
            410: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Delivered. */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    webhookOutageClosed: {
        parameters: {
            query?: never;
            header: {
                /** @description The event id, the same on every retry. */
                "webhook-id": string;
                /** @description Unix seconds. */
                "webhook-timestamp": string;
                "webhook-signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @constant */
                    type: "outage.closed";
                    /** Format: date-time */
                    timestamp: string;
                    data: components["schemas"]["OutageEventData"];
                };
            };
        };
        responses: {
            /** @description Gone: the webhook is disabled. */
            410: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Delivered. */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    webhookSiteAdded: {
        parameters: {
            query?: never;
            header: {
                /** @description The event id, the same on every retry. */
                "webhook-id": string;
                /** @description Unix seconds. */
                "webhook-timestamp": string;
                "webhook-signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @constant */
                    type: "site.added";
                    /** Format: date-time */
                    timestamp: string;
                    data: components["schemas"]["SiteEventData"];
                };
            };
        };
        responses: {
            /** @description Gone: the webhook is disabled. */
            410: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Delivered. */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    webhookSiteRemoved: {
        parameters: {
            query?: never;
            header: {
                /** @description The event id, the same on every retry. */
                "webhook-id": string;
                /** @description Unix seconds. */
                "webhook-timestamp": string;
                "webhook-signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @constant */
                    type: "site.removed";
                    /** Format: date-time */
                    timestamp: string;
                    data: components["schemas"]["SiteEventData"];
                };
            };
        };
        responses: {
            /** @description Gone: the webhook is disabled. */
            410: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Delivered. */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    webhookCertificateExpiring: {
        parameters: {
            query?: never;
            header: {
                /** @description The event id, the same on every retry. */
                "webhook-id": string;
                /** @description Unix seconds. */
                "webhook-timestamp": string;
                "webhook-signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @constant */
                    type: "certificate.expiring";
                    /** Format: date-time */
                    timestamp: string;
                    data: components["schemas"]["CertificateEventData"];
                };
            };
        };
        responses: {
            /** @description Gone: the webhook is disabled. */
            410: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Delivered. */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
}
