/* Statistics, erasure and backup on PostgreSQL.
 *
 * Erasure deletes the rows in one transaction and keeps the per-domain counts and lookup
 * rows (record_domains) right. The
 * deleted row versions stay in the table files until VACUUM reclaims them (and in the
 * write-ahead log and any archive of it): PostgreSQL has no secure_delete, so the
 * operations guide must say to vacuum after an erasure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/pg/pg_impl.h"

/* The records of each breach counted in one grouped pass and joined to the breaches (Citus
 * plans no correlated subquery beside a reference table). */
static const pg_stmt STATS = {PG_Q_STATS,
                              "SELECT b.uuid, b.source_name, coalesce(c.n, 0), "
                              "coalesce(b.pwned_count, b.pwned_count_derived) FROM breaches b "
                              "LEFT JOIN (SELECT breach_id, count(*) AS n FROM records "
                              "GROUP BY breach_id) AS c ON c.breach_id = b.id "
                              "ORDER BY b.date_leaked DESC, b.source_name, b.uuid"};
static const pg_stmt COUNT_RECORDS = {PG_Q_COUNT_RECORDS, "SELECT count(*) FROM records"};
static const pg_stmt COUNT_CARDS = {PG_Q_COUNT_CARDS, "SELECT count(*) FROM cards"};
/* Each breach that has records with the email, with how many, before they go. */
static const pg_stmt ERASE_EMAIL_BREACHES = {
    PG_Q_ERASE_EMAIL_BREACHES,
    "SELECT b.uuid, b.source_name, count(*) FROM records r JOIN breaches b "
    "ON b.id = r.breach_id WHERE r.ok = $2 AND r.email = $1 "
    "GROUP BY b.id ORDER BY b.date_leaked DESC, b.source_name"};
/* Run before the records go: their number in each of their domains, then (DOMAINS_TAKE) taken
 * off those domains' counts. Two statements, where one UPDATE ... FROM (SELECT ... FROM
 * records) would do on one server: on a Citus cluster a write to a reference table may not
 * read a distributed one. */
static const pg_stmt ERASE_EMAIL_DOMAINS = {
    PG_Q_ERASE_EMAIL_DOMAINS, "SELECT email_domain, count(*) FROM records "
                              "WHERE ok = $2 AND email = $1 AND email_domain IS NOT NULL GROUP BY 1"};
static const pg_stmt ERASE_BREACH_DOMAINS = {
    PG_Q_ERASE_BREACH_DOMAINS, "SELECT email_domain, count(*) FROM records "
                               "WHERE breach_id = (SELECT id FROM breaches WHERE uuid = $1) "
                               "AND email_domain IS NOT NULL GROUP BY 1"};
static const pg_stmt DOMAINS_TAKE = {
    PG_Q_DOMAINS_TAKE, "UPDATE domain_counts d SET n = d.n - g.n "
                       "FROM unnest($1::text[], $2::bigint[]) AS g(domain, n) WHERE d.domain = g.domain"};
/* Run before the records go: their domains' lookup rows (record_domains), named by the
 * records' own (domain, date, id): a lookup row and its record are on different shards of a
 * Citus cluster, so this is a semi-join rather than a join of the two. */
static const pg_stmt ERASE_EMAIL_ROUTES = {
    PG_Q_ERASE_EMAIL_ROUTES,
    "DELETE FROM record_domains WHERE (domain, breach_date, id) IN (SELECT email_domain, "
    "breach_date, id FROM records WHERE ok = $2 AND email = $1 AND email_domain IS NOT NULL)"};
static const pg_stmt ERASE_EMAIL = {PG_Q_ERASE_EMAIL,
                                    "DELETE FROM records WHERE ok = $2 AND email = $1"};
static const pg_stmt ERASE_BREACH_ROUTES = {
    PG_Q_ERASE_BREACH_ROUTES,
    "DELETE FROM record_domains WHERE (domain, breach_date, id) IN (SELECT email_domain, "
    "breach_date, id FROM records WHERE breach_id = (SELECT id FROM breaches WHERE uuid = $1) "
    "AND email_domain IS NOT NULL)"};
/* the SHA-1s of the breach's emails that no other breach holds (email_hashes keeps the address
 * beside its hash, for the range's breach names): before the records go. An email's records
 * grouped (not a correlated NOT EXISTS, which Citus cannot plan across shards). */
static const pg_stmt ERASE_BREACH_EMAIL_HASHES = {
    PG_Q_ERASE_BREACH_EMAIL_HASHES,
    "DELETE FROM email_hashes WHERE email IN (SELECT email FROM records WHERE email IN ("
    "SELECT email FROM records WHERE breach_id = (SELECT id FROM breaches WHERE uuid = $1) "
    "AND email IS NOT NULL) GROUP BY email "
    "HAVING bool_and(breach_id = (SELECT id FROM breaches WHERE uuid = $1)))"};
static const pg_stmt ERASE_BREACH_RECORDS = {
    PG_Q_ERASE_BREACH_RECORDS,
    "DELETE FROM records WHERE breach_id = (SELECT id FROM breaches WHERE uuid = $1)"};
static const pg_stmt ERASE_BREACH = {PG_Q_ERASE_BREACH, "DELETE FROM breaches WHERE uuid = $1"};
/* A domain's count that reached zero goes: a domain of one person names that person. */
static const pg_stmt ERASE_EMPTY_DOMAINS = {PG_Q_ERASE_EMPTY_DOMAINS,
                                            "DELETE FROM domain_counts WHERE n <= 0"};

static bd_result count_of(pg_store *p, const pg_stmt *q, int64_t *n)
{
    PGresult *res;
    bd_result r = pg_run(p, q, NULL, &res);
    if (r == BD_OK) {
        *n = pg_int(res, 0, 0);
        PQclear(res);
    }
    return r;
}

bd_result pg_stats(bd_store *s, bd_stats_cb cb, void *ctx, int64_t *total_records,
                   int64_t *total_cards)
{
    pg_store *p = pg_of(s);
    *total_records = *total_cards = -1;
    PGresult *res;
    bd_result r = pg_run(p, &STATS, NULL, &res);
    if (r != BD_OK)
        return r;
    for (int i = 0, rows = PQntuples(res); i < rows; i++) {
        bd_stats_row row = {pg_slice(res, i, 0), pg_slice(res, i, 1), pg_int(res, i, 2),
                            pg_int(res, i, 3)};
        if (cb(ctx, &row))
            break;
    }
    PQclear(res);
    r = count_of(p, &COUNT_RECORDS, total_records);
    return r == BD_OK ? count_of(p, &COUNT_CARDS, total_cards) : r;
}

/* Runs fixed statement q with text as its parameter, and then ok when not NULL; *changed
 * (when not NULL) gets the number of rows it changed. */
static bd_result run_with_text(pg_store *p, const pg_stmt *q, const char *text, const uint8_t *ok,
                               int64_t *changed)
{
    pg_params pp = {0};
    pg_param_str(&pp, text);
    if (ok)
        pg_param_text(&pp, (bd_slice){(const char *)ok, PG_OWNER_KEY_LEN});
    PGresult *res;
    bd_result r = pg_run(p, q, &pp, &res);
    if (r == BD_OK) {
        if (changed)
            *changed = pg_changes(res);
        PQclear(res);
    }
    return r;
}

/* Takes the records about to go (q: their domains and how many each) off the domain counts. */
static bd_result take_domains(pg_store *p, const pg_stmt *q, const char *text, const uint8_t *ok)
{
    pg_params pp = {0};
    pg_param_str(&pp, text);
    if (ok)
        pg_param_text(&pp, (bd_slice){(const char *)ok, PG_OWNER_KEY_LEN});
    PGresult *res;
    bd_result r = pg_run(p, q, &pp, &res);
    if (r != BD_OK)
        return r;
    bd_buf domains, counts;
    bd_buf_init(&domains, 1u << 30);
    bd_buf_init(&counts, 1u << 30);
    r = bd_buf_append_char(&domains, '{');
    r = r == BD_OK ? bd_buf_append_char(&counts, '{') : r;
    int rows = PQntuples(res);
    for (int i = 0; r == BD_OK && i < rows; i++) {
        r = i ? bd_buf_append_char(&domains, ',') : BD_OK;
        r = r == BD_OK ? pg_array_text(&domains, pg_slice(res, i, 0)) : r;
        r = r == BD_OK ? bd_buf_printf(&counts, "%s%lld", i ? "," : "",
                                       (long long)pg_int(res, i, 1))
                       : r;
    }
    PQclear(res);
    r = r == BD_OK ? bd_buf_append_char(&domains, '}') : r;
    r = r == BD_OK ? bd_buf_append_char(&counts, '}') : r;
    if (r == BD_OK && rows > 0) {
        pg_params tp = {0};
        pg_param_str(&tp, domains.data);
        pg_param_str(&tp, counts.data);
        r = pg_run(p, &DOMAINS_TAKE, &tp, NULL);
    }
    bd_buf_free(&domains);
    bd_buf_free(&counts);
    return r;
}

/* Reports each breach with records of email to cb and refreshes its identity count once
 * the records are gone (the caller deletes them between the two steps). */
static bd_result report_breaches(pg_store *p, const char *email, const uint8_t *ok,
                                 bd_stats_cb cb, void *ctx, PGresult **affected)
{
    pg_params pp = {0};
    pg_param_str(&pp, email);
    pg_param_text(&pp, (bd_slice){(const char *)ok, PG_OWNER_KEY_LEN});
    bd_result r = pg_run(p, &ERASE_EMAIL_BREACHES, &pp, affected);
    if (r != BD_OK)
        return r;
    for (int i = 0, rows = PQntuples(*affected); i < rows; i++) {
        bd_stats_row row = {pg_slice(*affected, i, 0), pg_slice(*affected, i, 1),
                            pg_int(*affected, i, 2), 0};
        cb(ctx, &row);
    }
    return BD_OK;
}

bd_result pg_erase_email(bd_store *s, const char *email, bd_stats_cb cb, void *ctx,
                         int64_t *removed)
{
    pg_store *p = pg_of(s);
    *removed = 0;
    bd_result r = pg_begin(s);
    if (r != BD_OK)
        return r;
    PGresult *affected = NULL;
    int64_t n = 0;
    uint8_t ok[PG_OWNER_KEY_LEN]; /* the email's records are on its owner's shard */
    pg_email_owner_key(bd_slice_from(email), ok);
    r = report_breaches(p, email, ok, cb, ctx, &affected);
    for (int i = 0; r == BD_OK && i < PQntuples(affected); i++)
        r = pg_change_breach(p, BD_CHANGE_RECORDS_REMOVED, PQgetvalue(affected, i, 0),
                             pg_int(affected, i, 2));
    if (r == BD_OK)
        r = take_domains(p, &ERASE_EMAIL_DOMAINS, email, ok);
    if (r == BD_OK)
        r = run_with_text(p, &ERASE_EMAIL_ROUTES, email, ok, NULL);
    if (r == BD_OK)
        r = run_with_text(p, &ERASE_EMAIL, email, ok, &n);
    for (int i = 0; r == BD_OK && i < PQntuples(affected); i++)
        r = pg_breach_refresh_count(s, PQgetvalue(affected, i, 0), -1);
    if (r == BD_OK)
        r = pg_run(p, &ERASE_EMPTY_DOMAINS, NULL, NULL);
    if (r == BD_OK)
        r = pg_alerts_erase_email(p, email);
    PQclear(affected);
    if (r == BD_OK)
        r = pg_commit(s);
    else
        pg_rollback(s);
    if (r == BD_OK)
        *removed = n;
    return r;
}

bd_result pg_erase_breach(bd_store *s, const char *uuid, int64_t *records_removed)
{
    pg_store *p = pg_of(s);
    *records_removed = 0;
    bd_result r = pg_begin(s);
    if (r != BD_OK)
        return r;
    int64_t n = 0, breaches = 0;
    r = take_domains(p, &ERASE_BREACH_DOMAINS, uuid, NULL);
    if (r == BD_OK)
        r = run_with_text(p, &ERASE_BREACH_ROUTES, uuid, NULL, NULL);
    if (r == BD_OK)
        r = run_with_text(p, &ERASE_BREACH_EMAIL_HASHES, uuid, NULL, NULL);
    if (r == BD_OK)
        r = run_with_text(p, &ERASE_BREACH_RECORDS, uuid, NULL, &n);
    if (r == BD_OK)
        r = pg_change_breach(p, BD_CHANGE_BREACH_REMOVED, uuid, n);
    if (r == BD_OK)
        r = run_with_text(p, &ERASE_BREACH, uuid, NULL, &breaches);
    if (r == BD_OK && breaches == 0)
        r = BD_ERR_NOT_FOUND;
    if (r == BD_OK)
        r = pg_run(p, &ERASE_EMPTY_DOMAINS, NULL, NULL);
    if (r == BD_OK)
        r = pg_alerts_erase_breach(p, uuid);
    if (r == BD_OK)
        r = pg_commit(s);
    else
        pg_rollback(s);
    pg_breach_cache_forget(p); /* it may name the erased breach */
    if (r == BD_OK)
        *records_removed = n;
    return r;
}

/* PostgreSQL's write-ahead log is the server's to recycle; there is nothing to empty here. */
bd_result pg_truncate_log(bd_store *s, int64_t wait_ms)
{
    (void)s;
    (void)wait_ms;
    return BD_OK;
}

/* A consistent copy of a database server's store is pg_dump's job (docs/OPERATIONS.md says
 * so): this backend writes no file. */
bd_result pg_backup(bd_store *s, const char *dest, int dest_fd)
{
    (void)s;
    (void)dest;
    (void)dest_fd;
    return BD_ERR_INVALID;
}
