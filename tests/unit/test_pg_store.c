/* What the PostgreSQL store promises on its own, beyond the contract every backend keeps
 * (test_store_contract.c and the other test_*_contract.c), against a live server whose URI
 * is in BREACHD_TEST_PG_URI (skipped when unset; scripts/pg-cluster.sh starts a throwaway
 * one): the store in the schema of the URI's search_path, a snapshot per search, the
 * writer lock, lost connections, no backup and no log to empty, no password in a reason.
 * The run works in a schema of its own, made and dropped here (pg_fixture.h); the tests run
 * in order on one store, each building on what the previous ones left. */
#include "pg_fixture.h"
#include "store/pg/hash_bytes.h"
#include "store/pg/pg_impl.h"

/* The newest PostgreSQL migration (src/store/pg/schema.c; tests/e2e/harness.py has it too). */
#define PG_SCHEMA_VERSION "26"

#define B1 "11111111-1111-4111-8111-111111111111"
#define B2 "22222222-2222-4222-8222-222222222222"

static char emails[256];
static int collect_emails(void *ctx, const bd_record_row *row)
{
    (void)ctx;
    size_t n = strlen(emails);
    snprintf(emails + n, sizeof emails - n, "%s%.*s", n ? "," : "", (int)row->email.len,
             row->email.ptr);
    return 0;
}

/* The emails of the records q finds, newest first. */
static const char *find(bd_record_query *q)
{
    emails[0] = '\0';
    CHECK_INT(bd_store_record_search(st, q, collect_emails, NULL, NULL), BD_OK);
    return emails;
}

static void put_email(const char *breach, const char *email, int n)
{
    bool ins = false;
    CHECK_INT(put_record(breach, email, NULL, n, &ins), BD_OK);
    CHECK(ins);
}

/* The store lives in the schema the URI's search_path names, and only there: a schema on
 * the path that holds no store is reported as one, in words an operator can act on. */
TEST(test_pg_store_lives_in_the_schema_of_the_search_path)
{
    char sql[384], v[16];
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM pg_tables WHERE schemaname = '%s' AND tablename IN "
             "('meta', 'breaches', 'records', 'domain_counts', 'cards', 'card_counts', "
             "'card_words', 'card_owner_words', 'api_keys', 'password_ranges')",
             schema);
    CHECK_INT(admin_count(sql), 10);
    CHECK_INT(bd_store_meta_get(st, "schema_version", v, sizeof v), BD_OK);
    CHECK_STR(v, PG_SCHEMA_VERSION);

    char param[128], u[1024], why[512];
    snprintf(param, sizeof param, "options=-csearch_path%%3D%s_empty", schema);
    uri_with(u, sizeof u, param);
    bd_store *s = NULL;
    CHECK_INT(bd_store_open(u, BD_STORE_WRITE, &s, why, sizeof why), BD_ERR_NOT_FOUND);
    CHECK(strstr(why, "holds no breachd store; run 'breachctl init --db postgresql://") != NULL);
    snprintf(sql, sizeof sql, "SELECT count(*) FROM pg_tables WHERE schemaname = '%s_empty'",
             schema);
    CHECK_INT(admin_count(sql), 0);
}

/* A read holds no snapshot here: each search is one, and the data version a read reports
 * is the one its latest search read its rows at. (SQLite keeps one snapshot per read:
 * test_sqlite_store.c.) */
TEST(test_pg_each_search_is_one_snapshot_with_its_data_version)
{
    put_breach(B1, "One", 20200101, -1);
    put_email(B1, "ann@e.example", 1);
    bd_store *other = open_as("bdtest_other", BD_STORE_WRITE, BD_OK);
    if (!other)
        return;
    bd_record_query q = by(BD_FIELD_EMAIL_DOMAIN, "e.example", 9);
    CHECK_INT(bd_store_read_begin(st), BD_OK);
    CHECK_INT(count(&q), 1);
    uint64_t v0 = bd_store_data_version(st);
    bd_store *writer = st;
    st = other;
    put_breach(B2, "Two", 20210101, -1);
    put_email(B2, "bob@e.example", 2);
    st = writer;
    /* another operation of the same read sees the newer commits */
    bool exists = false;
    CHECK_INT(bd_store_breach_exists(st, B2, &exists), BD_OK);
    CHECK(exists);
    /* no search since: the read's data version holds */
    CHECK_INT(bd_store_data_version(st), v0);
    /* the next search sees both commits (breach, record) and reports their version */
    CHECK_STR(find(&q), "bob@e.example,ann@e.example");
    CHECK_INT(bd_store_data_version(st), v0 + 2);
    bd_store_read_end(st);
    bd_store_close(other);
}

static int ignore_stats(void *ctx, const bd_stats_row *row)
{
    (void)ctx;
    (void)row;
    return 0;
}

/* A per-domain count that erasure brings to zero goes: a domain of one person would name
 * that person. (test_sqlite_store.c checks the same of SQLite.) */
TEST(test_pg_erasure_leaves_no_count_of_an_emptied_domain)
{
    put_email(B1, "only@lone.example", 10);
    put_email(B2, "cat@gone.example", 11);
    static const char counts[] = "SELECT count(*) FROM domain_counts WHERE domain IN "
                                 "('lone.example', 'gone.example')";
    CHECK_INT(admin_count(counts), 2);
    int64_t removed = -1;
    CHECK_INT(bd_store_erase_email(st, "only@lone.example", ignore_stats, NULL, &removed), BD_OK);
    CHECK_INT(removed, 1);
    CHECK_INT(admin_count(counts), 1);
    CHECK_INT(bd_store_erase_breach(st, B2, &removed), BD_OK);
    CHECK_INT(admin_count(counts), 0);
    CHECK_INT(admin_count("SELECT count(*) FROM domain_counts WHERE domain = 'e.example'"), 1);
    CHECK_INT(admin_count("SELECT count(*) FROM record_domains WHERE domain IN "
                          "('lone.example', 'gone.example')"),
              0);
    CHECK_INT(domain_rows_astray(), 0);
}

/* One page of q on store s as "id email" lines, its count (a first page) into *found, and
 * the last row's keyset position into q for the next page (has_after false when none). */
static char page_text[8192];
static bd_record_query *page_query;
static int page_row(void *ctx, const bd_record_row *row)
{
    (void)ctx;
    size_t n = strlen(page_text);
    snprintf(page_text + n, sizeof page_text - n, "%lld %.*s\n", (long long)row->id,
             (int)row->email.len, row->email.ptr);
    page_query->after_date = row->breach_date;
    page_query->after_id = row->id;
    page_query->has_after = true;
    return 0;
}

static const char *page_of(bd_store *s, bd_record_query *q, int64_t *found)
{
    page_text[0] = '\0';
    page_query = q;
    bool first = !q->has_after;
    q->has_after = false;
    bd_record_query run = *q;
    run.has_after = !first;
    CHECK_INT(bd_store_record_search(s, &run, page_row, NULL, first ? found : NULL), BD_OK);
    return page_text;
}

/* Routed as on a Citus coordinator (breachd.routed_searches on), a domain search runs off
 * record_domains and fetches its page by owner key and id: every page, count and following
 * page, with and without =yes/=no filters, is what the one-statement search gives, whether
 * the records went in one by one, in a batch or after an erasure. */
TEST(test_pg_routed_domain_search_pages_as_the_one_statement_search)
{
    char param[256], u[1024], why[512];
    snprintf(param, sizeof param, "options=-csearch_path%%3D%s%%20-cbreachd.routed_searches%%3Don",
             schema);
    uri_with(u, sizeof u, param);
    bd_store *routed = NULL;
    CHECK_INT(bd_pg_open(u, BD_STORE_READ, &routed, why, sizeof why), BD_OK);
    CHECK(pg_of(routed)->routed);
    CHECK(!pg_of(st)->routed);
    const char *b3 = "33333333-3333-4333-8333-333333333333"; /* B2 was erased */
    put_breach(b3, "Three", 20230101, -1);
    for (int i = 0; i < 30; i++) {
        char email[64];
        snprintf(email, sizeof email, "r%02d@route.example", i);
        bool ins = false;
        if (i == 10)
            CHECK_INT(bd_store_begin(st), BD_OK);
        CHECK_INT(put_record(i % 3 ? B1 : b3, email, i % 4 ? NULL : P1, 500 + i, &ins), BD_OK);
        if (i == 19)
            CHECK_INT(bd_store_commit(st), BD_OK);
    }
    int64_t removed = 0;
    CHECK_INT(bd_store_erase_email(st, "r07@route.example", ignore_stats, NULL, &removed), BD_OK);
    CHECK_INT(removed, 1);
    static const bd_filter_mode modes[] = {BD_FILTER_NONE, BD_FILTER_PRESENT, BD_FILTER_ABSENT};
    static const int limits[] = {1, 4, 7, 100};
    int pages = 0;
    for (size_t m = 0; m < 3; m++)
        for (size_t l = 0; l < 4; l++) {
            bd_record_query a = by(BD_FIELD_EMAIL_DOMAIN, "route.example", 13);
            a.filter[BD_FIELD_PASSWORD].mode = modes[m];
            a.filter[BD_FIELD_EMAIL].mode = m == 2 ? BD_FILTER_PRESENT : BD_FILTER_NONE;
            a.limit = limits[l];
            bd_record_query b = a;
            for (int page = 0;; page++, pages++) {
                int64_t na = -1, nb = -2;
                char want[sizeof page_text];
                snprintf(want, sizeof want, "%s", page_of(st, &a, &na));
                CHECK_STR(page_of(routed, &b, &nb), want);
                if (page == 0)
                    CHECK_INT(nb, na);
                CHECK(page > 0 || na == (m == 0 ? 29 : m == 1 ? 8 : 21));
                if (!a.has_after || !want[0])
                    break;
                CHECK_INT(b.after_id, a.after_id);
            }
        }
    CHECK(pages > 40);
    bd_record_query v = by(BD_FIELD_EMAIL_DOMAIN, "route.example", 13);
    v.filter[BD_FIELD_PASSWORD].mode = BD_FILTER_EQUALS; /* a value filter: not routed */
    v.filter[BD_FIELD_PASSWORD].key = (bd_slice){P1, 32};
    bd_record_query w = v;
    int64_t na = -1, nb = -2;
    char want[sizeof page_text];
    snprintf(want, sizeof want, "%s", page_of(st, &v, &na));
    CHECK_STR(page_of(routed, &w, &nb), want);
    CHECK_INT(nb, na);

    CHECK_INT(domain_rows_astray(), 0);
    bd_store_close(routed);
}

static int count_row(void *ctx, const bd_record_row *row)
{
    (void)row;
    (*(int *)ctx)++;
    return 0;
}

/* A routed domain search of the biggest page the API asks for (1,000 records and the probe
 * row past them) carries its page's owner keys and ids in one buffer: it once held 8 KB, and
 * such a page failed with "limit exceeded" on a Citus coordinator (issue 37). */
TEST(test_pg_routed_domain_search_of_the_largest_page)
{
    char param[256], u[1024], why[512];
    snprintf(param, sizeof param, "options=-csearch_path%%3D%s%%20-cbreachd.routed_searches%%3Don",
             schema);
    uri_with(u, sizeof u, param);
    bd_store *routed = NULL;
    CHECK_INT(bd_pg_open(u, BD_STORE_READ, &routed, why, sizeof why), BD_OK);
    CHECK_INT(bd_store_begin(st), BD_OK);
    for (int i = 0; i < 1100; i++) {
        char email[64];
        snprintf(email, sizeof email, "big%04d@big.example", i);
        bool ins = false;
        CHECK_INT(put_record(B1, email, i % 2 ? P1 : NULL, 900000 + i, &ins), BD_OK);
    }
    CHECK_INT(bd_store_commit(st), BD_OK);
    for (int filtered = 0; filtered < 2; filtered++) {
        bd_record_query q = by(BD_FIELD_EMAIL_DOMAIN, "big.example", 11);
        if (filtered)
            q.filter[BD_FIELD_PASSWORD].mode = BD_FILTER_ABSENT;
        q.limit = 1001;
        int rows = 0;
        int64_t found = -1;
        CHECK_INT(bd_store_record_search(routed, &q, count_row, &rows, &found), BD_OK);
        CHECK_INT(rows, filtered ? 550 : 1001);
        CHECK_INT(found, filtered ? 550 : 1100);
    }
    bd_store_close(routed);
}

/* An email search without filters, the hot path, runs fixed statements prepared once per
 * connection (no generated SQL, so the cache of generated statements is not even looked at),
 * routed or not: every page and count is the one the generated search gives (an email
 * search with a filter that every email record meets), and a search notes the data version
 * its rows were read at. */
TEST(test_pg_email_search_runs_fixed_statements_and_pages_as_the_generated_one)
{
    char param[256], u[1024], why[512];
    snprintf(param, sizeof param, "options=-csearch_path%%3D%s%%20-cbreachd.routed_searches%%3Don",
             schema);
    uri_with(u, sizeof u, param);
    bd_store *routed = NULL;
    CHECK_INT(bd_pg_open(u, BD_STORE_READ, &routed, why, sizeof why), BD_OK);
    const char *b4 = "44444444-4444-4444-8444-444444444444";
    put_breach(b4, "Four", 20190101, -1);
    for (int i = 0; i < 9; i++) /* three breaches, so the order has dates and ids to follow */
        put_email(i % 3 == 0   ? B1
                  : i % 3 == 1 ? b4
                               : "33333333-3333-4333-8333-333333333333",
                  "same@fixed.example", 800 + i);
    put_email(B1, "other@fixed.example", 809);
    static const int limits[] = {1, 2, 4, 100};
    bd_store *stores[] = {st, routed};
    for (size_t s = 0; s < 2; s++)
        for (size_t l = 0; l < 4; l++) {
            bd_record_query a = by(BD_FIELD_EMAIL, "same@fixed.example", 18);
            a.filter[BD_FIELD_EMAIL].mode = BD_FILTER_PRESENT; /* the generated statement */
            a.limit = limits[l];
            bd_record_query b = by(BD_FIELD_EMAIL, "same@fixed.example", 18);
            b.limit = limits[l];
            int rows = 0;
            for (int page = 0;; page++) {
                int64_t na = -1, nb = -2;
                char want[sizeof page_text];
                snprintf(want, sizeof want, "%s", page_of(st, &a, &na));
                uint64_t tick = pg_of(stores[s])->tick;
                CHECK_INT(bd_store_read_begin(stores[s]), BD_OK);
                CHECK_STR(page_of(stores[s], &b, &nb), want);
                CHECK(pg_of(stores[s])->has_version || !want[0]);
                bd_store_read_end(stores[s]);
                CHECK_INT(pg_of(stores[s])->tick, tick); /* no generated statement */
                if (page == 0) {
                    CHECK_INT(na, 9);
                    CHECK_INT(nb, 9);
                }
                for (const char *c = want; (c = strchr(c, '\n')) != NULL; c++)
                    rows++;
                if (!a.has_after || !want[0])
                    break;
                CHECK_INT(b.after_id, a.after_id);
            }
            CHECK_INT(rows, 9);
        }
    bd_record_query none = by(BD_FIELD_EMAIL, "nobody@fixed.example", 20);
    int64_t n = -1;
    CHECK_STR(page_of(routed, &none, &n), "");
    CHECK_INT(n, 0);
    bd_store_close(routed);
}

/* Puts a record of breach B1 whose only identity is field (or none when NULL), with dedup
 * hash n, by a row insert (outside a transaction) or by COPY (inside one). */
static void put_identity(const char *field, const char *v, int n, bool streamed)
{
    bd_record_in r;
    memset(&r, 0, sizeof r);
    memcpy(r.breach_uuid, B1, BD_UUID_LEN + 1);
    bd_slice s = bd_slice_from(v);
    if (!field)
        s = (bd_slice){NULL, 0};
    else if (strcmp(field, "user") == 0)
        r.user_name = r.user_name_key = s;
    else if (strcmp(field, "phone") == 0)
        r.phone_number = r.phone_key = s;
    else if (strcmp(field, "ip") == 0)
        r.ip_address = s;
    else if (strcmp(field, "bitcoin") == 0)
        r.bitcoin_address = s;
    else if (strcmp(field, "ssn") == 0)
        r.ssn_hmac = (bd_slice){P1, 32};
    else if (strcmp(field, "hash") == 0)
        r.password_hash = s;
    else if (strcmp(field, "password") == 0)
        r.password_hmac = (bd_slice){P1, 32};
    else
        r.email = s;
    (void)s;
    r.severity = BD_SEVERITY_LOW;
    memcpy(r.dedup, &n, sizeof n);
    bool ins = false;
    if (streamed)
        CHECK_INT(bd_store_begin(st), BD_OK);
    CHECK_INT(st->ops->record_put(st, &r, &ins), BD_OK);
    if (streamed)
        CHECK_INT(bd_store_commit(st), BD_OK);
    CHECK(ins);
}

/* Every record's owner key (the column a Citus cluster distributes records by) is what
 * migration 8 computes in SQL for the rows it finds, whichever way the record went in and
 * whichever identity it has; all records of one email share the key an email search names. */
TEST(test_pg_owner_keys_are_the_ones_migration_8_computes)
{
    static const char *const FIELDS[] = {"email", "user", "phone",    "ip", "bitcoin",
                                         "ssn",   "hash", "password", NULL};
    int n = 9000;
    for (size_t i = 0; i < sizeof FIELDS / sizeof FIELDS[0]; i++)
        for (int streamed = 0; streamed < 2; streamed++)
            put_identity(FIELDS[i], "Owner-Ключ-1", n++, streamed);
    char sql[2048];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM records WHERE ok IS DISTINCT FROM %s",
             pg_owner_key_sql);
    CHECK_INT(admin_count(sql), 0);
    CHECK(admin_count("SELECT count(*) FROM records") >= 18); /* the check above saw rows */
    CHECK_INT(admin_count("SELECT count(DISTINCT ok) FROM records WHERE email = 'Owner-Ключ-1'"),
              1);
    CHECK_INT(admin_count("SELECT count(*) FROM records WHERE email = 'Owner-Ключ-1' AND ok = "
                          "encode(substr(sha256(convert_to('email:Owner-Ключ-1', 'UTF8')), 1, "
                          "16), 'hex')::uuid"),
              2);
    bd_record_query q = by(BD_FIELD_EMAIL, "Owner-Ключ-1", strlen("Owner-Ключ-1"));
    CHECK_INT(count(&q), 2);
}

/* A bulk card load drops the card indexes and builds them again before its commit (the
 * contract suites see the same cards found either way, which they would be without the
 * indexes too). test_pg_copy.c checks the same of records. */
TEST(test_pg_bulk_card_load_builds_the_card_indexes_again)
{
    static const char indexes[] = "SELECT count(*) FROM pg_indexes WHERE tablename = 'cards' "
                                  "AND schemaname = current_schema() "
                                  "AND indexname LIKE 'cards\\_by\\_%'";
    static const char card_id_key[] =
        "SELECT count(*) FROM pg_indexes WHERE tablename = 'cards' "
        "AND schemaname = current_schema() AND indexname = 'cards_pkey' "
        "AND indexdef LIKE '%(card_id)'";
    CHECK_INT(admin_count(indexes), 9);
    CHECK_INT(admin_count(card_id_key), 1);
    CHECK_INT(bd_store_begin(st), BD_OK);
    CHECK_INT(bd_store_bulk_begin(st, BD_BULK_CARDS), BD_OK);
    CHECK_INT(bd_store_bulk_end(st, BD_BULK_CARDS), BD_OK);
    CHECK_INT(bd_store_commit(st), BD_OK);
    CHECK_INT(admin_count(indexes), 9);
    CHECK_INT(admin_count(card_id_key), 1);
}

TEST(test_pg_backup_is_refused_and_there_is_no_log_to_truncate)
{
    /* pg_dump is the tool for a PostgreSQL store (docs/OPERATIONS.md). */
    CHECK_INT(bd_store_backup(st, "/tmp/never", -1), BD_ERR_INVALID);
    CHECK(access("/tmp/never", F_OK) != 0);
    CHECK_INT(bd_store_truncate_log(st, 100), BD_OK);
}

TEST(test_pg_write_transactions_hold_the_writer_lock_and_reads_do_not)
{
    static const char held[] = "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' "
                               "AND objid = 1651664243 AND granted";
    CHECK_INT(admin_count(held), 0);
    CHECK_INT(bd_store_read_begin(st), BD_OK);
    CHECK_INT(admin_count(held), 0);
    bd_store_read_end(st);
    CHECK_INT(bd_store_begin(st), BD_OK);
    CHECK_INT(admin_count(held), 1);
    CHECK_INT(bd_store_begin(st), BD_ERR_INVALID); /* no nesting */
    bd_store_rollback(st);
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

TEST(test_pg_lost_connection_outside_a_transaction_is_reconnected_at_once)
{
    /* A server restart closes every connection; libpq finds out only by using it. The call
     * that finds out reconnects and runs its statement again, so no caller (no request)
     * sees the restart once the server is back. */
    CHECK_INT(bd_store_ping(st), BD_OK);
    kill_backends("bdtest");
    CHECK_INT(bd_store_ping(st), BD_OK);
    kill_backends("bdtest");
    char v[16];
    CHECK_INT(bd_store_meta_get(st, "schema_version", v, sizeof v), BD_OK); /* re-prepared */
    CHECK_STR(v, PG_SCHEMA_VERSION);
    bd_record_query q = by(BD_FIELD_EMAIL_DOMAIN, "e.example", 9);
    CHECK_STR(find(&q), "ann@e.example");
}

TEST(test_pg_lost_connection_inside_transaction_stays_busy_until_rollback)
{
    CHECK_INT(bd_store_begin(st), BD_OK);
    bool ins = false;
    CHECK_INT(put_record(B1, "hal@h.example", NULL, 80, &ins), BD_OK);
    kill_backends("bdtest");
    CHECK_INT(put_record(B1, "ida@h.example", NULL, 81, &ins), BD_ERR_BUSY);
    CHECK_INT(bd_store_ping(st), BD_ERR_BUSY); /* the transaction is lost: no silent reset */
    CHECK_INT(bd_store_commit(st), BD_ERR_BUSY);
    CHECK_INT(bd_store_ping(st), BD_OK);
    bd_record_query q = by(BD_FIELD_EMAIL_DOMAIN, "h.example", 9);
    CHECK_INT(count(&q), 0);
}

/* Migration 9 gives the breaches stored before it their Names (in C, in the migration's
 * transaction: the same Names a put derives) and the upgrade's time as added and modified. */
TEST(test_pg_upgrade_names_stored_breaches_and_dates_them_at_the_upgrade)
{
    put_breach("55555555-5555-4555-8555-555555555555", "Zeta Leak", 20200101, -1);
    put_breach("66666666-6666-4666-8666-666666666666", "zeta-leak", 20200102, -1);
    admin_sql("DROP INDEX breaches_by_name; ALTER TABLE breaches DROP COLUMN name,"
              "  DROP COLUMN added_at, DROP COLUMN modified_at, DROP COLUMN hibp_flags;"
              "UPDATE meta SET value = '8' WHERE key = 'schema_version'");
    bd_store *again = open_as("bdtest", BD_STORE_WRITE, BD_OK);
    CHECK_INT(admin_count("SELECT count(*) FROM breaches WHERE name IS NULL OR added_at < "
                          "1700000000 OR modified_at <> added_at OR hibp_flags <> 0"),
              0);
    CHECK_INT(admin_count("SELECT count(*) FROM breaches WHERE uuid LIKE '5555%' AND "
                          "name = 'ZetaLeak' OR uuid LIKE '6666%' AND name = 'ZetaLeak2'"),
              2);
    CHECK_INT(admin_count("SELECT count(*) FROM meta WHERE key = 'pending_breach_names'"), 0);
    char v[16];
    CHECK_INT(bd_store_meta_get(st, "schema_version", v, sizeof v), BD_OK);
    CHECK_STR(v, PG_SCHEMA_VERSION);
    bd_store_close(again);
}

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

/* The cards a search of s by keyed CVV ("k" and the digits) finds, with the CVV each holds. */
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

/* A store made before CVVs were keyed (migration 17) keeps its plain CVVs, noted, through
 * the schema upgrade (which has no secret); bd_store_cvv_upgrade then puts each one's mask
 * and keyed hash in its place and takes the note and the index of plain values away. A new
 * store has neither. */
TEST(test_pg_upgrade_keys_and_masks_the_cvvs_kept_in_clear)
{
    static const char note[] = "SELECT count(*) FROM meta WHERE key = 'pending_cvv_hashes'";
    static const char plain_index[] = "SELECT count(*) FROM pg_indexes WHERE schemaname = "
                                      "current_schema() AND indexname = 'cards_by_cvv'";
    CHECK_INT(admin_count(note), 0);
    CHECK_INT(admin_count(plain_index), 0);
    static const char *const ids[] = {"old-1", "old-2", "old-3", "old-4"};
    for (int i = 0; i < 4; i++) {
        bd_card_in c;
        memset(&c, 0, sizeof c);
        snprintf(c.id, sizeof c.id, "%s", ids[i]);
        snprintf(c.created_at, sizeof c.created_at, "2024-01-0%d 00:00:00", i + 1);
        snprintf(c.number_masked, sizeof c.number_masked, "411111XXXXXX1111");
        memcpy(c.bin, "411111", 6);
        memcpy(c.last4, "1111", 4);
        c.length = 16;
        c.number_hmac[0] = (uint8_t)i;
        c.leak_size = -1;
        bool ins;
        CHECK_INT(bd_store_card_put(st, &c, &ins), BD_OK);
    }
    /* Back to schema 16, with the CVVs in clear as it kept them. */
    admin_sql("DROP INDEX cards_by_cvv_hmac; ALTER TABLE cards DROP COLUMN cvv_hmac;"
              "UPDATE cards SET cvv = '123' WHERE card_id IN ('old-1', 'old-3');"
              "UPDATE cards SET cvv = '8642' WHERE card_id = 'old-2';"
              "CREATE INDEX cards_by_cvv ON cards(cvv) WHERE cvv IS NOT NULL;"
              "UPDATE meta SET value = '16' WHERE key = 'schema_version'");
    bd_store *again = open_as("bdtest", BD_STORE_WRITE, BD_OK);
    if (!again)
        return;
    CHECK_INT(admin_count(note), 1);
    CHECK_INT(admin_count("SELECT count(*) FROM cards WHERE cvv ~ '[0-9]'"), 3);
    CHECK_STR(cards_of_cvv(again, "123"), ""); /* not keyed yet */
    int calls = 0;
    int64_t changed = -1;
    CHECK_INT(bd_store_cvv_upgrade(again, protect_test, &calls, &changed), BD_OK);
    CHECK_INT(changed, 3);
    CHECK_INT(calls, 2); /* once per value */
    CHECK_STR(cards_of_cvv(again, "123"), "old-3=***,old-1=***");
    CHECK_STR(cards_of_cvv(again, "8642"), "old-2=****");
    CHECK_INT(admin_count("SELECT count(*) FROM cards WHERE cvv ~ '[0-9]'"), 0);
    CHECK_INT(admin_count("SELECT count(*) FROM cards WHERE card_id = 'old-4' AND cvv IS NULL "
                          "AND cvv_hmac IS NULL"),
              1);
    CHECK_INT(admin_count(note), 0);
    CHECK_INT(admin_count(plain_index), 0);
    CHECK_INT(bd_store_cvv_upgrade(again, protect_test, &calls, &changed), BD_OK);
    CHECK_INT(changed, 0); /* nothing waits any more */
    CHECK_INT(calls, 2);
    char v[16];
    CHECK_INT(bd_store_meta_get(again, "schema_version", v, sizeof v), BD_OK);
    CHECK_STR(v, PG_SCHEMA_VERSION);
    bd_store_close(again);
}

static void check_failed_connect(const char *bad, const char *secret)
{
    bd_store *s = (bd_store *)1;
    char why[512];
    CHECK_INT(bd_store_open(bad, BD_STORE_READ, &s, why, sizeof why), BD_ERR_BUSY);
    CHECK(s == NULL);
    CHECK(strncmp(why, "cannot connect to postgresql://", 31) == 0);
    if (strstr(why, secret))
        TEST_FAIL("password in why: %s", why);
}

/* One setting of a store's session, as SHOW gives it. */
static void session_setting(bd_store *s, const char *name, char *out, size_t cap)
{
    char sql[128];
    snprintf(sql, sizeof sql, "SHOW %s", name);
    PGresult *res = PQexec(pg_of(s)->conn, sql);
    CHECK_INT(PQresultStatus(res), PGRES_TUPLES_OK);
    snprintf(out, cap, "%s", PQntuples(res) == 1 ? PQgetvalue(res, 0, 0) : "?");
    PQclear(res);
}

/* A reading session plans no parallel workers (a page's LIMIT given as a parameter was
 * estimated at a tenth of the rows, and at 10M cards an owner word's page got a Gather
 * Merge whose worker took 4.5 ms to start) and no JIT; a writing session keeps the
 * cluster's parallel setting, for an import's set-wide statements. */
TEST(test_pg_reading_sessions_plan_without_parallel_workers_or_jit)
{
    bd_store *r = open_as("bdtest-read", BD_STORE_READ, BD_OK);
    char v[64];
    session_setting(r, "max_parallel_workers_per_gather", v, sizeof v);
    CHECK_STR(v, "0");
    session_setting(r, "jit", v, sizeof v);
    CHECK_STR(v, "off");
    bd_store_close(r);
    PGresult *res = PQexec(admin, "SELECT reset_val FROM pg_settings "
                                  "WHERE name = 'max_parallel_workers_per_gather'");
    CHECK_INT(PQresultStatus(res), PGRES_TUPLES_OK);
    session_setting(st, "max_parallel_workers_per_gather", v, sizeof v);
    CHECK_STR(v, PQgetvalue(res, 0, 0));
    PQclear(res);
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
    bd_result r = bd_store_open(u, BD_STORE_READ, &s, why, sizeof why);
    if (r == BD_OK)
        bd_store_close(s); /* the throwaway cluster trusts local users: no refusal to see */
    else if (strstr(why, "Wr0ngSecret"))
        TEST_FAIL("password in why: %s", why);
}

/* The lookup log is no write of the data searches read: its rows go in without moving the
 * data version, which would empty every server's breach objects at each flush (and, on a
 * Citus cluster, send each search's breaches to the coordinator again). */
TEST(test_pg_lookup_rows_leave_the_data_version_where_it_was)
{
    const char *version = "SELECT value::bigint FROM meta WHERE key = 'data_version'";
    int64_t before = admin_count(version);
    int64_t rows = admin_count("SELECT count(*) FROM lookups");
    bd_lookup_row add[2] = {{.at = 1000, .key_id = 1, .type = 0, .hash = {1}},
                            {.at = 1001, .key_id = 1, .type = 0, .hash = {2}}};
    CHECK_INT(bd_store_lookup_add(st, add, 2), BD_OK);
    CHECK_INT(admin_count("SELECT count(*) FROM lookups"), rows + 2);
    CHECK_INT(admin_count(version), before);
    CHECK(before > 0);
}

/* Direct reads find a record's Citus shard by PostgreSQL's hash of its owner key: the same
 * as uuid_hash, which Citus hashes a uuid distribution column with, on owner keys. */
TEST(test_pg_hash_bytes_is_postgresql_uuid_hash)
{
    for (int i = 0; i < 64; i++) {
        char email[32], sql[160], hex[33];
        snprintf(email, sizeof email, "hash%d@example.com", i);
        uint8_t ok[PG_OWNER_KEY_LEN];
        pg_email_owner_key((bd_slice){email, strlen(email)}, ok);
        for (int k = 0; k < PG_OWNER_KEY_LEN; k++)
            snprintf(hex + 2 * k, 3, "%02x", ok[k]);
        snprintf(sql, sizeof sql, "SELECT uuid_hash('%s'::uuid)", hex);
        CHECK_INT(pg_hash_bytes(ok, sizeof ok), admin_count(sql));
    }
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
    st = open_as("bdtest", BD_STORE_WRITE | BD_STORE_CREATE, BD_OK);
    if (st) {
        RUN(test_pg_store_lives_in_the_schema_of_the_search_path);
        RUN(test_pg_each_search_is_one_snapshot_with_its_data_version);
        RUN(test_pg_erasure_leaves_no_count_of_an_emptied_domain);
        RUN(test_pg_routed_domain_search_pages_as_the_one_statement_search);
        RUN(test_pg_routed_domain_search_of_the_largest_page);
        RUN(test_pg_email_search_runs_fixed_statements_and_pages_as_the_generated_one);
        RUN(test_pg_owner_keys_are_the_ones_migration_8_computes);
        RUN(test_pg_bulk_card_load_builds_the_card_indexes_again);
        RUN(test_pg_backup_is_refused_and_there_is_no_log_to_truncate);
        RUN(test_pg_reading_sessions_plan_without_parallel_workers_or_jit);
        RUN(test_pg_write_transactions_hold_the_writer_lock_and_reads_do_not);
        RUN(test_pg_lost_connection_outside_a_transaction_is_reconnected_at_once);
        RUN(test_pg_lost_connection_inside_transaction_stays_busy_until_rollback);
        RUN(test_pg_upgrade_names_stored_breaches_and_dates_them_at_the_upgrade);
        RUN(test_pg_upgrade_keys_and_masks_the_cvvs_kept_in_clear);
        RUN(test_pg_failed_connect_never_shows_the_password);
        RUN(test_pg_lookup_rows_leave_the_data_version_where_it_was);
        RUN(test_pg_hash_bytes_is_postgresql_uuid_hash);
        bd_store_close(st);
    }
    snprintf(sql, sizeof sql, "DROP SCHEMA %s CASCADE; DROP SCHEMA %s_empty", schema, schema);
    admin_sql(sql);
    PQfinish(admin);
    return TEST_EXIT();
}
