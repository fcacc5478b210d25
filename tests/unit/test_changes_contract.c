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

/* Puts card number i of a leak (id, name: NULL for none); whether it was new. */
static bool put_card(bd_store *s, int i, const char *leak_id, const char *leak_name)
{
    bd_card_in c;
    memset(&c, 0, sizeof c);
    snprintf(c.id, sizeof c.id, "card-%d", i);
    memcpy(c.created_at, "2024-01-01 00:00:00", 20);
    memcpy(c.number_masked, "411111******1111", 17);
    memcpy(c.bin, "411111", 7);
    snprintf(c.last4, sizeof c.last4, "%04d", i % 10000);
    c.length = 16;
    memcpy(c.number_hmac, &i, sizeof i);
    c.leak_id = bd_slice_from(leak_id);
    c.leak_name = bd_slice_from(leak_name);
    c.leak_size = -1;
    bool ins = false;
    CHECK_INT(bd_store_card_put(s, &c, &ins), BD_OK);
    return ins;
}

TEST(test_cards_are_logged_per_leak)
{
    bd_store *s = fresh();
    CHECK_INT(bd_store_begin(s), BD_OK);
    const char *leaks[] = {"L1", "L2", "L1", NULL};
    for (int i = 0; i < 4; i++)
        put_card(s, i, leaks[i], leaks[i]);
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

typedef struct {
    int64_t rows, cards, last;
} card_rows;

static int take_card_row(void *ctx, const bd_change_row *c)
{
    card_rows *t = ctx;
    CHECK_INT(c->kind, BD_CHANGE_CARDS_ADDED);
    CHECK(c->seq > t->last);
    t->last = c->seq;
    t->rows++;
    t->cards += c->count;
    return 0;
}

/* A leak is its id and its name together; a card put twice counts once; a rolled-back
 * transaction's cards are not carried into the next one's row. */
TEST(test_cards_are_logged_per_leak_and_name_once_each)
{
    bd_store *s = fresh();
    CHECK_INT(bd_store_begin(s), BD_OK);
    CHECK(put_card(s, 1, "L1", "first"));
    CHECK(put_card(s, 2, "L1", "first"));
    put_card(s, 1, "L1", "first"); /* a duplicate (told at the put or at the commit) */
    bd_store_rollback(s);
    CHECK_INT(bd_store_begin(s), BD_OK);
    CHECK(put_card(s, 3, "L1", "first"));
    CHECK(put_card(s, 4, "L1", "renamed"));
    CHECK(put_card(s, 5, "L1", "renamed"));
    put_card(s, 5, "L1", "renamed");
    CHECK(put_card(s, 6, NULL, "nameless id"));
    CHECK_INT(bd_store_commit(s), BD_OK);
    int64_t last;
    const char *got = log_after(s, 0, &last);
    CHECK(strlen(got) == strlen("6:L1:1,6:L1:2,6:-:1"));
    CHECK(strstr(got, "6:L1:1") && strstr(got, "6:L1:2") && strstr(got, "6:-:1"));
    card_rows t = {0};
    CHECK_INT(bd_store_changes(s, 0, 100, take_card_row, &t), BD_OK);
    CHECK_INT(t.rows, 3);
    CHECK_INT(t.cards, 4);
}

/* A transaction whose cards were all stored before logs nothing: on a connection of its
 * own, as a second import of the same file is, which has counted no card in memory yet. */
TEST(test_a_transaction_of_duplicate_cards_logs_nothing)
{
    bd_store *s = fresh();
    CHECK_INT(bd_store_begin(s), BD_OK);
    put_card(s, 1, "L1", "first");
    CHECK_INT(bd_store_commit(s), BD_OK);
    int64_t last;
    log_after(s, 0, &last);
    bd_store *again = open_uri(fresh_uri(), BD_STORE_WRITE);
    CHECK_INT(bd_store_begin(again), BD_OK);
    put_card(again, 1, "L1", "first");
    CHECK_INT(bd_store_commit(again), BD_OK);
    int64_t after;
    CHECK_STR(log_after(again, last, &after), "");
}

/* A load naming more leaks than a backend counts in memory is logged whole all the same:
 * one row per leak, every card counted. */
TEST(test_a_load_of_thousands_of_leaks_is_logged_whole)
{
    bd_store *s = fresh();
    CHECK_INT(bd_store_begin(s), BD_OK);
    enum { LEAKS = 5000 };
    char id[16];
    for (int i = 0; i < LEAKS; i++) {
        snprintf(id, sizeof id, "L%05d", i);
        CHECK(put_card(s, 2 * i, id, "leak"));
        CHECK(put_card(s, 2 * i + 1, id, "leak"));
    }
    CHECK_INT(bd_store_commit(s), BD_OK);
    card_rows t = {0};
    CHECK_INT(bd_store_changes(s, 0, 2 * LEAKS, take_card_row, &t), BD_OK);
    CHECK_INT(t.rows, LEAKS);
    CHECK_INT(t.cards, 2 * LEAKS);
}

static void suite(void)
{
    RUN_CONTRACT(test_breaches_records_and_their_counts_are_logged_once_per_commit);
    RUN_CONTRACT(test_erasures_are_logged_and_counted_out_of_the_status);
    RUN_CONTRACT(test_cards_are_logged_per_leak);
    RUN_CONTRACT(test_cards_are_logged_per_leak_and_name_once_each);
    RUN_CONTRACT(test_a_load_of_thousands_of_leaks_is_logged_whole);
    RUN_CONTRACT(test_a_transaction_of_duplicate_cards_logs_nothing);
}

int main(void)
{
    return fx_main(suite);
}
