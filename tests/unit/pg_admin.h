/* The PostgreSQL server the tests use: its URI is in BREACHD_TEST_PG_URI (the tests skip
 * when it is unset; scripts/pg-cluster.sh starts a throwaway one). An admin connection makes
 * and drops the schemas the tests' stores live in, reached through the store URI's
 * search_path option, so nothing else in the database is touched. Include once, from one
 * test file (through pg_fixture.h or store_fixture.h). */
#ifndef BD_TESTS_PG_ADMIN_H
#define BD_TESTS_PG_ADMIN_H

#include <libpq-fe.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"

static const char *base_uri;
static char schema[64];
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

/* Records and their lookup rows in record_domains (the routing of a Citus cluster,
 * docs/SCALING.md) that disagree, counted both ways: a lookup row naming no such record (or
 * one with another domain, owner, date or fields), or a record with a domain and no row.
 * 0 when they agree. The fields' bits are bd_field's order, restated here. */
static inline int64_t domain_rows_astray(void)
{
    return admin_count(
        "SELECT (SELECT count(*) FROM record_domains d WHERE NOT EXISTS (SELECT 1 FROM records r "
        "WHERE r.id = d.id AND r.ok = d.ok AND r.email_domain = d.domain "
        "AND r.breach_date = d.breach_date AND d.present = (CASE WHEN r.email IS NULL THEN 0 "
        "ELSE 1 END + 2 + CASE WHEN r.phone_key IS NULL THEN 0 ELSE 4 END + CASE WHEN "
        "r.user_name_key IS NULL THEN 0 ELSE 8 END + CASE WHEN r.ip_address IS NULL THEN 0 "
        "ELSE 16 END + CASE WHEN r.ssn_hmac IS NULL THEN 0 ELSE 32 END + CASE WHEN "
        "r.password_hmac IS NULL THEN 0 ELSE 64 END + CASE WHEN r.password_hash IS NULL THEN 0 "
        "ELSE 128 END + CASE WHEN r.bitcoin_address IS NULL THEN 0 ELSE 256 END))) + "
        "(SELECT count(*) FROM records r WHERE r.email_domain IS NOT NULL AND NOT EXISTS ("
        "SELECT 1 FROM record_domains d WHERE d.id = r.id AND d.domain = r.email_domain)) + "
        "(SELECT count(*) - count(DISTINCT id) FROM record_domains)");
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

#endif
