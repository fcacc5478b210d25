/* Per-key budgets (auth/limiter.h) and the store's shared rate-limit buckets (store.h) on
 * every backend: per process on any store, shared only through one that keeps buckets
 * (PostgreSQL), refused at start through one that does not (SQLite). store_fixture.h runs
 * each test on SQLite and, when BREACHD_TEST_PG_URI names a server, on PostgreSQL. */
#include <pthread.h>

#include "auth/limiter.h"
#include "store_fixture.h"

#define T0 1800000000000000LL /* a fixed "now", Unix microseconds */
#define HOUR 3600

/* A limiter sharing budgets through a new store; NULL (with the reason checked) on a
 * backend that cannot share them. */
static bd_limiter *shared(void)
{
    fresh();
    bd_limiter *l = NULL;
    char why[512] = "";
    bd_result r = bd_limiter_new(fresh_uri(), &l, why, sizeof why);
    if (backend == FX_SQLITE) {
        CHECK_INT(r, BD_ERR_INVALID);
        CHECK(strstr(why, "cannot keep shared rate limits; name a PostgreSQL store") != NULL);
        return NULL;
    }
    CHECK_INT(r, BD_OK);
    return l;
}

/* Two limiters sharing budgets through one new store, as two servers would; false on a
 * backend that cannot share them. */
static bool shared_pair(bd_limiter **a, bd_limiter **b)
{
    *b = NULL;
    if (!(*a = shared()))
        return false;
    char why[512];
    CHECK_INT(bd_limiter_new(fresh_uri(), b, why, sizeof why), BD_OK);
    return *b != NULL;
}

/* Takes n requests at now; returns how many were admitted. */
static int take_n(bd_limiter *l, int64_t id, int64_t limit, int n, int64_t now)
{
    int admitted = 0;
    for (int i = 0; i < n; i++) {
        bd_rate_decision d;
        bd_limiter_take(l, BD_BUDGET_REQUESTS, id, limit, HOUR, now, &d);
        admitted += d.allowed;
    }
    return admitted;
}

TEST(test_store_bucket_admits_what_fits_and_takes_back_what_is_given)
{
    bd_store *s = fresh();
    int64_t granted, tat;
    /* 10 requests an hour: a share of 360 s, a depth of 3,600 s */
    int64_t share = 360000000, depth = 3600000000LL;
    bd_result r = bd_store_rate_take(s, 1, 7, T0, share, depth, 4, &granted, &tat);
    if (backend == FX_SQLITE) {
        CHECK_INT(r, BD_ERR_INVALID);
        CHECK_INT(bd_store_rate_give_back(s, 1, 7, 0, share), BD_ERR_INVALID);
        return;
    }
    CHECK_INT(r, BD_OK);
    CHECK_INT(granted, 4);
    CHECK_INT(tat, T0 + 4 * share);
    CHECK_INT(bd_store_rate_take(s, 1, 7, T0, share, depth, 64, &granted, &tat), BD_OK);
    CHECK_INT(granted, 6); /* only what is left */
    CHECK_INT(tat, T0 + depth);
    CHECK_INT(bd_store_rate_take(s, 1, 7, T0, share, depth, 1, &granted, &tat), BD_OK);
    CHECK_INT(granted, 0);
    CHECK_INT(tat, T0 + depth); /* a refusal stores nothing */
    /* another kind and another id are other buckets */
    CHECK_INT(bd_store_rate_take(s, 2, 7, T0, share, depth, 1, &granted, &tat), BD_OK);
    CHECK_INT(granted, 1);
    CHECK_INT(bd_store_rate_take(s, 1, 8, T0, share, depth, 1, &granted, &tat), BD_OK);
    CHECK_INT(granted, 1);
    /* two given back are two more */
    CHECK_INT(bd_store_rate_give_back(s, 1, 7, 2, share), BD_OK);
    CHECK_INT(bd_store_rate_take(s, 1, 7, T0, share, depth, 5, &granted, &tat), BD_OK);
    CHECK_INT(granted, 2);
    /* one share later, one more */
    CHECK_INT(bd_store_rate_take(s, 1, 7, T0 + share, share, depth, 5, &granted, &tat), BD_OK);
    CHECK_INT(granted, 1);
    CHECK_INT(tat, T0 + share + depth);
}

TEST(test_per_process_budget_on_any_store)
{
    bd_limiter *l = NULL;
    char why[64];
    CHECK_INT(bd_limiter_new(NULL, &l, why, sizeof why), BD_OK);
    CHECK_INT(take_n(l, 1, 40, 50, T0), 40);
    bd_rate_decision d;
    bd_limiter_take(l, BD_BUDGET_EXACT, 1, 3, 86400, T0, &d); /* a budget of its own */
    CHECK(d.allowed);
    CHECK_INT(d.remaining, 2);
    bd_limiter_free(l);
}

TEST(test_shared_small_budget_is_exact_across_limiters)
{
    bd_limiter *a, *b;
    if (!shared_pair(&a, &b))
        return;
    int admitted = 0;
    for (int i = 0; i < 30; i++)
        admitted += take_n(i % 2 ? a : b, 5, 40, 1, T0) + take_n(i % 3 ? b : a, 5, 40, 1, T0);
    CHECK_INT(admitted, 40);
    bd_rate_decision d;
    bd_limiter_take(a, BD_BUDGET_REQUESTS, 5, 40, HOUR, T0, &d);
    CHECK(!d.allowed);
    CHECK_INT(d.remaining, 0);
    CHECK_INT(d.retry_after, 90); /* one share of 40 an hour */
    CHECK_INT(d.limit, 40);
    bd_limiter_free(a);
    bd_limiter_free(b);
}

/* Many requests at once (a bulk job's identities or result rows by the thousand): all or
 * none, from the shared bucket whatever another server holds, and a refusal takes nothing. */
TEST(test_shared_budget_takes_many_at_once_or_none)
{
    bd_limiter *a, *b;
    if (!shared_pair(&a, &b))
        return;
    bd_rate_decision d;
    bd_limiter_take_many(a, BD_BUDGET_REQUESTS, 9, 10, HOUR, T0, 4, &d);
    CHECK(d.allowed);
    CHECK_INT(take_n(b, 9, 10, 1, T0), 1); /* 5 left */
    bd_limiter_take_many(b, BD_BUDGET_REQUESTS, 9, 10, HOUR, T0, 6, &d);
    CHECK(!d.allowed);
    CHECK(d.retry_after > 0);
    bd_limiter_take_many(a, BD_BUDGET_REQUESTS, 9, 10, HOUR, T0, 5, &d);
    CHECK(d.allowed);
    CHECK_INT(take_n(a, 9, 10, 1, T0) + take_n(b, 9, 10, 1, T0), 0);
    bd_limiter_free(a);
    bd_limiter_free(b);
}

TEST(test_shared_large_budget_is_leased_in_batches)
{
    bd_limiter *a, *b;
    if (!shared_pair(&a, &b))
        return;
    /* 1,000 an hour: the first lease is of one request, then of (what is left) / 64 */
    CHECK_INT(take_n(a, 9, 1000, 1, T0), 1);
    CHECK_INT(take_n(a, 9, 1000, 1, T0), 1); /* a lease of 999 / 64 = 15 */
    bd_limiter_health h;
    bd_limiter_health_get(a, &h);
    CHECK(h.shared && h.reachable);
    CHECK_INT(h.leases, 2);
    /* b cannot take the 14 leased to a ... */
    CHECK_INT(take_n(b, 9, 1000, 2000, T0), 1000 - 16);
    /* ... which a hands out without a store call */
    CHECK_INT(take_n(a, 9, 1000, 14, T0), 14);
    bd_limiter_health_get(a, &h);
    CHECK_INT(h.leases, 2);
    CHECK_INT(take_n(a, 9, 1000, 1, T0), 0);
    CHECK_INT(take_n(b, 9, 1000, 1, T0), 0);
    bd_limiter_health_get(b, &h);
    CHECK_INT(h.errors, 0);
    bd_limiter_free(a);
    bd_limiter_free(b);
}

TEST(test_shared_lease_unused_for_a_second_is_given_back_by_the_tick)
{
    bd_limiter *a, *b;
    if (!shared_pair(&a, &b))
        return;
    CHECK_INT(take_n(a, 3, 1000, 2, T0), 2); /* a holds a lease of 15, 14 unused */
    CHECK_INT(take_n(b, 3, 1000, 2000, T0), 1000 - 16);
    bd_limiter_tick(a, T0 + 500000); /* not yet run out */
    CHECK_INT(take_n(b, 3, 1000, 20, T0), 0);
    bd_limiter_tick(a, T0 + 1000000);
    CHECK_INT(take_n(b, 3, 1000, 20, T0), 14);
    bd_limiter_free(a);
    bd_limiter_free(b);
}

typedef struct {
    bd_limiter *l;
    int admitted;
} racer;

static void *race(void *arg)
{
    racer *r = arg;
    r->admitted = take_n(r->l, 11, 500, 200, T0);
    return NULL;
}

TEST(test_shared_budget_from_many_threads_never_admits_more)
{
    bd_limiter *a, *b;
    if (!shared_pair(&a, &b))
        return;
    racer rs[8];
    pthread_t th[8];
    for (int i = 0; i < 8; i++) {
        rs[i] = (racer){i % 2 ? a : b, 0};
        pthread_create(&th[i], NULL, race, &rs[i]);
    }
    int admitted = 0;
    for (int i = 0; i < 8; i++) {
        pthread_join(th[i], NULL);
        admitted += rs[i].admitted;
    }
    /* what a lease still holds when the threads stop is not admitted: at most a lease per
     * limiter, and none in the bucket's last 128 */
    CHECK(admitted <= 500);
    CHECK(admitted >= 500 - 2 * 64);
    bd_limiter_tick(a, T0 + 2000000);
    bd_limiter_tick(b, T0 + 2000000);
    admitted += take_n(a, 11, 500, 500, T0);
    CHECK_INT(admitted, 500);
    bd_limiter_free(a);
    bd_limiter_free(b);
}

static void suite(void)
{
    RUN_CONTRACT(test_store_bucket_admits_what_fits_and_takes_back_what_is_given);
    RUN_CONTRACT(test_per_process_budget_on_any_store);
    RUN_CONTRACT(test_shared_small_budget_is_exact_across_limiters);
    RUN_CONTRACT(test_shared_budget_takes_many_at_once_or_none);
    RUN_CONTRACT(test_shared_large_budget_is_leased_in_batches);
    RUN_CONTRACT(test_shared_lease_unused_for_a_second_is_given_back_by_the_tick);
    RUN_CONTRACT(test_shared_budget_from_many_threads_never_admits_more);
}

int main(void)
{
    return fx_main(suite);
}
