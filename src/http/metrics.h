/* Server metrics for GET /metrics (Prometheus text format 0.0.4). Counters are relaxed
 * atomics: every worker thread updates them without a lock. Requests are counted per route,
 * by its index in the route table (routes.h), and as "other" when no route took them. */
#ifndef BD_HTTP_METRICS_H
#define BD_HTTP_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auth/limiter.h"
#include "core/buf.h"



typedef struct bd_metrics bd_metrics;

/* The metrics of n routes, label(i) naming route i; NULL when out of memory. */
bd_metrics *bd_metrics_new(size_t routes, const char *(*label)(size_t i));
void bd_metrics_free(bd_metrics *m);
/* route: the index of the route that took the request; past the last: "other". */
void bd_metrics_request(bd_metrics *m, size_t route, int status, int64_t micros);
/* Why a request got 429. */
typedef enum {
    BD_LIMIT_KEY_BUDGET,    /* the key's hourly request budget */
    BD_LIMIT_FAILED_KEYS,   /* too many failed keys from the address */
    BD_LIMIT_EXACT_LOOKUPS, /* the key's daily budget of exact card lookups */
} bd_limit_reason;
void bd_metrics_rate_limited(bd_metrics *m, bd_limit_reason why);
/* Why a request was refused by its key's scope (403): the tenant's domains (out_of_scope),
 * the key's identity types (type_not_allowed), its allowed addresses (ip_not_allowed). */
typedef enum {
    BD_SCOPE_REFUSED_DOMAIN,
    BD_SCOPE_REFUSED_TYPE,
    BD_SCOPE_REFUSED_IP,
} bd_scope_refusal;
void bd_metrics_scope_refused(bd_metrics *m, bd_scope_refusal why);
void bd_metrics_store_error(bd_metrics *m);
/* Writes the exposition text; the connection figures come from the daemon and the guard. */
bd_result bd_metrics_write(const bd_metrics *m, bd_buf *out, int64_t open_connections,
                           uint64_t cut_connections);
/* Appends the webhook delivery counters of this process (webhook/deliver.h). */
bd_result bd_metrics_write_webhooks(bd_buf *out);
/* Appends the shared limits' figures (nothing when budgets are per process). */
bd_result bd_metrics_write_limiter(const bd_limiter_health *h, bd_buf *out);

#endif
