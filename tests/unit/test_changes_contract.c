/* The change log on every backend (store.h, "the change log"): what each committed write
 * transaction added or removed, once, in commit order; nothing for a rollback or for
 * duplicates; the data version and the status that come from it. store_fixture.h runs each
 * test on SQLite and, when BREACHD_TEST_PG_URI names a server, on PostgreSQL. */
#include "record_fixture.h"

static char logged[1024];

static int ignore_stats(void *ctx, const bd_stats_row *row)
{
    (void)ctx;
    (void)row;
    return 0;
}

static int take_change(void *ctx, const bd_change_row *c)
{
    int64_t *last = ctx;
    size_t n = strlen(logged);
    snprintf(logged + n, sizeof logged - n, "%s%d:%.8s:%lld", n ? "," : "", (int)c->kind,
             c->subject.ptr ? c->subject.ptr : "-", (long long)c->count);
    CHECK(c->seq > *last); /* in seq order */
    *last = c->seq;
    return 0;
}

/* The log after seq `after`, as "kind:subject's first 8:count,..."; *last its last seq. */
static const char *log_after(bd_store *s, int64_t after, int64_t *last)
{
    logged[0] = '\0';
    *last = after;
    CHECK_INT(bd_store_changes(s, after, 100, take_change, last), BD_OK);
    return logged;
}

static int64_t version(bd_store *s)
{
    int64_t v = -1;
    CHECK_INT(bd_store_change_version(s, &v), BD_OK);
    return v;
}

TEST(test_breaches_records_and_their_counts_are_logged_once_per_commit)
{
    bd_store *s = fresh();
    CHECK_INT(version(s), 0);
    breaches(s);
    int64_t v0;
    CHECK_STR(log_after(s, 0, &v0), "1:11111111:1,1:22222222:1,1:33333333:1");
    CHECK_INT(version(s), v0);
    CHECK_INT(bd_store_begin(s), BD_OK);
    put_email(s, MID, "a@x.example", 1);
    put_email(s, NEW, "b@x.example", 2);
    put_email(s, MID, "c@x.example", 3);
    bd_record_in again = record(MID, "a@x.example", 1);
    put(s, &again); /* a duplicate: PostgreSQL finds it only when the rows land */
    CHECK_INT(bd_store_breach_refresh_count(s, MID), BD_OK);
    CHECK_INT(bd_store_breach_refresh_count(s, OLD), BD_OK); /* imported count: unchanged */
    CHECK_INT(bd_store_commit(s), BD_OK);
    int64_t v1;
    CHECK_STR(log_after(s, v0, &v1), "2:22222222:2,4:22222222:2,4:33333333:1");
    CHECK_INT(version(s), v1);
    /* a transaction that rolls back leaves nothing */
    CHECK_INT(bd_store_begin(s), BD_OK);
    put_email(s, OLD, "d@x.example", 4);
    bd_store_rollback(s);
    int64_t v2;
    CHECK_STR(log_after(s, v1, &v2), "");
    CHECK_INT(v2, v1);
    /* duplicates alone add nothing */
    CHECK_INT(bd_store_begin(s), BD_OK);
    bd_record_in dup = record(MID, "a@x.example", 1);
    put(s, &dup);
    CHECK_INT(bd_store_commit(s), BD_OK);
    CHECK_STR(log_after(s, v1, &v2), "");
    /* a put outside a transaction is one of its own */
    put_email(s, OLD, "e@y.example", 5);
    CHECK_STR(log_after(s, v1, &v2), "4:11111111:1");
    bd_store_status st;
    CHECK_INT(bd_store_status_get(s, &st), BD_OK);
    CHECK_INT(st.version, v2);
    CHECK_INT(st.breaches, 3);
    CHECK_INT(st.records, 4);
    CHECK_INT(st.cards, 0);
    CHECK(st.last_import_at > 0 && st.last_change_at >= st.last_import_at);
}

TEST(test_erasures_are_logged_and_counted_out_of_the_status)
{
    bd_store *s = fresh();
    breaches(s);
    put_email(s, MID, "a@x.example", 1);
    put_email(s, NEW, "a@x.example", 2);
    put_email(s, NEW, "b@x.example", 3);
    int64_t v0 = version(s), removed = 0, v1;
    CHECK_INT(bd_store_erase_email(s, "a@x.example", ignore_stats, NULL, &removed), BD_OK);
    CHECK_INT(removed, 2);
    const char *got = log_after(s, v0, &v1);
    /* newest breach first, as erase reports them; New's derived count moved, Mid's (never
     * derived: nothing refreshed it) did not */
    CHECK_STR(got, "5:33333333:1,5:22222222:1,2:33333333:1");
    CHECK_INT(bd_store_erase_breach(s, NEW, &removed), BD_OK);
    CHECK_STR(log_after(s, v1, &v1), "3:33333333:1");
    bd_store_status st;
    CHECK_INT(bd_store_status_get(s, &st), BD_OK);
    CHECK_INT(st.breaches, 2);
    CHECK_INT(st.records, 0);
}

TEST(test_cards_are_logged_per_leak)
{
    bd_store *s = fresh();
    CHECK_INT(bd_store_begin(s), BD_OK);
    const char *leaks[] = {"L1", "L2", "L1", NULL};
    for (int i = 0; i < 4; i++) {
        bd_card_in c;
        memset(&c, 0, sizeof c);
        snprintf(c.id, sizeof c.id, "card-%d", i);
        memcpy(c.created_at, "2024-01-01 00:00:00", 20);
        memcpy(c.number_masked, "411111******1111", 17);
        memcpy(c.bin, "411111", 7);
        memcpy(c.last4, "111", 4);
        c.last4[3] = (char)('0' + i);
        c.length = 16;
        c.number_hmac[0] = (uint8_t)i;
        c.leak_id = bd_slice_from(leaks[i]);
        c.leak_name = bd_slice_from(leaks[i]);
        c.leak_size = -1;
        bool ins = false;
        CHECK_INT(bd_store_card_put(s, &c, &ins), BD_OK);
    }
    CHECK_INT(bd_store_commit(s), BD_OK);
    int64_t last;
    const char *got = log_after(s, 0, &last);
    /* one row per leak, in no promised order */
    CHECK(strlen(got) == strlen("6:L1:2,6:L2:1,6:-:1"));
    CHECK(strstr(got, "6:L1:2") && strstr(got, "6:L2:1") && strstr(got, "6:-:1"));
    bd_store_status st;
    CHECK_INT(bd_store_status_get(s, &st), BD_OK);
    CHECK_INT(st.cards, 4);
    CHECK_INT(st.version, last);
}

static void suite(void)
{
    RUN_CONTRACT(test_breaches_records_and_their_counts_are_logged_once_per_commit);
    RUN_CONTRACT(test_erasures_are_logged_and_counted_out_of_the_status);
    RUN_CONTRACT(test_cards_are_logged_per_leak);
}

int main(void)
{
    return fx_main(suite);
}
