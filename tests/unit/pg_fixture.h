/* What the PostgreSQL-only tests share: the server and admin connection of pg_admin.h, a
 * schema of the run's own reached through the store URI's search_path option (nothing else
 * in the database is touched), one store open on it, and the row builders the tests use.
 * Include once, from one test file. */
#ifndef BD_TESTS_PG_FIXTURE_H
#define BD_TESTS_PG_FIXTURE_H

#include "pg_admin.h"
#include "store/store_impl.h"

static bd_store *st;

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
