/* GCRA rate limiting: budget, refill, headers and exactness under threads. */
#include <pthread.h>
#include <stdatomic.h>

#include "auth/ratelimit.h"
#include "test.h"

#define T0 1800000000000000LL /* Unix microseconds */

TEST(test_ratelimit_admits_exactly_the_budget_then_refuses)
{
    bd_ratelimit *rl = bd_ratelimit_new(64);
    bd_rate_decision d;
    for (int i = 0; i < 5; i++) {
        bd_ratelimit_take(rl, 7, 5, 3600, T0, &d);
        CHECK(d.allowed);
        CHECK_INT(d.remaining, 4 - i);
        CHECK_INT(d.limit, 5);
    }
    bd_ratelimit_take(rl, 7, 5, 3600, T0, &d);
    CHECK(!d.allowed);
    CHECK_INT(d.remaining, 0);
    CHECK_INT(d.retry_after, 720); /* one share of an hour for a budget of 5 */
    CHECK_INT(d.reset, T0 / 1000000 + 3600);
    bd_ratelimit_free(rl);
}

TEST(test_ratelimit_refills_continuously_without_double_burst)
{
    bd_ratelimit *rl = bd_ratelimit_new(64);
    bd_rate_decision d;
    for (int i = 0; i < 5; i++)
        bd_ratelimit_take(rl, 1, 5, 3600, T0, &d);
    bd_ratelimit_take(rl, 1, 5, 3600, T0 + 719LL * 1000000, &d);
    CHECK(!d.allowed);
    bd_ratelimit_take(rl, 1, 5, 3600, T0 + 720LL * 1000000, &d);
    CHECK(d.allowed);
    CHECK_INT(d.remaining, 0);
    /* A full hour later the bucket holds 5 again, never 10. */
    int ok = 0;
    for (int i = 0; i < 12; i++) {
        bd_ratelimit_take(rl, 1, 5, 3600, T0 + 7200LL * 1000000, &d);
        ok += d.allowed;
    }
    CHECK_INT(ok, 5);
    bd_ratelimit_free(rl);
}

TEST(test_ratelimit_ids_are_independent)
{
    bd_ratelimit *rl = bd_ratelimit_new(64);
    bd_rate_decision d;
    bd_ratelimit_take(rl, 1, 1, 3600, T0, &d);
    CHECK(d.allowed);
    bd_ratelimit_take(rl, 1, 1, 3600, T0, &d);
    CHECK(!d.allowed);
    bd_ratelimit_take(rl, 2, 1, 3600, T0, &d);
    CHECK(d.allowed);
    bd_ratelimit_free(rl);
}

TEST(test_ratelimit_full_table_reuses_the_idlest_bucket)
{
    bd_ratelimit *rl = bd_ratelimit_new(64);
    bd_rate_decision d;
    for (uint64_t id = 1; id <= 1000; id++) {
        bd_ratelimit_take(rl, id, 10, 60, T0 + (int64_t)id, &d);
        CHECK(d.allowed);
    }
    bd_ratelimit_free(rl);
}

static bd_ratelimit *shared;
static atomic_int admitted;

static void *hammer(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1000; i++) {
        bd_rate_decision d;
        bd_ratelimit_take(shared, 42, 100, 3600, T0, &d);
        if (d.allowed)
            atomic_fetch_add(&admitted, 1);
    }
    return NULL;
}

TEST(test_ratelimit_is_exact_under_concurrency)
{
    shared = bd_ratelimit_new(64);
    pthread_t th[8];
    for (int i = 0; i < 8; i++)
        pthread_create(&th[i], NULL, hammer, NULL);
    for (int i = 0; i < 8; i++)
        pthread_join(th[i], NULL);
    CHECK_INT(atomic_load(&admitted), 100);
    bd_ratelimit_free(shared);
}

/* Several requests at once (a bulk job's identities by the thousand): all of them or none,
 * and a refusal says when the bucket holds them all. */
TEST(test_ratelimit_takes_many_at_once_or_none)
{
    bd_ratelimit *rl = bd_ratelimit_new(64);
    bd_rate_decision d;
    bd_ratelimit_take_n(rl, 3, 10, 3600, T0, 4, &d);
    CHECK(d.allowed);
    CHECK_INT(d.remaining, 6);
    bd_ratelimit_take_n(rl, 3, 10, 3600, T0, 7, &d); /* 6 left: none taken */
    CHECK(!d.allowed);
    CHECK_INT(d.retry_after, 360); /* one share (360 s) more and the bucket holds 7 */
    bd_ratelimit_take_n(rl, 3, 10, 3600, T0, 6, &d);
    CHECK(d.allowed);
    CHECK_INT(d.remaining, 0);
    bd_ratelimit_take_n(rl, 3, 10, 3600, T0, 11, &d); /* more than the bucket: never */
    CHECK(!d.allowed);
    bd_ratelimit_take_n(rl, 4, 10, 3600, T0, 11, &d);
    CHECK(!d.allowed);
    bd_ratelimit_take(rl, 4, 10, 3600, T0, &d); /* the refusal took nothing */
    CHECK(d.allowed);
    CHECK_INT(d.remaining, 9);
    bd_ratelimit_free(rl);
}

int main(void)
{
    RUN(test_ratelimit_admits_exactly_the_budget_then_refuses);
    RUN(test_ratelimit_refills_continuously_without_double_burst);
    RUN(test_ratelimit_ids_are_independent);
    RUN(test_ratelimit_full_table_reuses_the_idlest_bucket);
    RUN(test_ratelimit_is_exact_under_concurrency);
    RUN(test_ratelimit_takes_many_at_once_or_none);
    return TEST_EXIT();
}
