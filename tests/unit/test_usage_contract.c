/* Per-key usage and quotas on every backend: the store's key quota and day/month counters
 * (store.h, "per-key usage"), and auth/usage.h over them: exact at the quota's boundary from
 * several connections and threads, batches for keys without a quota, counts that outlive the
 * process. store_fixture.h runs each test on SQLite and, when BREACHD_TEST_PG_URI names a
 * server, on PostgreSQL. */
#include <pthread.h>

#include "auth/usage.h"
#include "store_fixture.h"

#define NOV24 1795478400LL /* 2026-11-24T00:00:00Z */
#define US 1000000LL

static int64_t add_key(bd_store *s, const char *name, int64_t quota)
{
    bd_key_row k = {.name = bd_slice_from(name),
                    .plan = BD_SLICE_LIT("standard"),
                    .rate_per_hour = 1000,
                    .created_at = NOV24,
                    .quota_per_month = quota};
    k.hash[0] = (uint8_t)name[0];
    k.hash[1] = (uint8_t)strlen(name);
    int64_t id = 0;
    CHECK_INT(bd_store_key_add(s, &k, &id), BD_OK);
    return id;
}

static char listed[256];

static int take_quota(void *ctx, const bd_key_row *k)
{
    (void)ctx;
    size_t n = strlen(listed);
    snprintf(listed + n, sizeof listed - n, "%s%lld:%lld", n ? "," : "", (long long)k->id,
             (long long)k->quota_per_month);
    return 0;
}

static const char *quotas(bd_store *s)
{
    listed[0] = '\0';
    CHECK_INT(bd_store_key_list(s, take_quota, NULL), BD_OK);
    return listed;
}

TEST(test_key_quota_is_stored_listed_and_changed)
{
    bd_store *s = fresh();
    int64_t a = add_key(s, "a", 5), b = add_key(s, "bb", 0);
    CHECK_STR(quotas(s), "1:5,2:0");
    int64_t g0, g1;
    CHECK_INT(bd_store_key_generation(s, &g0), BD_OK);
    CHECK_INT(bd_store_key_set_quota(s, b, 1000000000000LL), BD_OK);
    CHECK_INT(bd_store_key_set_quota(s, a, 0), BD_OK);
    CHECK_INT(bd_store_key_generation(s, &g1), BD_OK);
    CHECK_INT(g1, g0 + 2); /* servers reload keys: the change applies */
    CHECK_STR(quotas(s), "1:0,2:1000000000000");
    CHECK_INT(bd_store_key_set_quota(s, 99, 5), BD_ERR_NOT_FOUND);
    CHECK_INT(bd_store_key_revoke(s, a, NOV24), BD_OK);
    CHECK_INT(bd_store_key_set_quota(s, a, 5), BD_ERR_NOT_FOUND); /* revoked stays as it was */
    CHECK_STR(quotas(s), "1:0,2:1000000000000");
}

static void check_usage(bd_store *s, int64_t key, int32_t day, int64_t want_day,
                        int64_t want_month)
{
    int64_t d = -1, m = -1;
    CHECK_INT(bd_store_usage_get(s, key, day, &d, &m), BD_OK);
    CHECK_INT(d, want_day);
    CHECK_INT(m, want_month);
}

TEST(test_usage_counts_each_day_and_month_apart)
{
    bd_store *s = fresh();
    int64_t added, month;
    CHECK_INT(bd_store_usage_add(s, 1, 20261123, 3, 0, &added, &month), BD_OK);
    CHECK_INT(added, 3);
    CHECK_INT(month, 3);
    CHECK_INT(bd_store_usage_add(s, 1, 20261124, 2, 0, &added, &month), BD_OK);
    CHECK_INT(month, 5);
    CHECK_INT(bd_store_usage_add(s, 1, 20261201, 1, 0, &added, &month), BD_OK);
    CHECK_INT(month, 1); /* a new month starts from nothing */
    CHECK_INT(bd_store_usage_add(s, 2, 20261124, 7, 0, &added, &month), BD_OK);
    check_usage(s, 1, 20261124, 2, 5);
    check_usage(s, 1, 20261130, 0, 5);
    check_usage(s, 1, 20261201, 1, 1);
    check_usage(s, 1, 20270101, 0, 0);
    check_usage(s, 2, 20261124, 7, 7);
    check_usage(s, 3, 20261124, 0, 0); /* never counted */
    CHECK_INT(bd_store_usage_add(s, 1, 20261124, 0, 0, &added, &month), BD_ERR_INVALID);
    CHECK_INT(bd_store_usage_add(s, 1, 20261124, 1, -1, &added, &month), BD_ERR_INVALID);
}

TEST(test_usage_quota_admits_exactly_the_quota_across_connections)
{
    bd_store *s = fresh(), *t = open_uri(fresh_uri(), BD_STORE_WRITE);
    int64_t added, month, admitted = 0;
    for (int i = 0; i < 8; i++) {
        CHECK_INT(bd_store_usage_add(i % 2 ? t : s, 1, 20261124, 1, 5, &added, &month), BD_OK);
        admitted += added;
        CHECK_INT(month, i < 5 ? i + 1 : 5);
        CHECK_INT(added, i < 5 ? 1 : 0);
    }
    CHECK_INT(admitted, 5);
    check_usage(t, 1, 20261124, 5, 5); /* refusals are not counted */
    /* a batch that would pass the quota adds nothing; one that fits adds */
    CHECK_INT(bd_store_usage_add(s, 2, 20261124, 4, 5, &added, &month), BD_OK);
    CHECK_INT(bd_store_usage_add(s, 2, 20261124, 2, 5, &added, &month), BD_OK);
    CHECK_INT(added, 0);
    CHECK_INT(month, 4);
    /* a raised quota admits again in the same month; the next month starts afresh */
    CHECK_INT(bd_store_usage_add(t, 1, 20261130, 1, 6, &added, &month), BD_OK);
    CHECK_INT(added, 1);
    CHECK_INT(bd_store_usage_add(t, 1, 20261201, 1, 1, &added, &month), BD_OK);
    CHECK_INT(added, 1);
    CHECK_INT(bd_store_usage_add(t, 1, 20261201, 1, 1, &added, &month), BD_OK);
    CHECK_INT(added, 0);
}

TEST(test_usage_give_back_takes_from_the_day_and_the_month_never_below_zero)
{
    bd_store *s = fresh();
    int64_t added, month;
    CHECK_INT(bd_store_usage_add(s, 1, 20261124, 5, 10, &added, &month), BD_OK);
    CHECK_INT(bd_store_usage_add(s, 1, 20261125, 1, 10, &added, &month), BD_OK);
    CHECK_INT(bd_store_usage_give_back(s, 1, 20261124, 2), BD_OK);
    check_usage(s, 1, 20261124, 3, 4);
    CHECK_INT(bd_store_usage_give_back(s, 1, 20261125, 9), BD_OK);
    check_usage(s, 1, 20261125, 0, 0);
    check_usage(s, 1, 20261124, 3, 0);
    CHECK_INT(bd_store_usage_give_back(s, 2, 20261124, 1), BD_OK); /* nothing to take from */
    check_usage(s, 2, 20261124, 0, 0);
    CHECK_INT(bd_store_usage_give_back(s, 1, 20261124, 0), BD_ERR_INVALID);
}

#define THREADS 4
#define TRIES 40
#define QUOTA 100

typedef struct {
    const char *uri;
    int64_t admitted;
    bool failed;
} racer;

static void *race(void *arg)
{
    racer *r = arg;
    bd_store *s;
    char why[512];
    if (bd_store_open(r->uri, BD_STORE_WRITE, &s, why, sizeof why) != BD_OK) {
        r->failed = true;
        return NULL;
    }
    for (int i = 0; i < TRIES; i++) {
        int64_t added, month;
        if (bd_store_usage_add(s, 7, 20261124, 1, QUOTA, &added, &month) != BD_OK)
            r->failed = true;
        r->admitted += added;
    }
    bd_store_close(s);
    return NULL;
}

TEST(test_usage_quota_is_exact_with_concurrent_writers)
{
    bd_store *s = fresh();
    racer r[THREADS];
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++) {
        r[i] = (racer){.uri = fresh_uri()};
        CHECK_INT(pthread_create(&th[i], NULL, race, &r[i]), 0);
    }
    int64_t total = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
        CHECK(!r[i].failed);
        total += r[i].admitted;
    }
    CHECK_INT(total, QUOTA); /* 160 tries, exactly 100 admitted */
    check_usage(s, 7, 20261124, QUOTA, QUOTA);
}

TEST(test_usage_counts_keys_without_quota_in_batches_that_outlive_the_process)
{
    bd_store *s = fresh();
    int64_t now = (NOV24 + 3600) * US, today, month;
    bd_usage *u = bd_usage_new(fresh_uri());
    CHECK(u != NULL);
    for (int i = 0; i < 3; i++)
        CHECK(bd_usage_take(u, 4, 0, now, NULL));
    check_usage(s, 4, 20261124, 0, 0); /* not written yet ... */
    CHECK_INT(bd_usage_get(u, 4, now, &today, &month), BD_OK);
    CHECK_INT(today, 3); /* ... but this process counts it */
    CHECK_INT(month, 3);
    bd_usage_flush(u, now);
    check_usage(s, 4, 20261124, 3, 3);
    CHECK(bd_usage_take(u, 4, 0, now, NULL));
    CHECK(bd_usage_take(u, 4, 0, now + 86400 * US, NULL)); /* the next day */
    bd_usage_free(u);                                      /* writes what it kept */
    check_usage(s, 4, 20261124, 4, 5);
    check_usage(s, 4, 20261125, 1, 5);
}

TEST(test_usage_quota_is_exact_across_two_servers_and_a_restart)
{
    fresh();
    int64_t now = (NOV24 + 60) * US, used, today, month;
    bd_usage *a = bd_usage_new(fresh_uri()), *b = bd_usage_new(fresh_uri());
    int admitted = 0;
    for (int i = 0; i < 6; i++)
        admitted += bd_usage_take(i % 2 ? b : a, 9, 4, now, &used);
    CHECK_INT(admitted, 4);
    CHECK_INT(used, 4);
    bd_usage_free(a);
    a = bd_usage_new(fresh_uri()); /* a restart: the month's count is the store's */
    CHECK(!bd_usage_take(a, 9, 4, now, &used));
    CHECK_INT(used, 4);
    CHECK(bd_usage_take(a, 9, 5, now, &used)); /* a raised quota */
    CHECK_INT(used, 5);
    CHECK_INT(bd_usage_get(b, 9, now, &today, &month), BD_OK);
    CHECK_INT(today, 5);
    CHECK_INT(month, 5);
    /* the next month (2026-12-01) starts afresh */
    CHECK(bd_usage_take(b, 9, 4, (NOV24 + 7 * 86400) * US, &used));
    CHECK_INT(used, 1);
    bd_usage_free(a);
    bd_usage_free(b);
}

TEST(test_usage_leases_a_large_quota_and_gives_back_the_rest)
{
    bd_store *s = fresh();
    int64_t now = (NOV24 + 60) * US, used, today, month;
    bd_usage *u = bd_usage_new(fresh_uri());
    CHECK(bd_usage_take(u, 3, 10000, now, &used)); /* a first lease of 1 */
    CHECK_INT(used, 1);
    CHECK(bd_usage_take(u, 3, 10000, now, &used)); /* then 1/64 of 9999, at most 64 */
    CHECK_INT(used, 2);
    check_usage(s, 3, 20261124, 65, 65); /* counted in the store ahead of use ... */
    CHECK_INT(bd_usage_get(u, 3, now, &today, &month), BD_OK);
    CHECK_INT(today, 2); /* ... but not reported as used */
    CHECK_INT(month, 2);
    bd_usage_flush(u, now + US / 2); /* not run out yet */
    check_usage(s, 3, 20261124, 65, 65);
    bd_usage_flush(u, now + US); /* the rest goes back after a second */
    check_usage(s, 3, 20261124, 2, 2);
    CHECK(bd_usage_take(u, 3, 10000, now + 2 * US, &used));
    CHECK_INT(used, 3);
    bd_usage_free(u); /* gives back its lease */
    check_usage(s, 3, 20261124, 3, 3);
}

TEST(test_usage_leases_of_two_servers_admit_exactly_the_quota)
{
    bd_store *s = fresh();
    int64_t now = (NOV24 + 60) * US, used;
    bd_usage *a = bd_usage_new(fresh_uri()), *b = bd_usage_new(fresh_uri());
    int admitted = 0, last_admitted = -1;
    for (int i = 0; i < 1200; i++) {
        if (bd_usage_take(i % 3 ? a : b, 5, 1000, now, &used)) {
            admitted++;
            last_admitted = i;
        }
    }
    CHECK_INT(admitted, 1000);
    CHECK_INT(last_admitted, 999); /* no request refused before the quota was used up */
    check_usage(s, 5, 20261124, 1000, 1000);
    bd_usage_free(a);
    bd_usage_free(b);
    check_usage(s, 5, 20261124, 1000, 1000);
}

static void suite(void)
{
    RUN_CONTRACT(test_key_quota_is_stored_listed_and_changed);
    RUN_CONTRACT(test_usage_counts_each_day_and_month_apart);
    RUN_CONTRACT(test_usage_quota_admits_exactly_the_quota_across_connections);
    RUN_CONTRACT(test_usage_quota_is_exact_with_concurrent_writers);
    RUN_CONTRACT(test_usage_give_back_takes_from_the_day_and_the_month_never_below_zero);
    RUN_CONTRACT(test_usage_leases_a_large_quota_and_gives_back_the_rest);
    RUN_CONTRACT(test_usage_leases_of_two_servers_admit_exactly_the_quota);
    RUN_CONTRACT(test_usage_counts_keys_without_quota_in_batches_that_outlive_the_process);
    RUN_CONTRACT(test_usage_quota_is_exact_across_two_servers_and_a_restart);
}

int main(void)
{
    return fx_main(suite);
}
