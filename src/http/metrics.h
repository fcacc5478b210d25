/* Server metrics for GET /metrics (Prometheus text format 0.0.4). Counters are relaxed
 * atomics: every worker thread updates them without a lock. */
#ifndef BD_HTTP_METRICS_H
#define BD_HTTP_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "auth/limiter.h"
#include "core/buf.h"

typedef enum {
    BD_ROUTE_BREACHES,
    BD_ROUTE_BREACH,
    BD_ROUTE_BREACH_SEARCH,
    BD_ROUTE_CARD_SEARCH,
    BD_ROUTE_HIBP_ACCOUNT, /* the HIBP API v3's, hibp.c */
    BD_ROUTE_HIBP_BREACHES,
    BD_ROUTE_HIBP_BREACH,
    BD_ROUTE_HIBP_DATACLASSES,
    BD_ROUTE_HIBP_DOMAIN,
    BD_ROUTE_HIBP_SUBSCRIPTION,
    BD_ROUTE_RANGE,
    BD_ROUTE_HEALTHZ,
    BD_ROUTE_METRICS,
    BD_ROUTE_OPENAPI,
    BD_ROUTE_USAGE,
    BD_ROUTE_STATUS,
    BD_ROUTE_CHANGES,
    BD_ROUTE_WATCHES,
    BD_ROUTE_WATCH,
    BD_ROUTE_ALERTS,
    BD_ROUTE_JOBS, /* POST a bulk job */
    BD_ROUTE_JOB,  /* a job's status */
    BD_ROUTE_JOB_RESULTS,
    BD_ROUTE_OTHER,
    BD_ROUTE_COUNT
} bd_route;

/* The route's name as it appears in metrics and the access log. */
const char *bd_route_name(bd_route r);

typedef struct bd_metrics bd_metrics;

bd_metrics *bd_metrics_new(void); /* NULL when out of memory */
void bd_metrics_free(bd_metrics *m);
void bd_metrics_request(bd_metrics *m, bd_route route, int status, int64_t micros);
/* Why a request got 429. */
typedef enum {
    BD_LIMIT_KEY_BUDGET,    /* the key's hourly request budget */
    BD_LIMIT_FAILED_KEYS,   /* too many failed keys from the address */
    BD_LIMIT_EXACT_LOOKUPS, /* the key's daily budget of exact card lookups */
} bd_limit_reason;
void bd_metrics_rate_limited(bd_metrics *m, bd_limit_reason why);
void bd_metrics_store_error(bd_metrics *m);
/* Writes the exposition text; the connection figures come from the daemon and the guard. */
bd_result bd_metrics_write(const bd_metrics *m, bd_buf *out, int64_t open_connections,
                           uint64_t cut_connections);
/* Appends the webhook delivery counters of this process (webhook/deliver.h). */
bd_result bd_metrics_write_webhooks(bd_buf *out);
/* Appends the shared limits' figures (nothing when budgets are per process). */
bd_result bd_metrics_write_limiter(const bd_limiter_health *h, bd_buf *out);

#endif
