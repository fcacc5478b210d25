/* What the PostgreSQL contract tests share: a live server whose URI is in
 * BREACHD_TEST_PG_URI (the tests skip when it is unset; scripts/pg-cluster.sh starts a
 * throwaway one), an admin connection, a schema of the run's own reached through the
 * store URI's search_path option (nothing else in the database is touched), and the
 * store and row builders the tests use. Include once, from one test file. */
#ifndef BD_TESTS_PG_FIXTURE_H
#define BD_TESTS_PG_FIXTURE_H

#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/store_impl.h"
#include "test.h"

static const char *base_uri;
static char schema[64];
static bd_store *st;
static PGconn *admin;

/* base_uri plus "name=value" (already percent-encoded) as a query parameter. */
static inline void uri_with(char *out, size_t cap, const char *param)
{
    snprintf(out, cap, "%s%c%s", base_uri, strchr(base_uri, '?') ? '&' : '?', param);
}

static inline void admin_sql(const char *sql)
{
    PGresult *res = PQexec(admin, sql);
    if (PQresultStatus(res) != PGRES_COMMAND_OK && PQresultStatus(res) != PGRES_TUPLES_OK)
        TEST_FAIL("%s: %s", sql, PQresultErrorMessage(res));
    PQclear(res);
}

static inline int64_t admin_count(const char *sql)
{
    PGresult *res = PQexec(admin, sql);
    int64_t n =
        PQresultStatus(res) == PGRES_TUPLES_OK ? strtoll(PQgetvalue(res, 0, 0), NULL, 10) : -1;
    PQclear(res);
    return n;
}

/* Opens the run's schema as application app; fails the test unless the result is want. */
static inline bd_store *open_as(const char *app, int flags, bd_result want)
{
    char param[256], u[1024];
    snprintf(param, sizeof param, "options=-csearch_path%%3D%s&application_name=%s", schema, app);
    uri_with(u, sizeof u, param);
    bd_store *s = NULL;
    char why[512];
    bd_result r = bd_pg_open(u, flags, &s, why, sizeof why);
    if (r != want)
        TEST_FAIL("open %s: %d (%s), want %d", u, (int)r, r ? why : "", (int)want);
    return s;
}

/* Connects the admin and names the run's schema prefix_<pid>. Returns 0 to go on, or the
 * exit status when the run ends here: 0 skipped (no server named), 1 no connection. */
static inline int pg_fixture_connect(const char *prefix)
{
    base_uri = getenv("BREACHD_TEST_PG_URI");
    if (!base_uri || !*base_uri) {
        printf("skipped: BREACHD_TEST_PG_URI is not set\n");
        return -1;
    }
    admin = PQconnectdb(base_uri);
    if (PQstatus(admin) != CONNECTION_OK) {
        fprintf(stderr, "cannot connect to the test server: %s", PQerrorMessage(admin));
        return 1;
    }
    PQclear(PQexec(admin, "SET client_min_messages = warning"));
    snprintf(schema, sizeof schema, "%s_%ld", prefix, (long)getpid());
    return 0;
}

static inline int skip_row(void *ctx, const bd_record_row *row)
{
    (void)ctx;
    (void)row;
    return 0;
}

/* Every record matching q, its position and page size aside. */
static inline int64_t count(bd_record_query *q)
{
    bd_record_query first = *q;
    first.has_after = false;
    first.limit = 1;
    int64_t n = -1;
    CHECK_INT(bd_store_record_search(st, &first, skip_row, NULL, &n), BD_OK);
    return n;
}

static inline bd_record_query by(bd_field f, const char *key, size_t len)
{
    bd_record_query q;
    memset(&q, 0, sizeof q);
    q.field = f;
    q.key = (bd_slice){key, len};
    q.limit = 100;
    return q;
}

static const char P1[32] = "password-one-hmac-32-bytes-long";

static inline bd_result put_record(const char *breach, const char *email, const char *pw, int n,
                                   bool *inserted)
{
    bd_record_in r;
    memset(&r, 0, sizeof r);
    memcpy(r.breach_uuid, breach, BD_UUID_LEN + 1);
    r.email = bd_slice_from(email);
    const char *at = strchr(email, '@');
    r.email_domain = bd_slice_from(at ? at + 1 : NULL);
    if (pw)
        r.password_hmac = (bd_slice){pw, 32};
    r.severity = pw ? BD_SEVERITY_HIGH : BD_SEVERITY_LOW;
    memcpy(r.dedup, &n, sizeof n);
    return st->ops->record_put(st, &r, inserted);
}

static inline void put_breach(const char *uuid, const char *name, int32_t date, int64_t pwned)
{
    bd_breach_in b = {
        .source_name = bd_slice_from(name), .date_leaked = date, .pwned_count = pwned};
    memcpy(b.uuid, uuid, BD_UUID_LEN + 1);
    bool ins = false;
    CHECK_INT(st->ops->breach_put(st, &b, &ins), BD_OK);
    CHECK(ins);
}

#endif
