/* The server's per-key budgets (a key's hourly requests, its daily exact card lookups), kept
 * either in this process (auth/ratelimit.h) or shared by every server through a store that
 * keeps rate-limit buckets (breachd --shared-limits: the PostgreSQL primary).
 *
 * Shared, each request does not cost a round trip: a server leases requests from a bucket in
 * batches and hands them out from memory. A lease is sized from what the bucket holds after
 * it, 1/64 of that and at most 64 requests, so a bucket within 128 requests of empty (and so
 * every small budget, such as 40 an hour) is taken one request at a time, exactly: all
 * servers together admit the budget and not one request more. What a lease leaves unused
 * goes back to the bucket after a second. Within that second a bucket may refuse one server
 * while another still holds a few of its requests; that is at most 1/64 of what the bucket
 * held at the lease, and never in the bucket's last 128 requests.
 *
 * When the store cannot be reached, budgets are kept per process until it can (the
 * requests a server admits meanwhile are not charged to the shared bucket): one log line
 * when that starts and one when it ends, and bd_limiter_health says so for /metrics.
 *
 * Safe from any number of threads. Each thread that takes from a shared limiter opens its
 * own connection to the store on first use; all are closed by bd_limiter_free, which must
 * run after every thread using the limiter has stopped. */
#ifndef BD_AUTH_LIMITER_H
#define BD_AUTH_LIMITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auth/ratelimit.h"
#include "core/result.h"

typedef enum {
    BD_BUDGET_REQUESTS = 1, /* a key's requests per hour */
    BD_BUDGET_EXACT = 2,    /* a key's card lookups by full number or Hash: per day */
} bd_budget_kind;

typedef struct bd_limiter bd_limiter;

/* A limiter of per-process budgets when shared_uri is NULL, else of budgets shared through
 * the store at shared_uri, which is opened once here to check it (why says what is wrong
 * with it; the URI's password is never in it). */
bd_result bd_limiter_new(const char *shared_uri, bd_limiter **out, char *why, size_t whylen);
/* The same, with the shared store's connections taken from pool (store/pool.h: opened
 * with BD_STORE_WRITE), which the composition root owns and frees after the limiter; NULL:
 * per process. */
struct bd_store_pool;
bd_result bd_limiter_new_pooled(struct bd_store_pool *shared, bd_limiter **out, char *why,
                                size_t whylen);
void bd_limiter_free(bd_limiter *l);

/* Takes one request from budget (kind, id) of `limit` per period_s seconds at now_us. */
void bd_limiter_take(bd_limiter *l, bd_budget_kind kind, int64_t id, int64_t limit,
                     int64_t period_s, int64_t now_us, bd_rate_decision *d);

/* Takes n (>= 1) requests from budget (kind, id) at once, all or none (the shared bucket
 * is asked for all n, past any lease, and what it granted of fewer goes back). */
void bd_limiter_take_many(bd_limiter *l, bd_budget_kind kind, int64_t id, int64_t limit,
                          int64_t period_s, int64_t now_us, int64_t n, bd_rate_decision *d);
/* Housekeeping, about once a second from one thread: gives back leases that have run out,
 * and while the shared store is unreachable, tries it again. */
void bd_limiter_tick(bd_limiter *l, int64_t now_us);

typedef struct {
    bool shared;     /* budgets are shared through a store */
    bool reachable;  /* ... and the store answered the last time it was asked */
    uint64_t errors; /* failed calls to the shared store since start */
    uint64_t leases; /* leases taken from the shared store since start */
} bd_limiter_health;

void bd_limiter_health_get(const bd_limiter *l, bd_limiter_health *h);

#endif
