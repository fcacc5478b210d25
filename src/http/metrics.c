/* Prometheus counters and a latency histogram. */
#include "http/metrics.h"

#include <stdatomic.h>
#include <stdlib.h>

#include "webhook/deliver.h"

static const int STATUSES[] = {200, 400, 401, 403, 404, 405, 422, 429, 431, 500, 503};
#define NSTATUS (sizeof STATUSES / sizeof STATUSES[0])
/* Upper bounds of the latency buckets, in microseconds. */
static const int64_t BUCKETS[] = {250,   500,   1000,   2000,   5000,   10000,
                                  20000, 50000, 100000, 250000, 1000000};
#define NBUCKET (sizeof BUCKETS / sizeof BUCKETS[0])

struct bd_metrics {
    size_t routes;
    const char *(*label)(size_t i);
    _Atomic uint64_t latency[NBUCKET + 1]; /* last: +Inf */
    _Atomic uint64_t latency_sum_us;
    _Atomic uint64_t rate_limited[BD_LIMIT_EXACT_LOOKUPS + 1], store_errors;
    _Atomic uint64_t scope_refused[BD_SCOPE_REFUSED_IP + 1];
    /* per row of the route table, then "other"; per status, then any other status */
    _Atomic uint64_t requests[][NSTATUS + 1];
};

bd_metrics *bd_metrics_new(size_t routes, const char *(*label)(size_t i))
{
    bd_metrics *m = calloc(1, sizeof *m + (routes + 1) * sizeof m->requests[0]);
    if (m) {
        m->routes = routes;
        m->label = label;
    }
    return m;
}

void bd_metrics_free(bd_metrics *m)
{
    free(m);
}

void bd_metrics_request(bd_metrics *m, size_t route, int status, int64_t micros)
{
    size_t s = 0;
    while (s < NSTATUS && STATUSES[s] != status)
        s++;
    if (route > m->routes)
        route = m->routes;
    atomic_fetch_add_explicit(&m->requests[route][s], 1, memory_order_relaxed);
    size_t b = 0;
    while (b < NBUCKET && micros > BUCKETS[b])
        b++;
    atomic_fetch_add_explicit(&m->latency[b], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->latency_sum_us, (uint64_t)(micros > 0 ? micros : 0),
                              memory_order_relaxed);
}

void bd_metrics_rate_limited(bd_metrics *m, bd_limit_reason why)
{
    atomic_fetch_add_explicit(&m->rate_limited[why], 1, memory_order_relaxed);
}

void bd_metrics_scope_refused(bd_metrics *m, bd_scope_refusal why)
{
    atomic_fetch_add_explicit(&m->scope_refused[why], 1, memory_order_relaxed);
}

void bd_metrics_store_error(bd_metrics *m)
{
    atomic_fetch_add_explicit(&m->store_errors, 1, memory_order_relaxed);
}

static uint64_t get(const _Atomic uint64_t *v)
{
    return atomic_load_explicit(v, memory_order_relaxed);
}

bd_result bd_metrics_write(const bd_metrics *m, bd_buf *out, int64_t open_connections,
                           uint64_t cut_connections)
{
    bd_result r = bd_buf_append_str(
        out, "# HELP breachd_requests_total Requests answered, by route and status.\n"
             "# TYPE breachd_requests_total counter\n");
    for (size_t route = 0; route <= m->routes && r == BD_OK; route++) {
        const char *label = route < m->routes ? m->label(route) : "other";
        for (size_t s = 0; s <= NSTATUS && r == BD_OK; s++) {
            uint64_t n = get(&m->requests[route][s]);
            if (!n)
                continue;
            if (s < NSTATUS)
                r = bd_buf_printf(out, "breachd_requests_total{route=\"%s\",status=\"%d\"} %llu\n",
                                  label, STATUSES[s],
                                  (unsigned long long)n);
            else
                r = bd_buf_printf(out,
                                  "breachd_requests_total{route=\"%s\",status=\"other\"} %llu\n",
                                  label, (unsigned long long)n);
        }
    }
    if (r == BD_OK)
        r = bd_buf_append_str(out, "# HELP breachd_request_duration_seconds Time from request "
                                   "to queued reply.\n"
                                   "# TYPE breachd_request_duration_seconds histogram\n");
    uint64_t cumulative = 0;
    for (size_t b = 0; b <= NBUCKET && r == BD_OK; b++) {
        cumulative += get(&m->latency[b]);
        if (b < NBUCKET)
            r = bd_buf_printf(out, "breachd_request_duration_seconds_bucket{le=\"%g\"} %llu\n",
                              (double)BUCKETS[b] / 1e6, (unsigned long long)cumulative);
        else
            r = bd_buf_printf(out,
                              "breachd_request_duration_seconds_bucket{le=\"+Inf\"} %llu\n"
                              "breachd_request_duration_seconds_sum %.6f\n"
                              "breachd_request_duration_seconds_count %llu\n",
                              (unsigned long long)cumulative, (double)get(&m->latency_sum_us) / 1e6,
                              (unsigned long long)cumulative);
    }
    if (r == BD_OK)
        r = bd_buf_printf(
            out,
            "# HELP breachd_rate_limited_total Requests refused with 429, by reason.\n"
            "# TYPE breachd_rate_limited_total counter\n"
            "breachd_rate_limited_total{reason=\"key_budget\"} %llu\n"
            "breachd_rate_limited_total{reason=\"failed_keys\"} %llu\n"
            "breachd_rate_limited_total{reason=\"exact_lookups\"} %llu\n"
            "# HELP breachd_scope_refusals_total Requests refused with 403 by their key's "
            "scope, by reason: an identity outside the tenant's domains, an identity type the "
            "key was not given, an address outside the key's allow list.\n"
            "# TYPE breachd_scope_refusals_total counter\n"
            "breachd_scope_refusals_total{reason=\"out_of_scope\"} %llu\n"
            "breachd_scope_refusals_total{reason=\"type_not_allowed\"} %llu\n"
            "breachd_scope_refusals_total{reason=\"ip_not_allowed\"} %llu\n"
            "# HELP breachd_store_errors_total Store failures (answered 500 or 503).\n"
            "# TYPE breachd_store_errors_total counter\n"
            "breachd_store_errors_total %llu\n"
            "# HELP breachd_open_connections Client connections open now.\n"
            "# TYPE breachd_open_connections gauge\n"
            "breachd_open_connections %lld\n"
            "# HELP breachd_connections_cut_total Connections closed because a request did not "
            "arrive whole within the header timeout.\n"
            "# TYPE breachd_connections_cut_total counter\n"
            "breachd_connections_cut_total %llu\n",
            (unsigned long long)get(&m->rate_limited[BD_LIMIT_KEY_BUDGET]),
            (unsigned long long)get(&m->rate_limited[BD_LIMIT_FAILED_KEYS]),
            (unsigned long long)get(&m->rate_limited[BD_LIMIT_EXACT_LOOKUPS]),
            (unsigned long long)get(&m->scope_refused[BD_SCOPE_REFUSED_DOMAIN]),
            (unsigned long long)get(&m->scope_refused[BD_SCOPE_REFUSED_TYPE]),
            (unsigned long long)get(&m->scope_refused[BD_SCOPE_REFUSED_IP]),
            (unsigned long long)get(&m->store_errors), (long long)open_connections,
            (unsigned long long)cut_connections);
    return r;
}

bd_result bd_metrics_write_limiter(const bd_limiter_health *h, bd_buf *out)
{
    if (!h->shared)
        return BD_OK;
    return bd_buf_printf(
        out,
        "# HELP breachd_shared_limits_up Whether the store of shared rate limits answered last "
        "time (0: budgets are kept per process meanwhile).\n"
        "# TYPE breachd_shared_limits_up gauge\n"
        "breachd_shared_limits_up %d\n"
        "# HELP breachd_shared_limits_errors_total Failed calls to the store of shared rate "
        "limits.\n"
        "# TYPE breachd_shared_limits_errors_total counter\n"
        "breachd_shared_limits_errors_total %llu\n"
        "# HELP breachd_shared_limits_leases_total Leases of requests taken from shared "
        "budgets.\n"
        "# TYPE breachd_shared_limits_leases_total counter\n"
        "breachd_shared_limits_leases_total %llu\n",
        h->reachable ? 1 : 0, (unsigned long long)h->errors, (unsigned long long)h->leases);
}

bd_result bd_metrics_write_webhooks(bd_buf *out)
{
    bd_webhook_counts c;
    bd_webhook_counts_get(&c);
    return bd_buf_printf(
        out,
        "# HELP breachd_webhook_deliveries_total Alerts a webhook receiver took (2xx).\n"
        "# TYPE breachd_webhook_deliveries_total counter\n"
        "breachd_webhook_deliveries_total %llu\n"
        "# HELP breachd_webhook_failed_attempts_total Webhook attempts that did not succeed "
        "(each is retried until 24 h after its alert was written).\n"
        "# TYPE breachd_webhook_failed_attempts_total counter\n"
        "breachd_webhook_failed_attempts_total %llu\n"
        "# HELP breachd_webhook_given_up_total Alerts given up 24 h after they were written.\n"
        "# TYPE breachd_webhook_given_up_total counter\n"
        "breachd_webhook_given_up_total %llu\n",
        (unsigned long long)c.delivered, (unsigned long long)c.failed_attempts,
        (unsigned long long)c.given_up);
}
