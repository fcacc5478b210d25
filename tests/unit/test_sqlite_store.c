/* SQLite store: schema creation, idempotent inserts, keyset order and index choice. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include <unistd.h>

#include "store/store.h"
#include "test.h"

static char dir[] = "/tmp/breachd-store-XXXXXX";
static char path[256];

static bd_store *fresh(void)
{
    static int n;
    snprintf(path, sizeof path, "%s/s%d.db", dir, n++);
    bd_store *s = NULL;
    char why[256];
    if (bd_store_open(path, BD_STORE_WRITE | BD_STORE_CREATE, &s, why, sizeof why) != BD_OK)
        fprintf(stderr, "%s\n", why);
    return s;
}

static void add_breach(bd_store *s, const char *uuid, int32_t date)
{
    bd_breach_in b = {.source_name = BD_SLICE_LIT("B"), .date_leaked = date, .pwned_count = -1};
    memcpy(b.uuid, uuid, BD_UUID_LEN + 1);
    bool ins;
    CHECK_INT(bd_store_breach_put(s, &b, &ins), BD_OK);
}

static void add_record(bd_store *s, const char *uuid, const char *email, const char *domain,
                       const char *pw_mac, int n)
{
    bd_record_in r;
    memset(&r, 0, sizeof r);
    memcpy(r.breach_uuid, uuid, BD_UUID_LEN + 1);
    r.email = bd_slice_from(email);
    r.email_domain = bd_slice_from(domain);
    if (pw_mac)
        r.password_hmac = (bd_slice){pw_mac, 32};
    r.severity = BD_SEVERITY_LOW;
    memcpy(r.dedup, &n, sizeof n);
    memcpy(r.dedup + 8, email, strlen(email) < 8 ? strlen(email) : 8);
    bool ins;
    CHECK_INT(bd_store_record_put(s, &r, &ins), BD_OK);
    CHECK(ins);
}

static int collect_ids(void *ctx, const bd_record_row *row)
{
    int64_t *ids = ctx;
    ids[++ids[0]] = row->id;
    return 0;
}

static int skip_row(void *ctx, const bd_record_row *row)
{
    (void)ctx;
    (void)row;
    return 0;
}

/* Counts every record matching q, through a first page of one. */
static bd_result count_records(bd_store *s, bd_record_query *q, int64_t *n)
{
    q->limit = 1;
    return bd_store_record_search(s, q, skip_row, NULL, n);
}

TEST(test_store_open_without_create_reports_missing_store)
{
    bd_store *s = NULL;
    char why[256], p[300];
    snprintf(p, sizeof p, "%s/missing.db", dir);
    CHECK(bd_store_open(p, BD_STORE_READ, &s, why, sizeof why) != BD_OK);
    CHECK(s == NULL);
    CHECK(access(p, F_OK) != 0);
}

TEST(test_store_breach_put_is_idempotent)
{
    bd_store *s = fresh();
    bd_breach_in b = {.uuid = "11111111-1111-4111-8111-111111111111",
                      .source_name = BD_SLICE_LIT("A"),
                      .date_leaked = 20200101,
                      .pwned_count = 5};
    bool ins;
    CHECK_INT(bd_store_breach_put(s, &b, &ins), BD_OK);
    CHECK(ins);
    CHECK_INT(bd_store_breach_put(s, &b, &ins), BD_OK);
    CHECK(!ins);
    bd_store_close(s);
}

TEST(test_store_rare_filter_value_drives_the_lookup)
{
    bd_store *s = fresh();
    const char *u = "22222222-2222-4222-8222-222222222222";
    add_breach(s, u, 20210101);
    char rare[32], common[32], email[64];
    memset(rare, 'R', 32);
    memset(common, 'C', 32);
    CHECK_INT(bd_store_begin(s), BD_OK);
    for (int i = 0; i < 3000; i++) {
        snprintf(email, sizeof email, "u%d@big.example", i);
        add_record(s, u, email, "big.example", i % 1000 == 7 ? rare : common, i);
    }
    CHECK_INT(bd_store_commit(s), BD_OK);
    bd_record_query q;
    memset(&q, 0, sizeof q);
    q.field = BD_FIELD_EMAIL_DOMAIN;
    q.key = BD_SLICE_LIT("big.example");
    q.filter[BD_FIELD_PASSWORD].mode = BD_FILTER_EQUALS;
    q.filter[BD_FIELD_PASSWORD].key = (bd_slice){rare, 32};
    int64_t n = 0;
    CHECK_INT(count_records(s, &q, &n), BD_OK);
    CHECK_INT(n, 3);
    /* SQLite's memo of the plan: the field whose index drove the lookup, plus one. */
    CHECK_INT(q.plan, BD_FIELD_PASSWORD + 1);
    /* The common value does not win over the domain when it is no more selective. */
    q.filter[BD_FIELD_PASSWORD].key = (bd_slice){common, 32};
    q.plan = 0;
    CHECK_INT(count_records(s, &q, &n), BD_OK);
    CHECK_INT(q.plan, BD_FIELD_EMAIL_DOMAIN + 1);
    CHECK_INT(n, 2997);
    bd_store_close(s);
}

TEST(test_store_keyset_pages_follow_date_then_id_descending)
{
    bd_store *s = fresh();
    const char *old = "33333333-3333-4333-8333-333333333333";
    const char *new = "44444444-4444-4444-8444-444444444444";
    add_breach(s, old, 20100101);
    add_breach(s, new, 20200101);
    add_record(s, old, "a@x.example", "x.example", NULL, 1); /* id 1 */
    add_record(s, new, "b@x.example", "x.example", NULL, 2); /* id 2 */
    add_record(s, old, "c@x.example", "x.example", NULL, 3); /* id 3 */
    add_record(s, new, "d@x.example", "x.example", NULL, 4); /* id 4 */
    bd_record_query q;
    memset(&q, 0, sizeof q);
    q.field = BD_FIELD_EMAIL_DOMAIN;
    q.key = BD_SLICE_LIT("x.example");
    q.limit = 3;
    int64_t ids[8] = {0};
    CHECK_INT(bd_store_record_search(s, &q, collect_ids, ids, NULL), BD_OK);
    CHECK_INT(ids[0], 3);
    CHECK_INT(ids[1], 4);
    CHECK_INT(ids[2], 2);
    CHECK_INT(ids[3], 3);
    q.has_after = true;
    q.after_date = 20100101;
    q.after_id = 3;
    memset(ids, 0, sizeof ids);
    CHECK_INT(bd_store_record_search(s, &q, collect_ids, ids, NULL), BD_OK);
    CHECK_INT(ids[0], 1);
    CHECK_INT(ids[1], 1);
    bd_store_close(s);
}

/* A passive checkpoint through a connection of its own: how many WAL frames there are and
 * how many could be copied back (fewer when a reader's view still needs the older ones). */
static void wal_checkpoint(int *log, int *ckpt)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    CHECK_INT(sqlite3_open(path, &db), SQLITE_OK);
    CHECK_INT(sqlite3_prepare_v2(db, "PRAGMA wal_checkpoint(PASSIVE)", -1, &st, NULL), SQLITE_OK);
    CHECK_INT(sqlite3_step(st), SQLITE_ROW);
    *log = sqlite3_column_int(st, 1);
    *ckpt = sqlite3_column_int(st, 2);
    sqlite3_finalize(st);
    sqlite3_close(db);
}

static int64_t count_domain(bd_store *s, const char *domain)
{
    bd_record_query q;
    memset(&q, 0, sizeof q);
    q.field = BD_FIELD_EMAIL_DOMAIN;
    q.key = bd_slice_from(domain);
    int64_t n = -1;
    CHECK_INT(count_records(s, &q, &n), BD_OK);
    return n;
}

static int collect_breach_ids(void *ctx, const bd_record_row *row)
{
    int64_t *ids = ctx;
    ids[++ids[0]] = row->breach_id;
    return 0;
}

static int copy_source(void *ctx, const bd_breach_row *b)
{
    snprintf(ctx, 16, "%.*s/%d", (int)b->source_name.len, b->source_name.ptr, b->date_leaked);
    return 0;
}

/* Records name their breach by id; the breach is read by that id; the data version holds
 * while nothing changes and moves when another connection commits. */
TEST(test_store_record_breach_ids_and_data_version)
{
    bd_store *w = fresh();
    const char *a = "66666666-6666-4666-8666-666666666666";
    const char *b = "77777777-7777-4777-8777-777777777777";
    add_breach(w, a, 20110101);
    add_breach(w, b, 20120101);
    add_record(w, b, "x@d.example", "d.example", NULL, 1);
    add_record(w, a, "y@d.example", "d.example", NULL, 2);
    bd_store *r = NULL;
    char why[256];
    CHECK_INT(bd_store_open(path, BD_STORE_READ, &r, why, sizeof why), BD_OK);
    bd_record_query q;
    memset(&q, 0, sizeof q);
    q.field = BD_FIELD_EMAIL_DOMAIN;
    q.key = BD_SLICE_LIT("d.example");
    q.limit = 10;
    int64_t ids[8] = {0};
    CHECK_INT(bd_store_read_begin(r), BD_OK);
    CHECK_INT(bd_store_record_search(r, &q, collect_breach_ids, ids, NULL), BD_OK);
    uint64_t v1 = bd_store_data_version(r);
    CHECK_INT(ids[0], 2);
    char got[16] = "";
    CHECK_INT(bd_store_breach_by_id(r, ids[1], copy_source, got), BD_OK); /* newest first */
    CHECK_STR(got, "B/20120101");
    CHECK_INT(bd_store_breach_by_id(r, ids[2], copy_source, got), BD_OK);
    CHECK_STR(got, "B/20110101");
    CHECK_INT(bd_store_breach_by_id(r, 999, copy_source, got), BD_ERR_NOT_FOUND);
    bd_store_read_end(r);

    CHECK_INT(bd_store_read_begin(r), BD_OK);
    CHECK_INT(count_domain(r, "d.example"), 2);
    CHECK(bd_store_data_version(r) == v1);
    bd_store_read_end(r);
    add_record(w, a, "z@d.example", "d.example", NULL, 3);
    CHECK_INT(bd_store_read_begin(r), BD_OK);
    CHECK_INT(count_domain(r, "d.example"), 3);
    CHECK(bd_store_data_version(r) != v1);
    bd_store_read_end(r);
    bd_store_close(r);
    bd_store_close(w);
}

/* A shared read view keeps its snapshot inside the window, is replaced after it, and an
 * idle one is ended by release_idle; without sharing every read sees the latest commit. */
TEST(test_store_shared_read_view_lasts_its_window)
{
    bd_store *w = fresh();
    const char *u = "55555555-5555-4555-8555-555555555555";
    add_breach(w, u, 20220101);
    add_record(w, u, "a@v.example", "v.example", NULL, 1);
    bd_store *r = NULL, *plain = NULL;
    char why[256];
    CHECK_INT(bd_store_open(path, BD_STORE_READ, &r, why, sizeof why), BD_OK);
    CHECK_INT(bd_store_open(path, BD_STORE_READ, &plain, why, sizeof why), BD_OK);
    bd_store_share_reads(r, 300000); /* 300 ms */

    CHECK_INT(bd_store_read_begin(r), BD_OK);
    CHECK_INT(count_domain(r, "v.example"), 1);
    bd_store_read_end(r);
    add_record(w, u, "b@v.example", "v.example", NULL, 2);
    CHECK_INT(bd_store_read_begin(plain), BD_OK);
    CHECK_INT(count_domain(plain, "v.example"), 2);
    bd_store_read_end(plain);
    CHECK_INT(bd_store_read_begin(r), BD_OK); /* within the window: the same view */
    CHECK_INT(count_domain(r, "v.example"), 1);
    bd_store_read_end(r);
    bd_store_release_idle(r); /* too young to end */
    CHECK_INT(bd_store_read_begin(r), BD_OK);
    CHECK_INT(count_domain(r, "v.example"), 1);
    bd_store_read_end(r);

    usleep(350000);
    CHECK_INT(bd_store_read_begin(r), BD_OK); /* past the window: a fresh view */
    CHECK_INT(count_domain(r, "v.example"), 2);
    bd_store_read_end(r);

    /* An idle view past its window is ended, so a writer's checkpoint can reset the WAL. */
    usleep(350000);
    bd_store_release_idle(r);
    add_record(w, u, "c@v.example", "v.example", NULL, 3);
    int log = -1, ckpt = -1;
    wal_checkpoint(&log, &ckpt);
    CHECK(log > 0);
    CHECK_INT(ckpt, log);
    CHECK_INT(bd_store_read_begin(r), BD_OK);
    CHECK_INT(count_domain(r, "v.example"), 3);
    bd_store_read_end(r);
    bd_store_close(plain);
    bd_store_close(r);
    bd_store_close(w);
}

static int collect_exact(void *ctx, const bd_key_row *k)
{
    int64_t *per_day = ctx;
    per_day[++per_day[0]] = k->exact_per_day;
    return 0;
}

static void add_key(bd_store *s, uint8_t tag, int64_t exact_per_day)
{
    bd_key_row k = {.name = BD_SLICE_LIT("k"),
                    .plan = BD_SLICE_LIT("standard"),
                    .rate_per_hour = 1000,
                    .exact_per_day = exact_per_day,
                    .created_at = 1};
    memset(k.hash, tag, sizeof k.hash);
    int64_t id;
    CHECK_INT(bd_store_key_add(s, &k, &id), BD_OK);
}

TEST(test_store_keys_keep_their_exact_lookup_budget_and_old_keys_get_20)
{
    bd_store *s = fresh();
    if (!s)
        return;
    add_key(s, 1, 0);
    add_key(s, 2, 7);
    int64_t got[4] = {0};
    CHECK_INT(bd_store_key_list(s, collect_exact, got), BD_OK);
    CHECK_INT(got[0], 2);
    CHECK_INT(got[1], 0);
    CHECK_INT(got[2], 7);
    bd_store_close(s);
    /* Back to schema 4, before the column: opening the store again upgrades it, and keys
     * made before the budget existed get the default. */
    sqlite3 *db;
    CHECK_INT(sqlite3_open(path, &db), SQLITE_OK);
    CHECK_INT(sqlite3_exec(db,
                           "ALTER TABLE api_keys DROP COLUMN exact_per_day;"
                           "PRAGMA user_version = 4;",
                           NULL, NULL, NULL),
              SQLITE_OK);
    sqlite3_close(db);
    char why[256];
    CHECK_INT(bd_store_open(path, BD_STORE_WRITE, &s, why, sizeof why), BD_OK);
    if (!s)
        return;
    memset(got, 0, sizeof got);
    CHECK_INT(bd_store_key_list(s, collect_exact, got), BD_OK);
    CHECK_INT(got[0], 2);
    CHECK_INT(got[1], 20);
    CHECK_INT(got[2], 20);
    bd_store_close(s);
}

int main(void)
{
    if (!mkdtemp(dir))
        return 1;
    RUN(test_store_open_without_create_reports_missing_store);
    RUN(test_store_breach_put_is_idempotent);
    RUN(test_store_record_breach_ids_and_data_version);
    RUN(test_store_rare_filter_value_drives_the_lookup);
    RUN(test_store_keyset_pages_follow_date_then_id_descending);
    RUN(test_store_shared_read_view_lasts_its_window);
    RUN(test_store_keys_keep_their_exact_lookup_budget_and_old_keys_get_20);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        return 1;
    return TEST_EXIT();
}
