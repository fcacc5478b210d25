/* PostgreSQL store: record puts streamed into a write transaction with COPY (copy.c), against
 * a live server whose URI is in BREACHD_TEST_PG_URI (skipped when unset; scripts/pg-cluster.sh
 * starts a throwaway one). Like test_pg_store.c, the run works in a schema of its own, made
 * and dropped here; the tests run in order on one store, each building on the previous. */
#include "pg_fixture.h"

static bd_store *open_store(void)
{
    return open_as("bdtest_copy", BD_STORE_WRITE | BD_STORE_CREATE, BD_OK);
}

#define B5 "55555555-5555-4555-8555-555555555555"
#define B6 "66666666-6666-4666-8666-666666666666"

static int64_t late(void)
{
    return st->ops->take_late_duplicates(st);
}

/* Whether the connection of the streaming tests is in a COPY right now. */
static bool copying(void)
{
    return admin_count("SELECT count(*) FROM pg_stat_activity WHERE application_name = "
                       "'bdtest_copy' AND query LIKE 'COPY%'") == 1;
}

static char emails[256];
static int collect_emails(void *ctx, const bd_record_row *row)
{
    (void)ctx;
    size_t n = strlen(emails);
    snprintf(emails + n, sizeof emails - n, "%s%.*s", n ? "," : "", (int)row->email.len,
             row->email.ptr);
    return 0;
}

/* The emails of a domain's records, newest first. */
static const char *domain_emails(const char *domain)
{
    bd_record_query q = by(BD_FIELD_EMAIL_DOMAIN, domain, strlen(domain));
    emails[0] = '\0';
    CHECK_INT(bd_store_record_search(st, &q, collect_emails, NULL, NULL), BD_OK);
    return emails;
}

static int64_t domain_count(const char *domain)
{
    bd_record_query q = by(BD_FIELD_EMAIL_DOMAIN, domain, strlen(domain));
    return count(&q);
}

TEST(test_pg_batch_rollback_discards_staged_records)
{
    put_breach(B5, "Copy", 20220202, -1);
    bool ins = false;
    CHECK_INT(st->ops->begin(st), BD_OK);
    CHECK_INT(put_record(B5, "kim@c.example", NULL, 200, &ins), BD_OK);
    CHECK(ins);
    CHECK(copying());
    st->ops->rollback(st);
    CHECK_INT(late(), 0);
    CHECK_STR(domain_emails("c.example"), "");
    /* the staging table made by the transaction undone is made again */
    CHECK_INT(st->ops->begin(st), BD_OK);
    CHECK_INT(put_record(B5, "kim@c.example", NULL, 200, &ins), BD_OK);
    CHECK_INT(st->ops->commit(st), BD_OK);
    CHECK_INT(late(), 0);
    CHECK_STR(domain_emails("c.example"), "kim@c.example");
}

TEST(test_pg_batch_duplicates_are_counted_at_commit)
{
    bool ins = false;
    CHECK_INT(st->ops->begin(st), BD_OK);
    const struct {
        const char *email;
        int n;
    } rows[] = {{"lee@c.example", 201},
                {"max@c.example", 202},
                {"lee@c.example", 201}, /* twice in the batch */
                {"kim@c.example", 200}, /* stored before */
                {"ned@c.example", 203}};
    for (int i = 0; i < 5; i++) {
        ins = false;
        CHECK_INT(put_record(B5, rows[i].email, NULL, rows[i].n, &ins), BD_OK);
        CHECK(ins); /* staged: duplicates are found when the rows move */
    }
    CHECK(copying());
    CHECK_INT(late(), 0); /* nothing committed yet */
    CHECK_INT(st->ops->commit(st), BD_OK);
    CHECK_INT(late(), 2);
    CHECK_INT(late(), 0); /* taken */
    CHECK_STR(domain_emails("c.example"),
              "ned@c.example,max@c.example,lee@c.example,kim@c.example");
    CHECK_INT(domain_count("c.example"), 4); /* the domain count moved by what went in */
    CHECK_INT(domain_rows_astray(), 0);       /* ... and the lookup rows by the same */
}

TEST(test_pg_batch_put_again_is_all_duplicates)
{
    bool ins = false;
    CHECK_INT(st->ops->begin(st), BD_OK);
    CHECK_INT(put_record(B5, "lee@c.example", NULL, 201, &ins), BD_OK);
    CHECK_INT(put_record(B5, "max@c.example", NULL, 202, &ins), BD_OK);
    CHECK_INT(put_record(B5, "ned@c.example", NULL, 203, &ins), BD_OK);
    CHECK_INT(st->ops->commit(st), BD_OK);
    CHECK_INT(late(), 3);
    CHECK_INT(domain_count("c.example"), 4);
}

TEST(test_pg_batch_missing_breach_fails_at_put)
{
    bool ins = true;
    CHECK_INT(st->ops->begin(st), BD_OK);
    CHECK_INT(put_record(B6, "oz@c.example", NULL, 210, &ins), BD_ERR_NOT_FOUND);
    CHECK(!ins);
    CHECK_INT(put_record(B5, "pat@c.example", NULL, 211, &ins), BD_OK);
    CHECK(ins);
    ins = true;
    CHECK_INT(put_record(B6, "oz@c.example", NULL, 210, &ins), BD_ERR_NOT_FOUND);
    CHECK(!ins);
    CHECK(copying());                      /* known missing: the COPY went on */
    put_breach(B6, "Later", 20230303, -1); /* now it exists */
    CHECK_INT(put_record(B6, "oz@c.example", NULL, 210, &ins), BD_OK);
    CHECK(ins);
    CHECK_INT(st->ops->commit(st), BD_OK);
    CHECK_INT(late(), 0);
    CHECK_STR(domain_emails("c.example"),
              "oz@c.example,pat@c.example,ned@c.example,max@c.example,lee@c.example,kim@c.example");
}

TEST(test_pg_batch_rows_are_seen_by_the_next_statement)
{
    bool ins = false;
    CHECK_INT(st->ops->begin(st), BD_OK);
    CHECK_INT(put_record(B5, "quinn@q.example", NULL, 220, &ins), BD_OK);
    CHECK_INT(domain_count("q.example"), 1); /* the COPY ended and the row moved */
    CHECK(!copying());
    CHECK_INT(put_record(B5, "quinn@q.example", NULL, 220, &ins), BD_OK); /* a duplicate */
    CHECK_INT(put_record(B5, "rae@q.example", NULL, 221, &ins), BD_OK);
    CHECK(copying());
    CHECK_INT(st->ops->commit(st), BD_OK);
    CHECK_INT(late(), 1);
    CHECK_STR(domain_emails("q.example"), "rae@q.example,quinn@q.example");
    CHECK_INT(domain_count("q.example"), 2);
}

static char got[8][128];
static bool got_null[8];
static int64_t got_severity;
static int collect_values(void *ctx, const bd_record_row *row)
{
    (void)ctx;
    const bd_slice *v[8] = {&row->user_name,  &row->first_name,      &row->last_name,
                            &row->email,      &row->phone_number,    &row->ip_address,
                            &row->ssn_masked, &row->other_attributes};
    for (int i = 0; i < 8; i++) {
        got_null[i] = v[i]->ptr == NULL;
        snprintf(got[i], sizeof got[i], "%.*s", (int)v[i]->len, v[i]->ptr ? v[i]->ptr : "");
    }
    got_severity = row->severity;
    return 1;
}

TEST(test_pg_batch_values_round_trip_exactly)
{
    static const char hmac[32] = "\x00\t\n\\\r\xff\x01N\\N.";
    bd_record_in r;
    memset(&r, 0, sizeof r);
    memcpy(r.breach_uuid, B5, BD_UUID_LEN + 1);
    r.user_name = BD_SLICE_LIT("tab\there\\");
    r.user_name_key = BD_SLICE_LIT("tab\there\\");
    r.first_name = (bd_slice){"", 0}; /* empty, not NULL */
    r.email = BD_SLICE_LIT("sam@s.example");
    r.email_domain = BD_SLICE_LIT("s.example");
    r.phone_number = BD_SLICE_LIT("\\N");
    r.ip_address = BD_SLICE_LIT("\\.");
    r.ssn_masked = BD_SLICE_LIT("line\nbreak\r\n");
    r.other_attributes = BD_SLICE_LIT("{\"city\":\"Z\xc3\xbcrich \xe2\x82\xac \xf0\x9f\x98\x80\"}");
    r.password_hmac = (bd_slice){hmac, 32};
    r.severity = BD_SEVERITY_MEDIUM;
    r.dedup[0] = 230;
    bool ins = false;
    CHECK_INT(st->ops->begin(st), BD_OK);
    CHECK_INT(st->ops->record_put(st, &r, &ins), BD_OK);
    CHECK_INT(st->ops->commit(st), BD_OK);
    CHECK_INT(late(), 0);
    bd_record_query q = by(BD_FIELD_EMAIL, "sam@s.example", 13);
    CHECK_INT(bd_store_record_search(st, &q, collect_values, NULL, NULL), BD_OK);
    CHECK_STR(got[0], "tab\there\\");
    CHECK(!got_null[1] && got[1][0] == '\0');
    CHECK(got_null[2]);
    CHECK_STR(got[4], "\\N");
    CHECK_STR(got[5], "\\.");
    CHECK_STR(got[6], "line\nbreak\r\n");
    CHECK_STR(got[7], "{\"city\":\"Z\xc3\xbcrich \xe2\x82\xac \xf0\x9f\x98\x80\"}");
    CHECK_INT(got_severity, BD_SEVERITY_MEDIUM);
    bd_record_query pw = by(BD_FIELD_PASSWORD, hmac, 32);
    CHECK_INT(count(&pw), 1);
    bd_record_query user = by(BD_FIELD_USERNAME, "tab\there\\", 9);
    CHECK_INT(count(&user), 1);
}

TEST(test_pg_batch_bulk_load_with_duplicates)
{
    bool ins = false;
    CHECK_INT(st->ops->begin(st), BD_OK);
    CHECK_INT(st->ops->bulk_begin(st, BD_BULK_RECORDS), BD_OK);
    CHECK_INT(put_record(B5, "uma@u.example", P1, 240, &ins), BD_OK);
    CHECK_INT(put_record(B5, "vic@u.example", P1, 241, &ins), BD_OK);
    CHECK_INT(put_record(B5, "uma@u.example", P1, 240, &ins), BD_OK);
    CHECK_INT(put_record(B5, "kim@c.example", NULL, 200, &ins), BD_OK);
    CHECK_INT(st->ops->bulk_end(st, BD_BULK_RECORDS), BD_OK);
    CHECK_INT(st->ops->commit(st), BD_OK);
    CHECK_INT(late(), 2);
    CHECK_STR(domain_emails("u.example"), "vic@u.example,uma@u.example");
    CHECK_INT(domain_count("u.example"), 2);
    CHECK_INT(domain_count("c.example"), 6);
    CHECK_INT(admin_count("SELECT count(*) FROM pg_indexes WHERE tablename = 'records' "
                          "AND schemaname = current_schema() AND indexname LIKE 'records_by_%'"),
              11); /* records_by_website (issue 35) among them */
    CHECK_INT(domain_rows_astray(), 0);
    CHECK(admin_count("SELECT count(*) FROM record_domains WHERE domain = 'u.example'") == 2);
}

TEST(test_pg_batch_put_outside_a_transaction_knows_duplicates_at_once)
{
    bool ins = true;
    CHECK_INT(put_record(B5, "kim@c.example", NULL, 200, &ins), BD_OK);
    CHECK(!ins); /* a put of its own runs as one insert */
    CHECK_INT(put_record(B5, "wes@c.example", NULL, 250, &ins), BD_OK);
    CHECK(ins);
    CHECK_INT(late(), 0);
    CHECK_INT(domain_count("c.example"), 7);
}

int main(void)
{
    int go = pg_fixture_connect("bdcopy");
    if (go)
        return go < 0 ? 0 : go;
    char sql[256];
    snprintf(sql, sizeof sql, "CREATE SCHEMA %s; SET search_path = %s", schema, schema);
    admin_sql(sql);
    st = open_store();
    if (!st)
        return TEST_EXIT();
    RUN(test_pg_batch_rollback_discards_staged_records);
    RUN(test_pg_batch_duplicates_are_counted_at_commit);
    RUN(test_pg_batch_put_again_is_all_duplicates);
    RUN(test_pg_batch_missing_breach_fails_at_put);
    RUN(test_pg_batch_rows_are_seen_by_the_next_statement);
    RUN(test_pg_batch_values_round_trip_exactly);
    RUN(test_pg_batch_bulk_load_with_duplicates);
    RUN(test_pg_batch_put_outside_a_transaction_knows_duplicates_at_once);
    st->ops->close(st);
    snprintf(sql, sizeof sql, "DROP SCHEMA %s CASCADE", schema);
    admin_sql(sql);
    PQfinish(admin);
    return TEST_EXIT();
}
