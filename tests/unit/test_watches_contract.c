/* The store contract of watches and the alerts outbox (store.h) on every backend: watches
 * per key with their limit and generation, alerts landing with their transaction or not at
 * all, the cursor, lease and settle, and the landed-row callback reporting only rows that
 * went in (PostgreSQL decides that when the rows move, after COPY). Each test runs on a
 * SQLite store and, when BREACHD_TEST_PG_URI names a server, on a PostgreSQL store
 * (store_fixture.h). */
#include "record_fixture.h"

static bd_watch_row watch(int64_t key_id, int type, const char *key, const char *url)
{
    return (bd_watch_row){.key_id = key_id,
                          .type = type,
                          .key = bd_slice_from(key),
                          .shown = bd_slice_from(key),
                          .url = bd_slice_from(url),
                          .secret = bd_slice_from("signing-secret-16b")};
}

static char listed[1024];

static int list_cb(void *ctx, const bd_watch_row *w)
{
    (void)ctx;
    size_t n = strlen(listed);
    snprintf(listed + n, sizeof listed - n, "%lld:%lld:%d:%.*s:%.*s;", (long long)w->id,
             (long long)w->key_id, w->type, (int)w->key.len, w->key.ptr, (int)w->secret.len,
             w->secret.ptr);
    return 0;
}

static const char *watches_of(bd_store *s, int64_t key_id)
{
    listed[0] = '\0';
    CHECK_INT(bd_store_watch_list(s, key_id, list_cb, NULL), BD_OK);
    return listed;
}

TEST(test_watches_belong_to_their_key_with_a_limit)
{
    bd_store *s = fresh();
    int64_t g0, g1, id1, id2, id3;
    CHECK_INT(bd_store_watch_generation(s, &g0), BD_OK);
    bd_watch_row a = watch(1, BD_FIELD_EMAIL, "a@t.example", "http://h.example/");
    CHECK_INT(bd_store_watch_add(s, &a, 2, &id1), BD_OK);
    CHECK_INT(bd_store_watch_add(s, &a, 2, &id2), BD_ERR_EXISTS);
    bd_watch_row b = watch(1, BD_FIELD_EMAIL_DOMAIN, "t.example", "http://h.example/");
    CHECK_INT(bd_store_watch_add(s, &b, 2, &id2), BD_OK);
    bd_watch_row c = watch(1, BD_WATCH_BIN, "411111", "http://h.example/");
    CHECK_INT(bd_store_watch_add(s, &c, 2, &id3), BD_ERR_LIMIT);
    c.key_id = 2;
    CHECK_INT(bd_store_watch_add(s, &c, 2, &id3), BD_OK);
    CHECK_INT(bd_store_watch_generation(s, &g1), BD_OK);
    CHECK(g1 != g0);
    char want[256];
    /* by id: ids are random, so either may come first */
    snprintf(want, sizeof want, "%lld:1:%d:%s:signing-secret-16b;%lld:1:%d:%s:signing-secret-16b;",
             (long long)(id1 < id2 ? id1 : id2), id1 < id2 ? 0 : 1,
             id1 < id2 ? "a@t.example" : "t.example", (long long)(id1 < id2 ? id2 : id1),
             id1 < id2 ? 1 : 0, id1 < id2 ? "t.example" : "a@t.example");
    CHECK_STR(watches_of(s, 1), want);
    snprintf(want, sizeof want, "%lld:2:10:411111:signing-secret-16b;", (long long)id3);
    CHECK_STR(watches_of(s, 2), want);
    CHECK_INT(bd_store_watch_remove(s, 2, id1), BD_ERR_NOT_FOUND); /* not key 2's */
    CHECK_INT(bd_store_watch_remove(s, 1, id1), BD_OK);
    CHECK_INT(bd_store_watch_remove(s, 1, id1), BD_ERR_NOT_FOUND);
    CHECK_INT(bd_store_watch_generation(s, &g0), BD_OK);
    CHECK(g0 != g1);
    snprintf(want, sizeof want, "%lld:1:1:t.example:signing-secret-16b;", (long long)id2);
    CHECK_STR(watches_of(s, 1), want);
}

/* Keys 1 and 2, active: an alert whose key is missing is never leased. */
static void two_keys(bd_store *s)
{
    int64_t id;
    add_key(s, "k1", 1, &id);
    CHECK_INT(id, 1);
    add_key(s, "k2", 2, &id);
    CHECK_INT(id, 2);
}

static char alerts_text[2048];

static int alert_cb(void *ctx, const bd_alert_row *a)
{
    (void)ctx;
    size_t n = strlen(alerts_text);
    snprintf(alerts_text + n, sizeof alerts_text - n, "%.*s:%lld:%.*s:%lld:%.*s:%d:%lld:%.*s;",
             (int)a->event_id.len, a->event_id.ptr, (long long)a->watch_id, (int)a->breach_name.len,
             a->breach_name.ptr ? a->breach_name.ptr : "", (long long)a->matched,
             (int)a->identities.len, a->identities.ptr, (int)a->state, (long long)a->attempts,
             a->url.ptr ? (int)a->url.len : 1, a->url.ptr ? a->url.ptr : "-");
    return 0;
}

static bd_alert_in alert(const char *event, int64_t watch_id, int64_t breach_id)
{
    bd_alert_in a = {.watch_id = watch_id,
                     .key_id = 1,
                     .watch_type = BD_FIELD_EMAIL,
                     .watch_shown = bd_slice_from("a@t.example"),
                     .breach_id = breach_id,
                     .matched = 2,
                     .identities = bd_slice_from("[\"a@t.example\"]"),
                     .created_at = 1700000000};
    snprintf(a.event_id, sizeof a.event_id, "%s", event);
    return a;
}

static const char *alerts_of(bd_store *s, int64_t key_id, int64_t after)
{
    alerts_text[0] = '\0';
    CHECK_INT(bd_store_alert_list(s, key_id, after, 100, alert_cb, NULL), BD_OK);
    return alerts_text;
}

static int64_t first_seq, first_cursor;

static int seq_cb(void *ctx, const bd_alert_row *a)
{
    (void)ctx;
    first_seq = a->seq;
    first_cursor = a->cursor;
    return 1;
}

TEST(test_alerts_land_with_their_transaction_and_list_after_a_cursor)
{
    bd_store *s = fresh();
    breaches(s);
    int64_t w;
    bd_watch_row a = watch(1, BD_FIELD_EMAIL, "a@t.example", "http://h.example/");
    CHECK_INT(bd_store_watch_add(s, &a, 0, &w), BD_OK);
    bd_alert_in x = alert("e-rolled-back", w, 0);
    CHECK_INT(bd_store_alert_add(s, &x), BD_ERR_INVALID); /* outside a transaction */
    CHECK_INT(bd_store_begin(s), BD_OK);
    CHECK_INT(bd_store_alert_add(s, &x), BD_OK);
    bd_store_rollback(s);
    CHECK_STR(alerts_of(s, 1, 0), "");
    CHECK_INT(bd_store_begin(s), BD_OK);
    put_email(s, MID, "a@t.example", 1);
    bd_alert_in y = alert("e-1", w, 0), z = alert("e-2", w, 0);
    CHECK_INT(bd_store_alert_add(s, &y), BD_OK);
    CHECK_INT(bd_store_alert_add(s, &z), BD_OK);
    CHECK_INT(bd_store_commit(s), BD_OK);
    char want[512];
    snprintf(want, sizeof want,
             "e-1:%lld::2:[\"a@t.example\"]:0:0:-;e-2:%lld::2:[\"a@t.example\"]:0:0:-;",
             (long long)w, (long long)w);
    CHECK_STR(alerts_of(s, 1, 0), want);
    CHECK_STR(alerts_of(s, 2, 0), "");
    CHECK_INT(bd_store_alert_list(s, 1, 0, 1, seq_cb, NULL), BD_OK);
    CHECK_INT(first_cursor, 1);
    snprintf(want, sizeof want, "e-2:%lld::2:[\"a@t.example\"]:0:0:-;", (long long)w);
    CHECK_STR(alerts_of(s, 1, first_cursor), want);
}

static int triage_cb(void *ctx, const bd_alert_row *a)
{
    size_t n = strlen(ctx);
    snprintf((char *)ctx + n, 256 - n, "%.*s=%d;", (int)a->event_id.len, a->event_id.ptr,
             a->triage);
    return 0;
}

/* An alert's triage (the console): set by its key only, read back by alert_list; and the
 * console sessions signed out, forgotten once past their last moment. */
TEST(test_alert_triage_and_signed_out_sessions)
{
    bd_store *s = fresh();
    breaches(s);
    int64_t w;
    bd_watch_row a = watch(1, BD_FIELD_EMAIL, "a@t.example", "http://h.example/");
    CHECK_INT(bd_store_watch_add(s, &a, 0, &w), BD_OK);
    CHECK_INT(bd_store_begin(s), BD_OK);
    bd_alert_in x = alert("t-1", w, 0), y = alert("t-2", w, 0);
    CHECK_INT(bd_store_alert_add(s, &x), BD_OK);
    CHECK_INT(bd_store_alert_add(s, &y), BD_OK);
    CHECK_INT(bd_store_commit(s), BD_OK);
    char got[256] = "";
    CHECK_INT(bd_store_alert_list(s, 1, 0, 100, triage_cb, got), BD_OK);
    CHECK_STR(got, "t-1=0;t-2=0;");
    CHECK_INT(bd_store_alert_triage(s, 1, bd_slice_from("t-2"), BD_TRIAGE_FALSE_POSITIVE), BD_OK);
    CHECK_INT(bd_store_alert_triage(s, 2, bd_slice_from("t-1"), BD_TRIAGE_RESOLVED),
              BD_ERR_NOT_FOUND); /* another key's alert */
    CHECK_INT(bd_store_alert_triage(s, 1, bd_slice_from("t-9"), BD_TRIAGE_RESOLVED),
              BD_ERR_NOT_FOUND);
    got[0] = '\0';
    CHECK_INT(bd_store_alert_list(s, 1, 0, 100, triage_cb, got), BD_OK);
    CHECK_STR(got, "t-1=0;t-2=3;");

    bool ended = true;
    bd_slice id1 = bd_slice_from("00112233445566778899aabbccddeeff");
    bd_slice id2 = bd_slice_from("ffeeddccbbaa99887766554433221100");
    CHECK_INT(bd_store_session_ended(s, id1, &ended), BD_OK);
    CHECK(!ended);
    CHECK_INT(bd_store_session_end(s, id1, 2000, 1000), BD_OK);
    CHECK_INT(bd_store_session_end(s, id1, 2000, 1000), BD_OK); /* twice: still one */
    CHECK_INT(bd_store_session_ended(s, id1, &ended), BD_OK);
    CHECK(ended);
    CHECK_INT(bd_store_session_ended(s, id2, &ended), BD_OK);
    CHECK(!ended);
    /* a later sign-out forgets the ids whose session can no longer be valid */
    CHECK_INT(bd_store_session_end(s, id2, 9000, 2001), BD_OK);
    CHECK_INT(bd_store_session_ended(s, id1, &ended), BD_OK);
    CHECK(!ended);
    CHECK_INT(bd_store_session_ended(s, id2, &ended), BD_OK);
    CHECK(ended);
}

static const char *events_of_key(bd_store *s, int64_t key_id, int64_t after);

/* The cursor of GET /alerts is each key's own sequence: key 2's first alert is its cursor 1
 * however many alerts key 1 has, and each key pages through its own. */
TEST(test_alert_cursors_are_per_key)
{
    bd_store *s = fresh();
    two_keys(s);
    int64_t w1, w2;
    bd_watch_row a = watch(1, BD_FIELD_EMAIL, "a@t.example", "http://h.example/");
    CHECK_INT(bd_store_watch_add(s, &a, 0, &w1), BD_OK);
    a.key_id = 2;
    CHECK_INT(bd_store_watch_add(s, &a, 0, &w2), BD_OK);
    static const struct {
        const char *event;
        int key;
    } ALERTS[] = {{"k1-a", 1}, {"k1-b", 1}, {"k1-c", 1}, {"k2-a", 2}, {"k1-d", 1}, {"k2-b", 2}};
    for (size_t i = 0; i < sizeof ALERTS / sizeof ALERTS[0]; i++) {
        CHECK_INT(bd_store_begin(s), BD_OK); /* a batch each, as imports commit them */
        bd_alert_in x = alert(ALERTS[i].event, ALERTS[i].key == 1 ? w1 : w2, 0);
        x.key_id = ALERTS[i].key;
        CHECK_INT(bd_store_alert_add(s, &x), BD_OK);
        CHECK_INT(bd_store_commit(s), BD_OK);
    }
    CHECK_INT(bd_store_alert_list(s, 2, 0, 1, seq_cb, NULL), BD_OK);
    CHECK_INT(first_cursor, 1);  /* not 4: key 1's three alerts before it are not counted */
    CHECK(first_seq != first_cursor); /* the outbox's own number is another */
    CHECK_INT(bd_store_alert_list(s, 2, 1, 1, seq_cb, NULL), BD_OK);
    CHECK_INT(first_cursor, 2);
    CHECK_INT(bd_store_alert_list(s, 1, 3, 1, seq_cb, NULL), BD_OK);
    CHECK_INT(first_cursor, 4);
    CHECK_STR(events_of_key(s, 1, 0), "k1-a,k1-b,k1-c,k1-d,");
    CHECK_STR(events_of_key(s, 1, 2), "k1-c,k1-d,");
    CHECK_STR(events_of_key(s, 2, 0), "k2-a,k2-b,");
    CHECK_STR(events_of_key(s, 2, 2), "");
    /* a rolled-back batch takes no cursor */
    CHECK_INT(bd_store_begin(s), BD_OK);
    bd_alert_in y = alert("k2-rolled-back", w2, 0);
    y.key_id = 2;
    CHECK_INT(bd_store_alert_add(s, &y), BD_OK);
    bd_store_rollback(s);
    CHECK_INT(bd_store_begin(s), BD_OK);
    bd_alert_in z = alert("k2-c", w2, 0);
    z.key_id = 2;
    CHECK_INT(bd_store_alert_add(s, &z), BD_OK);
    CHECK_INT(bd_store_commit(s), BD_OK);
    CHECK_INT(bd_store_alert_list(s, 2, 2, 1, seq_cb, NULL), BD_OK);
    CHECK_INT(first_cursor, 3);
}

TEST(test_a_lease_hands_out_due_alerts_and_settle_records_the_outcome)
{
    bd_store *s = fresh();
    two_keys(s);
    int64_t w;
    bd_watch_row a = watch(1, BD_FIELD_EMAIL, "a@t.example", "http://h.example/");
    CHECK_INT(bd_store_watch_add(s, &a, 0, &w), BD_OK);
    CHECK_INT(bd_store_begin(s), BD_OK);
    bd_alert_in y = alert("e-1", w, 0);
    CHECK_INT(bd_store_alert_add(s, &y), BD_OK);
    CHECK_INT(bd_store_commit(s), BD_OK);
    bd_store *d = open_uri(fx_store[0].uri, BD_STORE_WRITE | BD_STORE_SMALL_WRITES);
    alerts_text[0] = '\0';
    CHECK_INT(bd_store_alert_lease(d, 1000, 60000, 16, alert_cb, NULL), BD_OK);
    char want[512];
    snprintf(want, sizeof want, "e-1:%lld::2:[\"a@t.example\"]:0:0:http://h.example/;",
             (long long)w);
    CHECK_STR(alerts_text, want);
    int64_t seq;
    CHECK_INT(bd_store_alert_list(d, 1, 0, 1, seq_cb, NULL), BD_OK);
    seq = first_seq;
    /* a failed attempt: not due again before next_ms */
    CHECK_INT(bd_store_alert_settle(d, seq, BD_ALERT_PENDING, 1, 5000), BD_OK);
    alerts_text[0] = '\0';
    CHECK_INT(bd_store_alert_lease(d, 4999, 60000, 16, alert_cb, NULL), BD_OK);
    CHECK_STR(alerts_text, "");
    CHECK_INT(bd_store_alert_lease(d, 5000, 60000, 16, alert_cb, NULL), BD_OK);
    snprintf(want, sizeof want, "e-1:%lld::2:[\"a@t.example\"]:0:1:http://h.example/;",
             (long long)w);
    CHECK_STR(alerts_text, want);
    CHECK_INT(bd_store_alert_settle(d, seq, BD_ALERT_DELIVERED, 2, 5001), BD_OK);
    alerts_text[0] = '\0';
    CHECK_INT(bd_store_alert_lease(d, 99999999, 60000, 16, alert_cb, NULL), BD_OK);
    CHECK_STR(alerts_text, "");
    close_store(d); /* outcomes kept by a connection are written by its close at the latest */
    snprintf(want, sizeof want, "e-1:%lld::2:[\"a@t.example\"]:1:2:-;", (long long)w);
    CHECK_STR(alerts_of(s, 1, 0), want);
}

/* The event ids of key_id's alerts after cursor after, in order, as "a,b,". */
static const char *events_of_key(bd_store *s, int64_t key_id, int64_t after)
{
    static char events[512];
    const char *all = alerts_of(s, key_id, after);
    events[0] = '\0';
    for (const char *p = all; *p;) {
        const char *colon = strchr(p, ':'), *end = strchr(p, ';');
        size_t n = strlen(events);
        snprintf(events + n, sizeof events - n, "%.*s,", (int)(colon - p), p);
        p = end + 1;
    }
    return events;
}

static const char *events_of(bd_store *s)
{
    return events_of_key(s, 1, 0);
}

TEST(test_prune_removes_only_old_alerts_that_are_settled_oldest_first)
{
    bd_store *s = fresh();
    two_keys(s);
    int64_t w;
    bd_watch_row a = watch(1, BD_FIELD_EMAIL, "a@t.example", "http://h.example/");
    CHECK_INT(bd_store_watch_add(s, &a, 0, &w), BD_OK);
    CHECK_INT(bd_store_begin(s), BD_OK);
    static const struct {
        const char *event;
        int64_t created_at;
    } ALERTS[] = {{"old-delivered", 1000}, {"old-failed", 1001},  {"old-pending", 1002},
                  {"old-delivered-2", 1003}, {"new-delivered", 5000}};
    for (size_t i = 0; i < sizeof ALERTS / sizeof ALERTS[0]; i++) {
        bd_alert_in x = alert(ALERTS[i].event, w, 0);
        x.created_at = ALERTS[i].created_at;
        CHECK_INT(bd_store_alert_add(s, &x), BD_OK);
    }
    CHECK_INT(bd_store_commit(s), BD_OK);
    bd_store *d = open_uri(fx_store[0].uri, BD_STORE_WRITE | BD_STORE_SMALL_WRITES);
    alerts_text[0] = '\0';
    CHECK_INT(bd_store_alert_lease(d, 99999999, 60000, 16, alert_cb, NULL), BD_OK);
    static const bd_alert_state OUTCOME[] = {BD_ALERT_DELIVERED, BD_ALERT_FAILED,
                                             BD_ALERT_PENDING, BD_ALERT_DELIVERED,
                                             BD_ALERT_DELIVERED};
    int64_t cursor = 0;
    for (size_t i = 0; i < 5; i++) {
        CHECK_INT(bd_store_alert_list(d, 1, cursor, 1, seq_cb, NULL), BD_OK);
        cursor = first_cursor;
        CHECK_INT(bd_store_alert_settle(d, first_seq, OUTCOME[i], 1, 99999999), BD_OK);
    }
    close_store(d); /* the outcomes are written */
    int64_t removed = -1;
    CHECK_INT(bd_store_alert_prune(s, 5000, 0, &removed), BD_ERR_INVALID);
    CHECK_INT(bd_store_alert_prune(s, 5000, 2, &removed), BD_OK);
    CHECK_INT(removed, 2);
    CHECK_STR(events_of(s), "old-pending,old-delivered-2,new-delivered,");
    CHECK_INT(bd_store_alert_prune(s, 5000, 1000, &removed), BD_OK);
    CHECK_INT(removed, 1);
    CHECK_STR(events_of(s), "old-pending,new-delivered,");
    CHECK_INT(bd_store_alert_prune(s, 5000, 1000, &removed), BD_OK);
    CHECK_INT(removed, 0);
}

/* Keys 1 (active), 2 (revoked), 3 (expired at 1000) and 4 (expiring at 3000), a watch each,
 * and at 2000: only the watches of 1 and 4 are loaded for an import, and only their alerts
 * are leased; the others' pending alerts are given up by the lease. */
TEST(test_a_revoked_or_expired_keys_watches_neither_load_nor_lease)
{
    bd_store *s = fresh();
    int64_t ids[5], w[5];
    for (int k = 1; k <= 4; k++) {
        bd_key_row kr = {.name = bd_slice_from("k"),
                         .plan = BD_SLICE_LIT("standard"),
                         .rate_per_hour = 1000,
                         .exact_per_day = 20,
                         .created_at = 500,
                         .expires_at = k == 3 ? 1000 : k == 4 ? 3000 : 0};
        memset(kr.hash, k, sizeof kr.hash);
        CHECK_INT(bd_store_key_add(s, &kr, &ids[k]), BD_OK);
        CHECK_INT(ids[k], k);
        bd_watch_row a = watch(k, BD_FIELD_EMAIL, "a@t.example", "http://h.example/");
        CHECK_INT(bd_store_watch_add(s, &a, 0, &w[k]), BD_OK);
    }
    CHECK_INT(bd_store_key_revoke(s, 2, 1500), BD_OK);
    listed[0] = '\0';
    CHECK_INT(bd_store_watch_list_live(s, 2000, list_cb, NULL), BD_OK);
    char want[256];
    int64_t lo = w[1] < w[4] ? w[1] : w[4], hi = w[1] < w[4] ? w[4] : w[1];
    snprintf(want, sizeof want,
             "%lld:%d:0:a@t.example:signing-secret-16b;%lld:%d:0:a@t.example:signing-secret-16b;",
             (long long)lo, lo == w[1] ? 1 : 4, (long long)hi, hi == w[1] ? 1 : 4);
    CHECK_STR(listed, want);
    CHECK_INT(bd_store_watch_list_live(s, 0, list_cb, NULL), BD_ERR_INVALID);
    listed[0] = '\0';
    CHECK_INT(bd_store_watch_list_live(s, 3000, list_cb, NULL), BD_OK); /* 4 expires at 3000 */
    snprintf(want, sizeof want, "%lld:1:0:a@t.example:signing-secret-16b;", (long long)w[1]);
    CHECK_STR(listed, want);
    CHECK_INT(bd_store_begin(s), BD_OK);
    for (int k = 1; k <= 4; k++) {
        char event[16];
        snprintf(event, sizeof event, "e-%d", k);
        bd_alert_in x = alert(event, w[k], 0);
        x.key_id = k;
        CHECK_INT(bd_store_alert_add(s, &x), BD_OK);
    }
    CHECK_INT(bd_store_commit(s), BD_OK);
    bd_store *d = open_uri(fx_store[0].uri, BD_STORE_WRITE | BD_STORE_SMALL_WRITES);
    alerts_text[0] = '\0';
    CHECK_INT(bd_store_alert_lease(d, 2000000, 60000, 16, alert_cb, NULL), BD_OK);
    snprintf(want, sizeof want,
             "e-1:%lld::2:[\"a@t.example\"]:0:0:http://h.example/;"
             "e-4:%lld::2:[\"a@t.example\"]:0:0:http://h.example/;",
             (long long)w[1], (long long)w[4]);
    CHECK_STR(alerts_text, want);
    close_store(d); /* outcomes kept by a connection are written by its close at the latest */
    for (int k = 1; k <= 4; k++) {
        snprintf(want, sizeof want, "e-%d:%lld::2:[\"a@t.example\"]:%d:0:-;", k,
                 (long long)w[k], k == 2 || k == 3 ? 2 : 0);
        CHECK_STR(alerts_of(s, k, 0), want);
    }
}

typedef struct {
    char text[512];
    int n;
} landed_log;

static void on_landed(void *ctx, const bd_landed_row *row)
{
    landed_log *l = ctx;
    size_t n = strlen(l->text);
    if (row->card)
        snprintf(l->text + n, sizeof l->text - n, "card:%.*s;", (int)row->bin.len, row->bin.ptr);
    else
        snprintf(l->text + n, sizeof l->text - n, "%.*s/%.*s;", (int)row->key[BD_FIELD_EMAIL].len,
                 row->key[BD_FIELD_EMAIL].ptr, (int)row->key[BD_FIELD_EMAIL_DOMAIN].len,
                 row->key[BD_FIELD_EMAIL_DOMAIN].ptr);
    l->n++;
}

TEST(test_landed_rows_are_the_ones_that_went_in)
{
    bd_store *s = fresh();
    breaches(s);
    landed_log l = {{0}, 0};
    bd_store_on_landed(s, on_landed, &l);
    CHECK_INT(bd_store_begin(s), BD_OK);
    put_email(s, MID, "a@t.example", 1);
    put_email(s, MID, "b@u.example", 2);
    bd_record_in again = record(MID, "a@t.example", 1);
    put(s, &again); /* a duplicate within the batch */
    CHECK_INT(bd_store_flush(s), BD_OK);
    CHECK_STR(l.text, "a@t.example/t.example;b@u.example/u.example;");
    CHECK_INT(bd_store_commit(s), BD_OK);
    bd_store_take_late_duplicates(s);
    l.text[0] = '\0';
    CHECK_INT(bd_store_begin(s), BD_OK); /* the same rows again: stored already */
    put(s, &again);
    bd_record_in c = record(MID, "c@t.example", 3);
    put(s, &c);
    CHECK_INT(bd_store_flush(s), BD_OK);
    CHECK_INT(bd_store_commit(s), BD_OK);
    CHECK_STR(l.text, "c@t.example/t.example;");
    bd_store_on_landed(s, NULL, NULL);
    l.text[0] = '\0';
    CHECK_INT(bd_store_begin(s), BD_OK);
    bd_record_in e = record(MID, "e@t.example", 5);
    put(s, &e);
    CHECK_INT(bd_store_commit(s), BD_OK);
    CHECK_STR(l.text, "");
}

TEST(test_a_bulk_load_lands_the_records_and_cards_it_kept)
{
    bd_store *s = fresh();
    breaches(s);
    put_email(s, MID, "a@t.example", 1); /* stored before the load */
    landed_log l = {{0}, 0};
    bd_store_on_landed(s, on_landed, &l);
    CHECK_INT(bd_store_begin(s), BD_OK);
    CHECK_INT(bd_store_bulk_begin(s, BD_BULK_RECORDS), BD_OK);
    bd_record_in a = record(MID, "a@t.example", 1), b = record(MID, "b@t.example", 2);
    put(s, &a);
    put(s, &b);
    put(s, &b); /* twice in the load */
    CHECK_INT(bd_store_bulk_end(s, BD_BULK_RECORDS), BD_OK);
    CHECK_INT(bd_store_flush(s), BD_OK);
    CHECK_INT(bd_store_commit(s), BD_OK);
    bd_store_take_late_duplicates(s);
    CHECK_STR(l.text, "b@t.example/t.example;");
    l.text[0] = '\0';
    bd_card_in c = {.created_at = "2024-01-01 00:00:00",
                    .number_masked = "411111XXXXXX1111",
                    .bin = "411111",
                    .last4 = "1111",
                    .length = 16,
                    .leak_size = -1};
    snprintf(c.id, sizeof c.id, "%s", "c0000000-0000-4000-8000-000000000001");
    bool ins;
    CHECK_INT(bd_store_begin(s), BD_OK);
    CHECK_INT(bd_store_card_put(s, &c, &ins), BD_OK); /* stored before the load */
    CHECK_INT(bd_store_commit(s), BD_OK);
    bd_store_take_late_duplicates(s);
    CHECK_STR(l.text, "card:411111;");
    l.text[0] = '\0';
    CHECK_INT(bd_store_begin(s), BD_OK);
    CHECK_INT(bd_store_bulk_begin(s, BD_BULK_CARDS), BD_OK);
    CHECK_INT(bd_store_card_put(s, &c, &ins), BD_OK);
    bd_card_in d = c;
    snprintf(d.id, sizeof d.id, "%s", "c0000000-0000-4000-8000-000000000002");
    memcpy(d.bin, "522222", 7);
    CHECK_INT(bd_store_card_put(s, &d, &ins), BD_OK);
    CHECK_INT(bd_store_bulk_end(s, BD_BULK_CARDS), BD_OK);
    CHECK_INT(bd_store_commit(s), BD_OK);
    bd_store_take_late_duplicates(s);
    CHECK_STR(l.text, "card:522222;");
    bd_store_on_landed(s, NULL, NULL);
}

/* Watch ids are random (1 to 2^53 - 1), not a sequence: the first watch of a key added after
 * 30 others is not 31, and 30 ids in a row are not consecutive. */
TEST(test_watch_ids_are_random_and_tell_nothing_of_other_keys)
{
    bd_store *s = fresh();
    int64_t ids[31];
    char key[32];
    int consecutive = 0;
    for (int i = 0; i < 31; i++) {
        snprintf(key, sizeof key, "u%d", i);
        bd_watch_row a = watch(i < 30 ? 1 : 2, BD_FIELD_USERNAME, key, "http://h.example/");
        CHECK_INT(bd_store_watch_add(s, &a, 0, &ids[i]), BD_OK);
        CHECK(ids[i] >= 1 && ids[i] < ((int64_t)1 << 53));
        consecutive += i > 0 && (ids[i] == ids[i - 1] + 1 || ids[i] == ids[i - 1] - 1);
    }
    CHECK(ids[30] != 31);
    CHECK_INT(consecutive, 0);
    /* and each is the watch it names */
    CHECK_INT(bd_store_watch_remove(s, 1, ids[30]), BD_ERR_NOT_FOUND); /* key 2's */
    CHECK_INT(bd_store_watch_remove(s, 2, ids[30]), BD_OK);
    CHECK_STR(watches_of(s, 2), "");
}

static void suite(void)
{
    RUN_CONTRACT(test_alert_triage_and_signed_out_sessions);
    RUN_CONTRACT(test_watches_belong_to_their_key_with_a_limit);
    RUN_CONTRACT(test_watch_ids_are_random_and_tell_nothing_of_other_keys);
    RUN_CONTRACT(test_alerts_land_with_their_transaction_and_list_after_a_cursor);
    RUN_CONTRACT(test_alert_cursors_are_per_key);
    RUN_CONTRACT(test_a_lease_hands_out_due_alerts_and_settle_records_the_outcome);
    RUN_CONTRACT(test_prune_removes_only_old_alerts_that_are_settled_oldest_first);
    RUN_CONTRACT(test_a_revoked_or_expired_keys_watches_neither_load_nor_lease);
    RUN_CONTRACT(test_landed_rows_are_the_ones_that_went_in);
    RUN_CONTRACT(test_a_bulk_load_lands_the_records_and_cards_it_kept);
}

int main(void)
{
    return fx_main(suite);
}
