/* PostgreSQL store: the store.h contract against a live server, whose URI is in
 * BREACHD_TEST_PG_URI (skipped when unset; scripts/pg-cluster.sh starts a throwaway one).
 * Each run works in a schema of its own, made and dropped here, through the URI's
 * search_path option: nothing else in the database is touched. The tests run in order on
 * one store, each building on what the previous ones left. */
#include "pg_fixture.h"

#define B1 "11111111-1111-4111-8111-111111111111"
#define B2 "22222222-2222-4222-8222-222222222222"
#define B3 "33333333-3333-4333-8333-333333333333"

static int64_t ids[64];
static int collect_ids(void *ctx, const bd_record_row *row)
{
    (void)ctx;
    ids[++ids[0]] = row->id;
    return 0;
}

/* "a,b,c" of the ids collected by the last find. */
static const char *found(void)
{
    static char out[256];
    size_t n = 0;
    out[0] = '\0';
    for (int64_t i = 1; i <= ids[0]; i++)
        n += (size_t)snprintf(out + n, sizeof out - n, i > 1 ? ",%lld" : "%lld", (long long)ids[i]);
    return out;
}

static const char *find(bd_record_query *q)
{
    ids[0] = 0;
    CHECK_INT(bd_store_record_search(st, q, collect_ids, NULL, NULL), BD_OK);
    return found();
}

static const char P2[32] = "password-two-hmac-32-bytes-long";

TEST(test_pg_open_creates_schema_once_and_reopening_changes_nothing)
{
    st = open_as("bdtest", BD_STORE_WRITE | BD_STORE_CREATE, BD_OK);
    if (!st)
        return;
    char v[16];
    CHECK_INT(st->ops->meta_get(st, "schema_version", v, sizeof v), BD_OK);
    CHECK_STR(v, "6");
    CHECK_INT(st->ops->meta_set(st, "marker", "kept"), BD_OK);
    bd_store *again = open_as("bdtest2", BD_STORE_WRITE | BD_STORE_CREATE, BD_OK);
    bd_store *reader = open_as("bdtest3", BD_STORE_READ, BD_OK);
    if (again && reader) {
        CHECK_INT(again->ops->meta_get(again, "marker", v, sizeof v), BD_OK);
        CHECK_STR(v, "kept");
        CHECK_INT(reader->ops->meta_get(reader, "schema_version", v, sizeof v), BD_OK);
        CHECK_STR(v, "6");
        /* a reader's transactions are read-only */
        CHECK(reader->ops->meta_set(reader, "x", "y") != BD_OK);
    }
    if (again)
        again->ops->close(again);
    if (reader)
        reader->ops->close(reader);
}

TEST(test_pg_open_without_create_reports_missing_store)
{
    char param[128], u[1024], why[512];
    snprintf(param, sizeof param, "options=-csearch_path%%3D%s_empty", schema);
    uri_with(u, sizeof u, param);
    bd_store *s = NULL;
    CHECK_INT(bd_pg_open(u, BD_STORE_WRITE, &s, why, sizeof why), BD_ERR_NOT_FOUND);
    CHECK(s == NULL);
    CHECK(strstr(why, "holds no breachd store") != NULL);
}

TEST(test_pg_meta_round_trip)
{
    char v[8];
    CHECK_INT(st->ops->meta_set(st, "k", "one"), BD_OK);
    CHECK_INT(st->ops->meta_set(st, "k", "two"), BD_OK);
    CHECK_INT(st->ops->meta_get(st, "k", v, sizeof v), BD_OK);
    CHECK_STR(v, "two");
    CHECK_INT(st->ops->meta_get(st, "missing", v, sizeof v), BD_ERR_NOT_FOUND);
    CHECK_INT(st->ops->meta_set(st, "long", "12345678"), BD_OK);
    CHECK_INT(st->ops->meta_get(st, "long", v, sizeof v), BD_ERR_LIMIT);
}

static char names[256];
static int collect_names(void *ctx, const bd_breach_row *b)
{
    (void)ctx;
    size_t n = strlen(names);
    snprintf(names + n, sizeof names - n, "%s%.*s:%lld", n ? "," : "", (int)b->source_name.len,
             b->source_name.ptr, (long long)b->pwned_count);
    return 0;
}

static const char *breaches(int limit)
{
    names[0] = '\0';
    CHECK_INT(st->ops->breach_list(st, limit, collect_names, NULL), BD_OK);
    return names;
}

TEST(test_pg_breaches_put_list_get_exists)
{
    put_breach(B1, "Old", 20200101, 100);
    put_breach(B2, "Beta", 20210505, -1);
    put_breach(B3, "Alpha", 20210505, -1);
    bd_breach_in dup = {.uuid = B1, .source_name = BD_SLICE_LIT("Other"), .pwned_count = 1};
    bool ins = true;
    CHECK_INT(st->ops->breach_put(st, &dup, &ins), BD_OK);
    CHECK(!ins);
    CHECK_STR(breaches(0), "Alpha:0,Beta:0,Old:100");
    CHECK_STR(breaches(2), "Alpha:0,Beta:0");
    names[0] = '\0';
    CHECK_INT(st->ops->breach_get(st, B1, collect_names, NULL), BD_OK);
    CHECK_STR(names, "Old:100");
    CHECK_INT(st->ops->breach_get(st, "44444444-4444-4444-8444-444444444444", collect_names, NULL),
              BD_ERR_NOT_FOUND);
    bool exists = false;
    CHECK_INT(st->ops->breach_exists(st, B2, &exists), BD_OK);
    CHECK(exists);
    CHECK_INT(st->ops->breach_exists(st, "44444444-4444-4444-8444-444444444444", &exists), BD_OK);
    CHECK(!exists);
}

TEST(test_pg_record_put_detects_duplicates_and_missing_breach)
{
    bool ins;
    const struct {
        const char *breach, *email, *pw;
    } rows[] = {
        {B1, "alice@a.example", P1}, {B2, "alice@a.example", NULL}, {B3, "alice@a.example", P1},
        {B2, "alice@a.example", P2}, {B1, "bob@b.example", P1},     {B2, "carol@a.example", NULL},
    };
    for (int i = 0; i < 6; i++) {
        ins = false;
        CHECK_INT(put_record(rows[i].breach, rows[i].email, rows[i].pw, i + 1, &ins), BD_OK);
        CHECK(ins);
    }
    ins = true;
    CHECK_INT(put_record(B1, "alice@a.example", P1, 1, &ins), BD_OK);
    CHECK(!ins);
    CHECK_INT(put_record("44444444-4444-4444-8444-444444444444", "x@y.example", NULL, 99, &ins),
              BD_ERR_NOT_FOUND);
    CHECK(!ins);
}

TEST(test_pg_record_find_orders_by_breach_date_then_id_and_pages_by_keyset)
{
    bd_record_query q = by(BD_FIELD_EMAIL, "alice@a.example", 15);
    CHECK_INT(count(&q), 4);
    CHECK_STR(find(&q), "4,3,2,1");
    q.limit = 2;
    CHECK_STR(find(&q), "4,3");
    q.has_after = true;
    q.after_date = 20210505;
    q.after_id = 3;
    CHECK_STR(find(&q), "2,1");
    CHECK_INT(count(&q), 4); /* the position does not change the count */
    q.after_date = 20200101;
    q.after_id = 1;
    CHECK_STR(find(&q), "");
}

TEST(test_pg_record_filters_present_absent_equals)
{
    bd_record_query q = by(BD_FIELD_EMAIL, "alice@a.example", 15);
    q.filter[BD_FIELD_PASSWORD].mode = BD_FILTER_PRESENT;
    CHECK_INT(count(&q), 3);
    CHECK_STR(find(&q), "4,3,1");
    q.filter[BD_FIELD_PASSWORD].mode = BD_FILTER_ABSENT;
    CHECK_INT(count(&q), 1);
    CHECK_STR(find(&q), "2");
    q.filter[BD_FIELD_PASSWORD].mode = BD_FILTER_EQUALS;
    q.filter[BD_FIELD_PASSWORD].key = (bd_slice){P1, 32};
    CHECK_INT(count(&q), 2);
    CHECK_STR(find(&q), "3,1");
    bd_record_query pw = by(BD_FIELD_PASSWORD, P1, 32);
    CHECK_INT(count(&pw), 3);
    CHECK_STR(find(&pw), "3,5,1");
}

TEST(test_pg_record_domain_search_counts_from_domain_counts)
{
    bd_record_query q = by(BD_FIELD_EMAIL_DOMAIN, "a.example", 9);
    CHECK_INT(count(&q), 5); /* the duplicate put did not count twice */
    CHECK_STR(find(&q), "6,4,3,2,1");
    q.filter[BD_FIELD_PASSWORD].mode = BD_FILTER_ABSENT;
    CHECK_INT(count(&q), 2);
    CHECK_STR(find(&q), "6,2");
}

static int64_t breach_id_of_first;
static int first_breach_id(void *ctx, const bd_record_row *row)
{
    (void)ctx;
    breach_id_of_first = row->breach_id;
    return 1;
}

TEST(test_pg_breach_by_id_and_refreshed_count)
{
    bd_record_query q = by(BD_FIELD_EMAIL, "carol@a.example", 15);
    CHECK_INT(bd_store_record_search(st, &q, first_breach_id, NULL, NULL), BD_OK);
    names[0] = '\0';
    CHECK_INT(st->ops->breach_by_id(st, breach_id_of_first, collect_names, NULL), BD_OK);
    CHECK_STR(names, "Beta:0");
    CHECK_INT(st->ops->breach_by_id(st, 9999, collect_names, NULL), BD_ERR_NOT_FOUND);
    CHECK_INT(st->ops->breach_refresh_count(st, B2), BD_OK);
    CHECK_INT(st->ops->breach_refresh_count(st, B1), BD_OK); /* imported count stays */
    CHECK_STR(breaches(0), "Alpha:0,Beta:2,Old:100");
}

static int64_t key_gen(void)
{
    int64_t g = -1;
    CHECK_INT(st->ops->key_generation(st, &g), BD_OK);
    return g;
}

static char key_text[256];
static int collect_keys(void *ctx, const bd_key_row *k)
{
    (void)ctx;
    size_t n = strlen(key_text);
    snprintf(key_text + n, sizeof key_text - n, "%lld:%.*s:%.*s:%lld:%lld:%lld:%d;",
             (long long)k->id, (int)k->name.len, k->name.ptr, (int)k->plan.len, k->plan.ptr,
             (long long)k->rate_per_hour, (long long)k->exact_per_day, (long long)k->revoked_at,
             k->hash[0] + k->hash[31]);
    return 0;
}

TEST(test_pg_keys_add_list_revoke_and_generation)
{
    int64_t g0 = key_gen(), id1 = 0, id2 = 0;
    bd_key_row k = {.name = BD_SLICE_LIT("ci"),
                    .plan = BD_SLICE_LIT("standard"),
                    .rate_per_hour = 1000,
                    .exact_per_day = 20,
                    .created_at = 1700000000};
    memset(k.hash, 7, sizeof k.hash);
    CHECK_INT(st->ops->key_add(st, &k, &id1), BD_OK);
    CHECK_INT(key_gen(), g0 + 1);
    k.name = BD_SLICE_LIT("bulk");
    k.plan = BD_SLICE_LIT("enterprise");
    k.hash[0] = 200;
    CHECK_INT(st->ops->key_add(st, &k, &id2), BD_OK);
    CHECK_INT(id2, id1 + 1);
    CHECK_INT(st->ops->key_add(st, &k, &id2), BD_ERR_EXISTS); /* same hash */
    CHECK_INT(st->ops->key_revoke(st, id1, 1700000500), BD_OK);
    CHECK_INT(key_gen(), g0 + 3);
    CHECK_INT(st->ops->key_revoke(st, id1, 1700000600), BD_ERR_NOT_FOUND);
    CHECK_INT(st->ops->key_revoke(st, 9999, 1700000600), BD_ERR_NOT_FOUND);
    CHECK_INT(key_gen(), g0 + 3);
    key_text[0] = '\0';
    CHECK_INT(st->ops->key_list(st, collect_keys, NULL), BD_OK);
    char want[256];
    snprintf(want, sizeof want,
             "%lld:ci:standard:1000:20:1700000500:14;"
             "%lld:bulk:enterprise:1000:20:0:207;",
             (long long)id1, (long long)id2);
    CHECK_STR(key_text, want);
}

static char stats_text[256];
static int collect_stats(void *ctx, const bd_stats_row *row)
{
    (void)ctx;
    size_t n = strlen(stats_text);
    snprintf(stats_text + n, sizeof stats_text - n, "%.*s=%lld/%lld;", (int)row->source_name.len,
             row->source_name.ptr, (long long)row->records, (long long)row->pwned_count);
    return 0;
}

TEST(test_pg_stats_counts_per_breach_and_totals)
{
    int64_t records = -1, cards = -1;
    stats_text[0] = '\0';
    CHECK_INT(st->ops->stats(st, collect_stats, NULL, &records, &cards), BD_OK);
    CHECK_STR(stats_text, "Alpha=1/0;Beta=3/2;Old=2/100;");
    CHECK_INT(records, 6);
    CHECK_INT(cards, 0);
}

TEST(test_pg_erase_email_reports_breaches_and_moves_domain_counts)
{
    int64_t removed = -1;
    stats_text[0] = '\0';
    CHECK_INT(st->ops->erase_email(st, "alice@a.example", collect_stats, NULL, &removed), BD_OK);
    CHECK_INT(removed, 4);
    CHECK_STR(stats_text, "Alpha=1/0;Beta=2/0;Old=1/0;");
    bd_record_query q = by(BD_FIELD_EMAIL, "alice@a.example", 15);
    CHECK_INT(count(&q), 0);
    bd_record_query d = by(BD_FIELD_EMAIL_DOMAIN, "a.example", 9);
    CHECK_INT(count(&d), 1);
    CHECK_STR(find(&d), "6");
    CHECK_STR(breaches(0), "Alpha:0,Beta:1,Old:100");
}

TEST(test_pg_erase_breach_removes_records_and_empty_domain_counts)
{
    int64_t removed = -1;
    CHECK_INT(st->ops->erase_breach(st, B2, &removed), BD_OK);
    CHECK_INT(removed, 1);
    bd_record_query d = by(BD_FIELD_EMAIL_DOMAIN, "a.example", 9);
    CHECK_INT(count(&d), 0);
    PGresult *res = PQexec(admin, "SELECT count(*) FROM domain_counts WHERE domain = 'a.example'");
    CHECK_STR(PQgetvalue(res, 0, 0), "0");
    PQclear(res);
    CHECK_INT(st->ops->erase_breach(st, B2, &removed), BD_ERR_NOT_FOUND);
    CHECK_INT(removed, 0);
    CHECK_STR(breaches(0), "Alpha:0,Old:100");
    bool ins = true;
    CHECK_INT(put_record(B2, "dave@a.example", NULL, 50, &ins), BD_ERR_NOT_FOUND);
}

/* A read holds no snapshot here: each search is one, and the data version a read reports
 * is the one its latest search read its rows at. */
TEST(test_pg_each_search_is_one_snapshot_with_its_data_version)
{
    bd_store *other = open_as("bdtest_other", BD_STORE_WRITE, BD_OK);
    if (!other)
        return;
    uint64_t v0 = st->ops->data_version(st);
    CHECK(v0 > 0);
    CHECK_INT(st->ops->read_begin(st), BD_OK);
    bd_record_query q = by(BD_FIELD_EMAIL, "erin@e.example", 14);
    CHECK_INT(count(&q), 0);
    CHECK_INT(st->ops->data_version(st), v0);
    bd_store *writer = st;
    st = other;
    bool ins = false;
    CHECK_INT(put_record(B1, "erin@e.example", NULL, 60, &ins), BD_OK);
    CHECK(ins);
    st = writer;
    CHECK_INT(st->ops->data_version(st), v0); /* no search since: the read's version holds */
    CHECK_INT(count(&q), 1);                  /* the next search sees the commit ... */
    CHECK_INT(st->ops->data_version(st), v0 + 1); /* ... and reports its version */
    st->ops->read_end(st);
    CHECK_INT(count(&q), 1);
    CHECK_INT(st->ops->data_version(st), v0 + 1);
    other->ops->close(other);
}

TEST(test_pg_bulk_load_rebuilds_indexes_and_domain_counts)
{
    CHECK_INT(st->ops->bulk_begin(st, BD_BULK_RECORDS), BD_ERR_INVALID); /* no transaction */
    CHECK_INT(st->ops->begin(st), BD_OK);
    CHECK_INT(st->ops->bulk_begin(st, BD_BULK_RECORDS), BD_OK);
    bool ins = false;
    for (int i = 0; i < 3; i++)
        CHECK_INT(put_record(B3, i == 2 ? "gus@f.example" : "fay@f.example", P2, 70 + i, &ins),
                  BD_OK);
    CHECK_INT(st->ops->bulk_end(st, BD_BULK_RECORDS), BD_OK);
    CHECK_INT(st->ops->commit(st), BD_OK);
    PGresult *res = PQexec(admin, "SELECT count(*) FROM pg_indexes WHERE tablename = 'records' "
                                  "AND schemaname = current_schema() "
                                  "AND indexname LIKE 'records_by_%'");
    CHECK_STR(PQgetvalue(res, 0, 0), "10");
    PQclear(res);
    bd_record_query d = by(BD_FIELD_EMAIL_DOMAIN, "f.example", 9);
    CHECK_INT(count(&d), 3);
    CHECK_STR(find(&d), "11,10,9"); /* ids 7 (the duplicate) and 8 (erin) were used before */
}

TEST(test_pg_backup_is_refused_and_there_is_no_log_to_truncate)
{
    /* pg_dump is the tool for a PostgreSQL store (docs/OPERATIONS.md). */
    CHECK_INT(st->ops->backup(st, "/tmp/never", -1), BD_ERR_INVALID);
    CHECK_INT(st->ops->truncate_log(st, 100), BD_OK);
}

TEST(test_pg_write_transactions_hold_the_writer_lock_and_reads_do_not)
{
    static const char held[] = "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' "
                               "AND objid = 1651664243 AND granted";
    CHECK_INT(admin_count(held), 0);
    CHECK_INT(st->ops->read_begin(st), BD_OK);
    CHECK_INT(admin_count(held), 0);
    st->ops->read_end(st);
    CHECK_INT(st->ops->begin(st), BD_OK);
    CHECK_INT(admin_count(held), 1);
    CHECK_INT(st->ops->begin(st), BD_ERR_INVALID); /* no nesting */
    st->ops->rollback(st);
    CHECK_INT(admin_count(held), 0);
}

/* Ends the server process of every connection whose application_name is app. */
static void kill_backends(const char *app)
{
    char sql[256];
    snprintf(sql, sizeof sql,
             "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '%s'",
             app);
    admin_sql(sql);
    usleep(100000);
}

TEST(test_pg_lost_connection_is_busy_then_reset_on_next_call)
{
    CHECK_INT(st->ops->ping(st), BD_OK);
    kill_backends("bdtest");
    CHECK_INT(st->ops->ping(st), BD_ERR_BUSY);
    CHECK_INT(st->ops->ping(st), BD_OK); /* reconnected */
    char v[16];
    CHECK_INT(st->ops->meta_get(st, "schema_version", v, sizeof v), BD_OK); /* re-prepared */
    CHECK_STR(v, "6");
    bd_record_query q = by(BD_FIELD_EMAIL, "fay@f.example", 13);
    CHECK_STR(find(&q), "10,9");
}

TEST(test_pg_lost_connection_inside_transaction_stays_busy_until_rollback)
{
    CHECK_INT(st->ops->begin(st), BD_OK);
    bool ins = false;
    CHECK_INT(put_record(B1, "hal@h.example", NULL, 80, &ins), BD_OK);
    kill_backends("bdtest");
    CHECK_INT(put_record(B1, "ida@h.example", NULL, 81, &ins), BD_ERR_BUSY);
    CHECK_INT(st->ops->ping(st), BD_ERR_BUSY); /* the transaction is lost: no silent reset */
    CHECK_INT(st->ops->commit(st), BD_ERR_BUSY);
    CHECK_INT(st->ops->ping(st), BD_OK);
    bd_record_query q = by(BD_FIELD_EMAIL, "hal@h.example", 13);
    CHECK_INT(count(&q), 0);
}

static void check_failed_connect(const char *bad, const char *secret)
{
    bd_store *s = (bd_store *)1;
    char why[512];
    CHECK_INT(bd_pg_open(bad, BD_STORE_READ, &s, why, sizeof why), BD_ERR_BUSY);
    CHECK(s == NULL);
    CHECK(strncmp(why, "cannot connect to postgresql://", 31) == 0);
    if (strstr(why, secret))
        TEST_FAIL("password in why: %s", why);
}

TEST(test_pg_failed_connect_never_shows_the_password)
{
    check_failed_connect("postgresql://breachd:Sup3rSecret@/breachd?host=/nonexistent-bd-dir",
                         "Sup3rSecret");
    check_failed_connect("postgresql:///breachd?host=/nonexistent-bd-dir&password=Sup3rSecret",
                         "Sup3rSecret");
    /* libpq quotes a malformed token back: here the token is the password */
    check_failed_connect("postgresql://breachd:Sup3r%zzSecret@/breachd?host=/nonexistent",
                         "Secret");
    /* a wrong password against the live server */
    char u[1024];
    uri_with(u, sizeof u, "password=Wr0ngSecret&sslmode=disable");
    bd_store *s = NULL;
    char why[512];
    bd_result r = bd_pg_open(u, BD_STORE_READ, &s, why, sizeof why);
    if (r == BD_OK)
        s->ops->close(s); /* the throwaway cluster trusts local users: no refusal to see */
    else if (strstr(why, "Wr0ngSecret"))
        TEST_FAIL("password in why: %s", why);
}

int main(void)
{
    int go = pg_fixture_connect("bdtest");
    if (go)
        return go < 0 ? 0 : go;
    char sql[256];
    snprintf(sql, sizeof sql, "CREATE SCHEMA %s; CREATE SCHEMA %s_empty", schema, schema);
    admin_sql(sql);
    snprintf(sql, sizeof sql, "SET search_path = %s", schema);
    admin_sql(sql);
    RUN(test_pg_open_creates_schema_once_and_reopening_changes_nothing);
    if (!st)
        return TEST_EXIT();
    RUN(test_pg_open_without_create_reports_missing_store);
    RUN(test_pg_meta_round_trip);
    RUN(test_pg_breaches_put_list_get_exists);
    RUN(test_pg_record_put_detects_duplicates_and_missing_breach);
    RUN(test_pg_record_find_orders_by_breach_date_then_id_and_pages_by_keyset);
    RUN(test_pg_record_filters_present_absent_equals);
    RUN(test_pg_record_domain_search_counts_from_domain_counts);
    RUN(test_pg_breach_by_id_and_refreshed_count);
    RUN(test_pg_keys_add_list_revoke_and_generation);
    RUN(test_pg_stats_counts_per_breach_and_totals);
    RUN(test_pg_erase_email_reports_breaches_and_moves_domain_counts);
    RUN(test_pg_erase_breach_removes_records_and_empty_domain_counts);
    RUN(test_pg_each_search_is_one_snapshot_with_its_data_version);
    RUN(test_pg_bulk_load_rebuilds_indexes_and_domain_counts);
    RUN(test_pg_backup_is_refused_and_there_is_no_log_to_truncate);
    RUN(test_pg_write_transactions_hold_the_writer_lock_and_reads_do_not);
    RUN(test_pg_lost_connection_is_busy_then_reset_on_next_call);
    RUN(test_pg_lost_connection_inside_transaction_stays_busy_until_rollback);
    RUN(test_pg_failed_connect_never_shows_the_password);
    st->ops->close(st);
    snprintf(sql, sizeof sql, "DROP SCHEMA %s CASCADE; DROP SCHEMA %s_empty", schema, schema);
    admin_sql(sql);
    PQfinish(admin);
    return TEST_EXIT();
}
