/* The lookup log's buffer (auth/lookup_log.h) on every backend: what requests note is written
 * by a flush, found by its hash, kept after a failed flush, bounded (the rest counted as
 * dropped), and safe from many threads at once; its hash separates types and depends on the
 * secret. */
#include <pthread.h>

#include "auth/lookup_log.h"
#include "ingest/normalize.h"
#include "store_fixture.h"

static const uint8_t SECRET[32] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
static const uint8_t OTHER_SECRET[32] = {9, 8, 7};

static int count_rows(void *ctx, const bd_lookup_row *r)
{
    (void)r;
    (*(int64_t *)ctx)++;
    return 0;
}

static int64_t found(bd_store *s, int type, const char *key)
{
    uint8_t h[32];
    bd_lookup_hash(SECRET, type, bd_slice_from(key), h);
    int64_t n = 0;
    CHECK_INT(bd_store_lookup_find(s, h, 1000000, count_rows, &n), BD_OK);
    return n;
}

TEST(test_hash_separates_types_values_and_secrets)
{
    uint8_t a[32], b[32], c[32], d[32], e[32];
    bd_lookup_hash(SECRET, BD_ID_EMAIL, BD_SLICE_LIT("a@b.example"), a);
    bd_lookup_hash(SECRET, BD_ID_EMAIL, BD_SLICE_LIT("a@b.example"), b);
    bd_lookup_hash(SECRET, BD_ID_USERNAME, BD_SLICE_LIT("a@b.example"), c);
    bd_lookup_hash(OTHER_SECRET, BD_ID_EMAIL, BD_SLICE_LIT("a@b.example"), d);
    bd_lookup_hash(SECRET, BD_ID_EMAIL, BD_SLICE_LIT("a@c.example"), e);
    CHECK(memcmp(a, b, 32) == 0);
    CHECK(memcmp(a, c, 32) != 0);
    CHECK(memcmp(a, d, 32) != 0);
    CHECK(memcmp(a, e, 32) != 0);
}

TEST(test_noted_searches_are_written_by_a_flush_and_found_by_hash)
{
    bd_store *s = fresh();
    bd_lookup_log *l = bd_lookup_log_new();
    CHECK(l != NULL);
    if (!s || !l)
        return;
    bd_lookup_log_note(l, SECRET, 1000, 7, BD_ID_EMAIL, BD_SLICE_LIT("a@b.example"));
    bd_lookup_log_note(l, SECRET, 1001, 8, BD_ID_EMAIL, BD_SLICE_LIT("a@b.example"));
    bd_lookup_log_note(l, SECRET, 1002, 8, BD_ID_USERNAME, BD_SLICE_LIT("a@b.example"));
    CHECK_INT(found(s, BD_ID_EMAIL, "a@b.example"), 0); /* not before the flush */
    size_t written = 99;
    CHECK_INT(bd_lookup_log_flush(l, s, &written), BD_OK);
    CHECK_INT(written, 3);
    CHECK_INT(found(s, BD_ID_EMAIL, "a@b.example"), 2);
    CHECK_INT(found(s, BD_ID_USERNAME, "a@b.example"), 1);
    CHECK_INT(bd_lookup_log_flush(l, s, &written), BD_OK); /* nothing new */
    CHECK_INT(written, 0);
    CHECK_INT(found(s, BD_ID_EMAIL, "a@b.example"), 2);
    bd_lookup_log_free(l);
}

TEST(test_write_many_and_expire)
{
    bd_store *s = fresh();
    if (!s)
        return;
    bd_slice keys[5000];
    for (size_t i = 0; i < 5000; i++)
        keys[i] = i % 2 ? BD_SLICE_LIT("odd@x.example") : BD_SLICE_LIT("even@x.example");
    CHECK_INT(bd_lookup_log_write_many(s, SECRET, 500, 3, BD_ID_EMAIL, keys, 5000), BD_OK);
    CHECK_INT(found(s, BD_ID_EMAIL, "odd@x.example"), 2500);
    CHECK_INT(found(s, BD_ID_EMAIL, "even@x.example"), 2500);
    bd_lookup_log *l = bd_lookup_log_new();
    bd_lookup_log_note(l, SECRET, 900, 3, BD_ID_EMAIL, BD_SLICE_LIT("odd@x.example"));
    CHECK_INT(bd_lookup_log_flush(l, s, NULL), BD_OK);
    int64_t deleted = 0;
    CHECK_INT(bd_store_lookup_expire(s, 600, &deleted), BD_OK);
    CHECK_INT(deleted, 5000);
    CHECK_INT(found(s, BD_ID_EMAIL, "odd@x.example"), 1);
    CHECK_INT(found(s, BD_ID_EMAIL, "even@x.example"), 0);
    bd_lookup_log_free(l);
}

TEST(test_repeats_within_a_minute_are_one_row)
{
    bd_store *s = fresh();
    bd_lookup_log *l = bd_lookup_log_new();
    if (!s || !l)
        return;
    for (int i = 0; i < 100; i++) /* 600..659: one minute */
        bd_lookup_log_note(l, SECRET, 600 + i % 60, 1, BD_ID_EMAIL, BD_SLICE_LIT("r@x.example"));
    bd_lookup_log_note(l, SECRET, 630, 2, BD_ID_EMAIL, BD_SLICE_LIT("r@x.example"));    /* key */
    bd_lookup_log_note(l, SECRET, 630, 1, BD_ID_USERNAME, BD_SLICE_LIT("r@x.example")); /* type */
    bd_lookup_log_note(l, SECRET, 660, 1, BD_ID_EMAIL, BD_SLICE_LIT("r@x.example"));    /* minute */
    bd_lookup_log_note(l, SECRET, 661, 1, BD_ID_EMAIL, BD_SLICE_LIT("r@x.example"));
    size_t written = 0;
    CHECK_INT(bd_lookup_log_flush(l, s, &written), BD_OK);
    CHECK_INT(written, 4);
    CHECK_INT(found(s, BD_ID_EMAIL, "r@x.example"), 3);
    CHECK_INT(found(s, BD_ID_USERNAME, "r@x.example"), 1);
    bd_lookup_log_free(l);
}

/* n distinct emails "<prefix><i>@x.example" noted by key_id at second at. */
static void note_distinct(bd_lookup_log *l, const char *prefix, int n, int64_t key_id, int64_t at)
{
    for (int i = 0; i < n; i++) {
        char e[64];
        snprintf(e, sizeof e, "%s%d@x.example", prefix, i);
        bd_lookup_log_note(l, SECRET, at, key_id, BD_ID_EMAIL, bd_slice_from(e));
    }
}

TEST(test_a_full_buffer_drops_and_counts_the_rest)
{
    bd_store *s = fresh();
    bd_lookup_log *l = bd_lookup_log_new();
    if (!s || !l)
        return;
    note_distinct(l, "full", BD_LOOKUP_LOG_CAP + 10, 1, 1);
    CHECK_INT(bd_lookup_log_take_dropped(l), 10);
    CHECK_INT(bd_lookup_log_take_dropped(l), 0);
    CHECK(bd_lookup_log_wait(l, 5000)); /* half full: no wait */
    size_t written = 0;
    CHECK_INT(bd_lookup_log_flush(l, s, &written), BD_OK);
    CHECK_INT(written, BD_LOOKUP_LOG_CAP);
    CHECK_INT(found(s, BD_ID_EMAIL, "full0@x.example"), 1);
    CHECK_INT(found(s, BD_ID_EMAIL, "full65535@x.example"), 1);
    CHECK_INT(found(s, BD_ID_EMAIL, "full65536@x.example"), 0); /* dropped */
    CHECK(!bd_lookup_log_wait(l, 20)); /* empty: the timeout */
    bd_lookup_log_wake(l);
    CHECK(bd_lookup_log_wait(l, 5000));
    bd_lookup_log_free(l);
}

TEST(test_a_failed_flush_keeps_its_rows)
{
    bd_store *s = fresh();
    bd_lookup_log *l = bd_lookup_log_new();
    if (!s || !l)
        return;
    bd_store *ro = open_uri(fresh_uri(), BD_STORE_READ); /* refuses every write */
    if (!ro)
        return;
    bd_lookup_log_note(l, SECRET, 5, 1, BD_ID_EMAIL, BD_SLICE_LIT("kept@x.example"));
    size_t written = 9;
    CHECK(bd_lookup_log_flush(l, ro, &written) != BD_OK);
    CHECK_INT(written, 0);
    bd_lookup_log_note(l, SECRET, 65, 1, BD_ID_EMAIL, BD_SLICE_LIT("kept@x.example"));
    CHECK_INT(bd_lookup_log_flush(l, s, &written), BD_OK);
    CHECK_INT(written, 2);
    CHECK_INT(found(s, BD_ID_EMAIL, "kept@x.example"), 2);
    bd_lookup_log_free(l);
}

#define THREADS 4
#define PER_THREAD 5000

typedef struct {
    bd_lookup_log *l;
    int64_t key_id;
} noter_arg;

static void *noter(void *arg)
{
    noter_arg *a = arg;
    for (int i = 0; i < PER_THREAD; i++) { /* each its own minute: none is a repeat */
        bd_lookup_log_note(a->l, SECRET, (int64_t)i * 60, a->key_id, BD_ID_EMAIL,
                           BD_SLICE_LIT("many@x.example"));
        /* and one search every thread repeats in one minute: one row in all */
        bd_lookup_log_note(a->l, SECRET, 30, 99, BD_ID_EMAIL, BD_SLICE_LIT("same@x.example"));
    }
    return NULL;
}

TEST(test_threads_note_while_a_flush_writes)
{
    bd_store *s = fresh();
    bd_lookup_log *l = bd_lookup_log_new();
    if (!s || !l)
        return;
    pthread_t t[THREADS];
    noter_arg args[THREADS];
    for (int i = 0; i < THREADS; i++) {
        args[i] = (noter_arg){l, i + 1};
        pthread_create(&t[i], NULL, noter, &args[i]);
    }
    size_t total = 0, written;
    for (int round = 0; round < 5; round++) {
        CHECK_INT(bd_lookup_log_flush(l, s, &written), BD_OK);
        total += written;
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    CHECK_INT(bd_lookup_log_flush(l, s, &written), BD_OK);
    total += written;
    CHECK_INT(total, THREADS * PER_THREAD + 1);
    CHECK_INT(found(s, BD_ID_EMAIL, "many@x.example"), THREADS * PER_THREAD);
    CHECK_INT(found(s, BD_ID_EMAIL, "same@x.example"), 1);
    CHECK_INT(bd_lookup_log_take_dropped(l), 0);
    bd_lookup_log_free(l);
}

/* The rows a find hands on: their times, in order. */
typedef struct {
    int64_t at[16];
    int n;
} times;

static int note_time(void *ctx, const bd_lookup_row *r)
{
    times *t = ctx;
    if (t->n < 16)
        t->at[t->n] = r->at;
    t->n++;
    return 0;
}

/* The log is indexed by ten-minute bucket of its time, then hash: a find walks every bucket
 * present, newest first, and stops at its limit. */
TEST(test_found_newest_first_across_buckets_and_limited)
{
    bd_store *s = fresh();
    if (!s)
        return;
    static const int64_t at[] = {100, 599, 600, 4000, 86400 * 30, 86400 * 30 + 1};
    bd_slice mine[] = {BD_SLICE_LIT("mine@x.example")};
    bd_slice other[] = {BD_SLICE_LIT("other@x.example")};
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
        CHECK_INT(bd_lookup_log_write_many(s, SECRET, at[i], 1, BD_ID_EMAIL, mine, 1), BD_OK);
        CHECK_INT(bd_lookup_log_write_many(s, SECRET, at[i] + 5, 2, BD_ID_EMAIL, other, 1),
                  BD_OK);
    }
    uint8_t h[32];
    bd_lookup_hash(SECRET, BD_ID_EMAIL, mine[0], h);
    times t = {0};
    CHECK_INT(bd_store_lookup_find(s, h, 100, note_time, &t), BD_OK);
    CHECK_INT(t.n, 6);
    for (int i = 0; i < 6 && i < t.n; i++)
        CHECK_INT(t.at[i], at[5 - i]);
    times first = {0};
    CHECK_INT(bd_store_lookup_find(s, h, 3, note_time, &first), BD_OK);
    CHECK_INT(first.n, 3);
    CHECK_INT(first.at[0], 86400 * 30 + 1);
    CHECK_INT(first.at[2], 4000);
    bd_lookup_hash(SECRET, BD_ID_EMAIL, BD_SLICE_LIT("nobody@x.example"), h);
    times none = {0};
    CHECK_INT(bd_store_lookup_find(s, h, 100, note_time, &none), BD_OK);
    CHECK_INT(none.n, 0);
}

static void suite(void)
{
    RUN_CONTRACT(test_hash_separates_types_values_and_secrets);
    RUN_CONTRACT(test_noted_searches_are_written_by_a_flush_and_found_by_hash);
    RUN_CONTRACT(test_write_many_and_expire);
    RUN_CONTRACT(test_repeats_within_a_minute_are_one_row);
    RUN_CONTRACT(test_a_full_buffer_drops_and_counts_the_rest);
    RUN_CONTRACT(test_a_failed_flush_keeps_its_rows);
    RUN_CONTRACT(test_threads_note_while_a_flush_writes);
    RUN_CONTRACT(test_found_newest_first_across_buckets_and_limited);
}

int main(void)
{
    return fx_main(suite);
}
