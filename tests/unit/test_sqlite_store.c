/* What the SQLite store promises on its own, beyond the contract every backend keeps
 * (test_store_contract.c and the other test_*_contract.c): one snapshot per read, the
 * shared read views and their WAL checkpoints, the plan memo in q->plan, duplicates decided
 * at the put, erasure that leaves no per-domain count behind, schema upgrades. */
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

TEST(test_sqlite_rare_filter_value_drives_the_lookup)
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

/* A shared read view keeps its snapshot inside the window, is replaced after it, and an
 * idle one is ended by release_idle; without sharing every read sees the latest commit. */
TEST(test_sqlite_shared_read_view_lasts_its_window)
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

/* store.h: SQLite keeps one snapshot from read_begin to read_end, so every step of a
 * request reads the store as its first query found it, whatever commits meanwhile.
 * (PostgreSQL answers each operation from its own snapshot: test_pg_store.c.) */
TEST(test_sqlite_read_keeps_one_snapshot_until_read_end)
{
    bd_store *w = fresh();
    const char *a = "11111111-1111-4111-8111-111111111111";
    const char *b = "22222222-2222-4222-8222-222222222222";
    add_breach(w, a, 20200101);
    add_record(w, a, "a@s.example", "s.example", NULL, 1);
    bd_store *r = NULL;
    char why[256];
    CHECK_INT(bd_store_open(path, BD_STORE_READ, &r, why, sizeof why), BD_OK);
    CHECK_INT(bd_store_read_begin(r), BD_OK);
    CHECK_INT(count_domain(r, "s.example"), 1);
    uint64_t v = bd_store_data_version(r);
    add_breach(w, b, 20210101);
    add_record(w, b, "b@s.example", "s.example", NULL, 2);
    CHECK_INT(count_domain(r, "s.example"), 1);
    bool exists = true;
    CHECK_INT(bd_store_breach_exists(r, b, &exists), BD_OK);
    CHECK(!exists);
    CHECK(bd_store_data_version(r) == v);
    bd_store_read_end(r);
    CHECK_INT(bd_store_read_begin(r), BD_OK);
    CHECK_INT(count_domain(r, "s.example"), 2);
    CHECK_INT(bd_store_breach_exists(r, b, &exists), BD_OK);
    CHECK(exists);
    CHECK(bd_store_data_version(r) != v);
    bd_store_read_end(r);
    bd_store_close(r);
    bd_store_close(w);
}

/* store.h: SQLite decides a duplicate at its put, inside a transaction too, so none is left
 * for bd_store_take_late_duplicates. */
TEST(test_sqlite_decides_duplicates_at_the_put)
{
    bd_store *s = fresh();
    const char *a = "11111111-1111-4111-8111-111111111111";
    add_breach(s, a, 20200101);
    bd_record_in r;
    memset(&r, 0, sizeof r);
    memcpy(r.breach_uuid, a, BD_UUID_LEN + 1);
    r.email = BD_SLICE_LIT("a@d.example");
    r.severity = BD_SEVERITY_LOW;
    r.dedup[0] = 1;
    CHECK_INT(bd_store_begin(s), BD_OK);
    bool ins = false;
    CHECK_INT(bd_store_record_put(s, &r, &ins), BD_OK);
    CHECK(ins);
    CHECK_INT(bd_store_record_put(s, &r, &ins), BD_OK);
    CHECK(!ins);
    CHECK_INT(bd_store_commit(s), BD_OK);
    CHECK_INT(bd_store_take_late_duplicates(s), 0);
    bd_store_close(s);
}

static int ignore_stats(void *ctx, const bd_stats_row *row)
{
    (void)ctx;
    (void)row;
    return 0;
}

/* "domain=n;" of every row of the store's per-domain counts. */
static const char *domain_counts(void)
{
    static char out[256];
    out[0] = '\0';
    sqlite3 *db;
    sqlite3_stmt *st;
    CHECK_INT(sqlite3_open(path, &db), SQLITE_OK);
    CHECK_INT(sqlite3_prepare_v2(db, "SELECT domain, n FROM domain_counts ORDER BY domain", -1, &st,
                                 NULL),
              SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
        size_t n = strlen(out);
        snprintf(out + n, sizeof out - n, "%s=%d;", (const char *)sqlite3_column_text(st, 0),
                 sqlite3_column_int(st, 1));
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return out;
}

/* A per-domain count that erasure brings to zero goes: a domain of one person would name
 * that person. (test_pg_store.c checks the same of PostgreSQL.) */
TEST(test_sqlite_erasure_leaves_no_count_of_an_emptied_domain)
{
    bd_store *s = fresh();
    const char *a = "11111111-1111-4111-8111-111111111111";
    const char *b = "22222222-2222-4222-8222-222222222222";
    add_breach(s, a, 20200101);
    add_breach(s, b, 20210101);
    add_record(s, a, "only@lone.example", "lone.example", NULL, 1);
    add_record(s, a, "x@keep.example", "keep.example", NULL, 2);
    add_record(s, b, "y@gone.example", "gone.example", NULL, 3);
    CHECK_STR(domain_counts(), "gone.example=1;keep.example=1;lone.example=1;");
    int64_t removed = -1;
    CHECK_INT(bd_store_erase_email(s, "only@lone.example", ignore_stats, NULL, &removed), BD_OK);
    CHECK_STR(domain_counts(), "gone.example=1;keep.example=1;");
    CHECK_INT(bd_store_erase_breach(s, b, &removed), BD_OK);
    CHECK_STR(domain_counts(), "keep.example=1;");
    bd_store_close(s);
}

/* Opening a store that is not there makes no file (the result is the contract's). */
TEST(test_sqlite_open_without_create_makes_no_file)
{
    char p[300], side[320];
    snprintf(p, sizeof p, "%s/missing.db", dir);
    const int flags[] = {BD_STORE_READ, BD_STORE_WRITE};
    for (int i = 0; i < 2; i++) {
        bd_store *s = NULL;
        char why[512];
        CHECK_INT(bd_store_open(p, flags[i], &s, why, sizeof why), BD_ERR_NOT_FOUND);
        CHECK(access(p, F_OK) != 0);
        snprintf(side, sizeof side, "%s-wal", p);
        CHECK(access(side, F_OK) != 0);
        snprintf(side, sizeof side, "%s-shm", p);
        CHECK(access(side, F_OK) != 0);
    }
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

/* Takes migration 13 (job limits and turns) back out of a store. */
/* Takes migrations 15 (tenants, scoped keys, audit, lookups), 16 (the console's alert
 * triage and signed-out sessions) and 17 (watches' alert format) back out: SQLite adds a
 * column only to a table that lacks it, so a way back to an older version drops them first. */
#define REWIND_TENANTS_AND_CONSOLE                                                                 \
    "DROP TABLE IF EXISTS pastes; DROP TABLE IF EXISTS paste_emails;"                              \
    "DROP TABLE IF EXISTS email_hashes;"                                                           \
    "ALTER TABLE watches DROP COLUMN format;"                                                      \
    "DROP INDEX records_by_website; ALTER TABLE records DROP COLUMN website_domain;"               \
    "UPDATE watches SET type = 9 WHERE type = 10; UPDATE alerts SET watch_type = 9"                \
    " WHERE watch_type = 10;"                                                                      \
    "ALTER TABLE alerts DROP COLUMN triage; DROP TABLE console_signouts;"                          \
    "DROP TABLE tenants; DROP TABLE tenant_domains; DROP TABLE audit; DROP TABLE lookups;"         \
    "ALTER TABLE api_keys DROP COLUMN tenant_id; ALTER TABLE api_keys DROP COLUMN types;"          \
    "ALTER TABLE api_keys DROP COLUMN allow_ip; ALTER TABLE api_keys DROP COLUMN role;"

#define REWIND_JOB_LIMITS                                                                          \
    REWIND_TENANTS_AND_CONSOLE "DROP INDEX jobs_by_key; ALTER TABLE jobs DROP COLUMN result_rows;"                            \
    "ALTER TABLE jobs DROP COLUMN truncated; ALTER TABLE jobs DROP COLUMN served;"                 \
    "ALTER TABLE api_keys DROP COLUMN max_jobs;"                                                   \
    "ALTER TABLE api_keys DROP COLUMN max_queued_identities;"                                      \
    "ALTER TABLE api_keys DROP COLUMN max_result_rows;"

/* Takes migrations 12 (keyed CVVs) and after back out of a store: the masks stay, the CVVs in
 * clear are gone. */
#define REWIND_CVV_HASHES                                                                          \
    REWIND_JOB_LIMITS "DROP INDEX cards_by_cvv_hmac; ALTER TABLE cards DROP COLUMN cvv_hmac;"      \
    "CREATE INDEX cards_by_cvv ON cards(cvv) WHERE cvv IS NOT NULL;"

/* Takes migration 8 (usage and quotas) back out of a store. */
#define REWIND_USAGE                                                                               \
    REWIND_CVV_HASHES "DROP TABLE key_usage; ALTER TABLE api_keys DROP COLUMN quota_per_month;"

/* Takes migration 6 (the breach fields of the HIBP API v3) back out of a store. */
#define REWIND_BREACH_HIBP_FIELDS                                                                  \
    "DROP INDEX breaches_by_name; ALTER TABLE breaches DROP COLUMN name;"                          \
    "ALTER TABLE breaches DROP COLUMN added_at; ALTER TABLE breaches DROP COLUMN modified_at;"      \
    "ALTER TABLE breaches DROP COLUMN hibp_flags;"

TEST(test_sqlite_upgrade_gives_old_keys_an_exact_lookup_budget_of_20)
{
    bd_store *s = fresh();
    if (!s)
        return;
    add_key(s, 1, 0);
    add_key(s, 2, 7);
    bd_store_close(s);
    /* Back to schema 4, before the column: opening the store again upgrades it, and keys
     * made before the budget existed get the default. */
    sqlite3 *db;
    CHECK_INT(sqlite3_open(path, &db), SQLITE_OK);
    CHECK_INT(sqlite3_exec(db,
                           "ALTER TABLE api_keys DROP COLUMN exact_per_day;"
                           REWIND_USAGE REWIND_BREACH_HIBP_FIELDS "PRAGMA user_version = 4;",
                           NULL, NULL, NULL),
              SQLITE_OK);
    sqlite3_close(db);
    char why[256];
    CHECK_INT(bd_store_open(path, BD_STORE_WRITE, &s, why, sizeof why), BD_OK);
    if (!s)
        return;
    int64_t got[4] = {0};
    CHECK_INT(bd_store_key_list(s, collect_exact, got), BD_OK);
    CHECK_INT(got[0], 2);
    CHECK_INT(got[1], 20);
    CHECK_INT(got[2], 20);
    bd_store_close(s);
}

static int take_name(void *ctx, const bd_breach_row *b)
{
    char *out = ctx;
    size_t n = strlen(out);
    snprintf(out + n, 256 - n, "%s%.*s/%d", n ? "," : "", (int)b->name.len, b->name.ptr,
             b->added_at > 1700000000 && b->modified_at == b->added_at && b->flags == 0);
    return 0;
}

TEST(test_sqlite_upgrade_names_stored_breaches_and_dates_them_at_the_upgrade)
{
    bd_store *s = fresh();
    if (!s)
        return;
    static const char *const names[] = {"Alpha Forum", "alpha-forum", "!!", "AlphaForum2"};
    for (int i = 0; i < 4; i++) {
        bd_breach_in b = {.source_name = bd_slice_from(names[i]),
                          .date_leaked = 20200101 - i,
                          .pwned_count = -1};
        snprintf(b.uuid, sizeof b.uuid, "1111111%d-1111-4111-8111-111111111111", i);
        bool ins;
        CHECK_INT(bd_store_breach_put(s, &b, &ins), BD_OK);
    }
    bd_store_close(s);
    /* Back to schema 5: the breaches had no Name, no times, no flags. */
    sqlite3 *db;
    CHECK_INT(sqlite3_open(path, &db), SQLITE_OK);
    CHECK_INT(sqlite3_exec(db, REWIND_USAGE REWIND_BREACH_HIBP_FIELDS "PRAGMA user_version = 5;",
                           NULL, NULL, NULL),
              SQLITE_OK);
    sqlite3_close(db);
    char why[256];
    CHECK_INT(bd_store_open(path, BD_STORE_WRITE, &s, why, sizeof why), BD_OK);
    if (!s)
        return;
    char got[256] = "";
    CHECK_INT(bd_store_breach_list(s, 0, take_name, got), BD_OK);
    /* Names in the order the breaches were stored; the fourth's own base was taken by the
     * second, so it is numbered too. */
    CHECK_STR(got, "AlphaForum/1,AlphaForum2/1,Breach/1,AlphaForum22/1");
    char v[8];
    CHECK_INT(bd_store_meta_get(s, "pending_breach_names", v, sizeof v), BD_ERR_NOT_FOUND);
    bd_store_close(s);
}

/* Cards of a store made before CVVs were keyed, which held them in clear. */
static const struct {
    const char *id, *cvv;
} OLD_CARDS[] = {{"old-1", "123"}, {"old-2", "8642"}, {"old-3", "123"}, {"old-4", NULL}};

/* The stand-in for the importer's mask and keyed hash (ingest/cvv.h): the mask, and the
 * CVV's digits after a "k" as its hash. */
static void protect_test(void *ctx, bd_slice cvv, char masked[5], uint8_t hmac[BD_HMAC_LEN])
{
    ++*(int *)ctx;
    memset(masked, 0, 5);
    memset(masked, '*', cvv.len < 4 ? cvv.len : 4);
    memset(hmac, 0, BD_HMAC_LEN);
    hmac[0] = 'k';
    memcpy(hmac + 1, cvv.ptr, cvv.len);
}

static int take_card_cvv(void *ctx, const bd_card_row *row)
{
    char *out = ctx;
    size_t n = strlen(out);
    snprintf(out + n, 256 - n, "%s%.*s=%.*s", n ? "," : "", (int)row->id.len, row->id.ptr,
             (int)row->cvv.len, row->cvv.ptr ? row->cvv.ptr : "~");
    return 0;
}

/* The cards a search by keyed CVV ("k" and the digits) finds, with the CVV each holds. */
static const char *cards_of_cvv(bd_store *s, const char *cvv)
{
    static char got[256];
    bd_card_cond k = {.kind = BD_CC_CVV};
    k.hmac[0] = 'k';
    memcpy(k.hmac + 1, cvv, strlen(cvv));
    bd_card_query q = {.where = &k, .limit = 10};
    int64_t found;
    got[0] = '\0';
    CHECK_INT(bd_store_card_search(s, &q, &found, take_card_cvv, got), BD_OK);
    return got;
}

static int64_t count_of(const char *sql)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    int64_t n = -1;
    CHECK_INT(sqlite3_open(path, &db), SQLITE_OK);
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW)
            n = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    return n;
}

/* Each record lands in its own breach whatever the order of the breaches: 3,000 of them,
 * more than the connection's breach cache holds at once (records.c), put in an order that
 * sends every breach around it twice. */
TEST(test_sqlite_records_of_many_breaches_land_in_their_own)
{
    bd_store *s = fresh();
    enum { N = 3000 };
    char uuid[BD_UUID_LEN + 1], email[32];
    CHECK_INT(bd_store_begin(s), BD_OK);
    for (int i = 0; i < N; i++) {
        snprintf(uuid, sizeof uuid, "%08x-1111-4111-8111-111111111111", (unsigned)i);
        snprintf(email, sizeof email, "Breach %d", i); /* names are unique */
        bd_breach_in b = {.source_name = bd_slice_from(email), .date_leaked = 20200101,
                          .pwned_count = -1};
        memcpy(b.uuid, uuid, BD_UUID_LEN + 1);
        bool ins;
        CHECK_INT(bd_store_breach_put(s, &b, &ins), BD_OK);
    }
    for (int k = 0; k < 2 * N; k++) {
        int i = (int)(((unsigned)k * 7919u) % N); /* 7919 is prime: every breach, twice */
        snprintf(uuid, sizeof uuid, "%08x-1111-4111-8111-111111111111", (unsigned)i);
        snprintf(email, sizeof email, "%08x@d.example", (unsigned)i);
        add_record(s, uuid, email, "d.example", NULL, k);
    }
    CHECK_INT(bd_store_commit(s), BD_OK);
    bd_store_close(s);
    CHECK_INT(count_of("SELECT count(*) FROM records"), 2 * N);
    CHECK_INT(count_of("SELECT count(*) FROM records r JOIN breaches b ON b.id = r.breach_id "
                       "WHERE substr(b.uuid, 1, 8) = substr(r.email, 1, 8)"),
              2 * N);
    CHECK_INT(count_of("SELECT count(*) FROM (SELECT breach_id FROM records GROUP BY breach_id "
                       "HAVING count(*) = 2)"),
              N);
}

/* A transaction that adds more rows than changes.c counts with the cache as it is
 * (SORTED_FLUSH_ROWS, 262,144) logs them with the sorter's memory instead: the same counts,
 * per breach, in the change log. */
TEST(test_sqlite_change_log_of_a_large_transaction_counts_every_record)
{
    bd_store *s = fresh();
    enum { N = 262144 + 3001 };
    static const char *const uuids[3] = {"aaaaaaaa-1111-4111-8111-111111111111",
                                         "bbbbbbbb-1111-4111-8111-111111111111",
                                         "cccccccc-1111-4111-8111-111111111111"};
    CHECK_INT(bd_store_begin(s), BD_OK);
    for (int b = 0; b < 3; b++)
        add_breach(s, uuids[b], 20200101 + b);
    CHECK_INT(bd_store_commit(s), BD_OK);
    char email[32];
    CHECK_INT(bd_store_begin(s), BD_OK);
    for (int k = 0; k < N; k++) {
        snprintf(email, sizeof email, "%08x@d.example", (unsigned)k);
        add_record(s, uuids[k % 3], email, "d.example", NULL, k);
    }
    CHECK_INT(bd_store_commit(s), BD_OK);
    bd_store_close(s);
    CHECK_INT(count_of("SELECT count(*) FROM changes WHERE kind = 4"), 3);
    CHECK_INT(count_of("SELECT sum(n) FROM changes WHERE kind = 4"), N);
    CHECK_INT(count_of("SELECT n FROM changes WHERE kind = 4 AND subject LIKE 'aaaaaaaa%'"),
              (N + 2) / 3);
}

/* Whether the store's files hold text (the main file and its log). */
static bool file_holds(const char *text)
{
    bool found = false;
    for (int i = 0; i < 2 && !found; i++) {
        char name[300];
        snprintf(name, sizeof name, "%s%s", path, i ? "-wal" : "");
        FILE *f = fopen(name, "rb");
        if (!f)
            continue;
        static char data[1 << 22];
        size_t n = fread(data, 1, sizeof data, f);
        fclose(f);
        for (size_t at = 0; !found && at + strlen(text) <= n; at++)
            found = memcmp(data + at, text, strlen(text)) == 0;
    }
    return found;
}

/* A store made before CVVs were keyed keeps its plain CVVs, noted, through the schema
 * upgrade (which has no secret); bd_store_cvv_upgrade then puts each one's mask and keyed
 * hash in its place, overwriting the plain values in the file, and takes the note and the
 * index of plain values away. A new store has neither. */
TEST(test_sqlite_upgrade_keys_and_masks_the_cvvs_kept_in_clear)
{
    bd_store *s = fresh();
    if (!s)
        return;
    CHECK_INT(count_of("SELECT count(*) FROM meta WHERE key = 'pending_cvv_hashes'"), 0);
    CHECK_INT(count_of("SELECT count(*) FROM sqlite_master WHERE name = 'cards_by_cvv'"), 0);
    for (size_t i = 0; i < sizeof OLD_CARDS / sizeof OLD_CARDS[0]; i++) {
        bd_card_in c;
        memset(&c, 0, sizeof c);
        snprintf(c.id, sizeof c.id, "%s", OLD_CARDS[i].id);
        snprintf(c.created_at, sizeof c.created_at, "2024-01-0%zu 00:00:00", i + 1);
        snprintf(c.number_masked, sizeof c.number_masked, "411111XXXXXX1111");
        memcpy(c.bin, "411111", 6);
        memcpy(c.last4, "1111", 4);
        c.length = 16;
        c.number_hmac[0] = (uint8_t)i;
        c.owner = BD_SLICE_LIT("Probe");
        c.leak_size = -1;
        bool ins;
        CHECK_INT(bd_store_card_put(s, &c, &ins), BD_OK);
    }
    bd_store_close(s);
    /* Back to schema 11, with the CVVs in clear as it kept them. */
    sqlite3 *db;
    CHECK_INT(sqlite3_open(path, &db), SQLITE_OK);
    CHECK_INT(sqlite3_exec(db,
                           REWIND_CVV_HASHES
                           "UPDATE cards SET cvv = '123' WHERE card_id IN ('old-1', 'old-3');"
                           "UPDATE cards SET cvv = '8642' WHERE card_id = 'old-2';"
                           "PRAGMA user_version = 11;",
                           NULL, NULL, NULL),
              SQLITE_OK);
    sqlite3_close(db);
    CHECK(file_holds("Probe8642")); /* the row: the owner, then the CVV */
    char why[256];
    CHECK_INT(bd_store_open(path, BD_STORE_WRITE, &s, why, sizeof why), BD_OK);
    if (!s)
        return;
    CHECK_INT(count_of("SELECT count(*) FROM meta WHERE key = 'pending_cvv_hashes'"), 1);
    CHECK_STR(cards_of_cvv(s, "123"), ""); /* not keyed yet */
    int calls = 0;
    int64_t changed = -1;
    CHECK_INT(bd_store_cvv_upgrade(s, protect_test, &calls, &changed), BD_OK);
    CHECK_INT(changed, 3);
    CHECK_INT(calls, 2); /* once per value */
    CHECK_STR(cards_of_cvv(s, "123"), "old-3=***,old-1=***");
    CHECK_STR(cards_of_cvv(s, "8642"), "old-2=****");
    CHECK_INT(count_of("SELECT count(*) FROM cards WHERE cvv IS NULL AND cvv_hmac IS NULL"), 1);
    CHECK_INT(count_of("SELECT count(*) FROM meta WHERE key = 'pending_cvv_hashes'"), 0);
    CHECK_INT(count_of("SELECT count(*) FROM sqlite_master WHERE name = 'cards_by_cvv'"), 0);
    CHECK_INT(bd_store_truncate_log(s, 1000), BD_OK);
    CHECK(!file_holds("Probe8642"));
    CHECK(!file_holds("Probe123"));
    CHECK(file_holds("Probe****"));
    CHECK_INT(bd_store_cvv_upgrade(s, protect_test, &calls, &changed), BD_OK);
    CHECK_INT(changed, 0); /* nothing waits any more */
    CHECK_INT(calls, 2);
    bd_store_close(s);
}

/* The migration of issue 35 (website of a stealer log): website_domain and its index added,
 * and a card BIN watch's type (BD_WATCH_BIN, the field count) moved from 9 to 10 with its
 * alerts, since website_domain took field 9; other watches keep theirs. */
TEST(test_sqlite_upgrade_moves_bin_watches_to_type_10_for_website_domain)
{
    bd_store *s = fresh();
    if (!s)
        return;
    bd_store_close(s);
    sqlite3 *db;
    CHECK_INT(sqlite3_open(path, &db), SQLITE_OK);
    CHECK_INT(sqlite3_exec(db,
                           "DROP INDEX records_by_website;"
                           "ALTER TABLE records DROP COLUMN website_domain;"
                           "INSERT INTO watches(key_id, type, key, shown, url, secret, created_at)"
                           "  VALUES (1, 9, '411111', '411111', 'https://h.example/a', 's', 1),"
                           "  (1, 1, 'b.example', 'b.example', 'https://h.example/b', 's', 1);"
                           "INSERT INTO alerts(event_id, watch_id, key_id, watch_type, watch_shown,"
                           "  matched, identities, created_at, next_attempt_ms, key_seq)"
                           "  VALUES ('e1', 1, 1, 9, '411111', 1, '[]', 1, 0, 1);"
                           "PRAGMA user_version = 17;",
                           NULL, NULL, NULL),
              SQLITE_OK);
    sqlite3_close(db);
    char why[256];
    CHECK_INT(bd_store_open(path, BD_STORE_WRITE, &s, why, sizeof why), BD_OK);
    if (!s)
        return;
    bd_store_close(s);
    CHECK_INT(count_of("SELECT type FROM watches WHERE key = '411111'"), BD_WATCH_BIN);
    CHECK_INT(BD_WATCH_BIN, 10);
    CHECK_INT(count_of("SELECT type FROM watches WHERE key = 'b.example'"), BD_FIELD_EMAIL_DOMAIN);
    CHECK_INT(count_of("SELECT watch_type FROM alerts WHERE event_id = 'e1'"), 10);
    CHECK_INT(count_of("SELECT count(*) FROM pragma_table_info('records')"
                       " WHERE name = 'website_domain'"),
              1);
    CHECK_INT(count_of("SELECT count(*) FROM sqlite_master WHERE name = 'records_by_website'"), 1);
}

int main(void)
{
    if (!mkdtemp(dir))
        return 1;
    RUN(test_sqlite_open_without_create_makes_no_file);
    RUN(test_sqlite_read_keeps_one_snapshot_until_read_end);
    RUN(test_sqlite_shared_read_view_lasts_its_window);
    RUN(test_sqlite_rare_filter_value_drives_the_lookup);
    RUN(test_sqlite_decides_duplicates_at_the_put);
    RUN(test_sqlite_records_of_many_breaches_land_in_their_own);
    RUN(test_sqlite_erasure_leaves_no_count_of_an_emptied_domain);
    RUN(test_sqlite_upgrade_gives_old_keys_an_exact_lookup_budget_of_20);
    RUN(test_sqlite_upgrade_names_stored_breaches_and_dates_them_at_the_upgrade);
    RUN(test_sqlite_upgrade_keys_and_masks_the_cvvs_kept_in_clear);
    RUN(test_sqlite_upgrade_moves_bin_watches_to_type_10_for_website_domain);
    RUN(test_sqlite_change_log_of_a_large_transaction_counts_every_record);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        return 1;
    return TEST_EXIT();
}
