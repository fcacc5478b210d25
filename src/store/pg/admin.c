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

static const pg_stmt STATS = {PG_Q_STATS,
                              "SELECT b.uuid, b.source_name, "
                              "(SELECT count(*) FROM records r WHERE r.breach_id = b.id), "
                              "coalesce(b.pwned_count, b.pwned_count_derived) FROM breaches b "
                              "ORDER BY b.date_leaked DESC, b.source_name, b.uuid"};
static const pg_stmt COUNT_RECORDS = {PG_Q_COUNT_RECORDS, "SELECT count(*) FROM records"};
static const pg_stmt COUNT_CARDS = {PG_Q_COUNT_CARDS, "SELECT count(*) FROM cards"};
/* Each breach that has records with the email, with how many, before they go. */
static const pg_stmt ERASE_EMAIL_BREACHES = {
    PG_Q_ERASE_EMAIL_BREACHES,
    "SELECT b.uuid, b.source_name, count(*) FROM records r JOIN breaches b "
    "ON b.id = r.breach_id WHERE r.ok = $2 AND r.email = $1 "
    "GROUP BY b.id ORDER BY b.date_leaked DESC, b.source_name"};
/* Run before the records go: takes their number off each of their domains. */
static const pg_stmt ERASE_EMAIL_DOMAINS = {
    PG_Q_ERASE_EMAIL_DOMAINS, "UPDATE domain_counts SET n = domain_counts.n - gone.n FROM ("
                              "  SELECT email_domain AS domain, count(*) AS n FROM records"
                              "  WHERE ok = $2 AND email = $1 AND email_domain IS NOT NULL"
                              "  GROUP BY 1) AS gone "
                              "WHERE domain_counts.domain = gone.domain"};
/* Run before the records go: their domains' lookup rows (record_domains). */
static const pg_stmt ERASE_EMAIL_ROUTES = {
    PG_Q_ERASE_EMAIL_ROUTES,
    "DELETE FROM record_domains d USING records r WHERE r.ok = $2 AND r.email = $1 "
    "AND r.email_domain IS NOT NULL AND d.domain = r.email_domain "
    "AND d.breach_date = r.breach_date AND d.id = r.id"};
static const pg_stmt ERASE_EMAIL = {PG_Q_ERASE_EMAIL,
                                    "DELETE FROM records WHERE ok = $2 AND email = $1"};
static const pg_stmt ERASE_BREACH_DOMAINS = {
    PG_Q_ERASE_BREACH_DOMAINS, "UPDATE domain_counts SET n = domain_counts.n - gone.n FROM ("
                               "  SELECT email_domain AS domain, count(*) AS n FROM records"
                               "  WHERE breach_id = (SELECT id FROM breaches WHERE uuid = $1)"
                               "  AND email_domain IS NOT NULL GROUP BY 1) AS gone "
                               "WHERE domain_counts.domain = gone.domain"};
static const pg_stmt ERASE_BREACH_ROUTES = {
    PG_Q_ERASE_BREACH_ROUTES,
    "DELETE FROM record_domains d USING records r "
    "WHERE r.breach_id = (SELECT id FROM breaches WHERE uuid = $1) "
    "AND r.email_domain IS NOT NULL AND d.domain = r.email_domain "
    "AND d.breach_date = r.breach_date AND d.id = r.id"};
/* the SHA-1s of the breach's emails that no other breach holds (email_hashes keeps the address
 * beside its hash, for the range's breach names): before the records go */
static const pg_stmt ERASE_BREACH_EMAIL_HASHES = {
    PG_Q_ERASE_BREACH_EMAIL_HASHES,
    "DELETE FROM email_hashes WHERE email IN (SELECT r.email FROM records r"
    "  WHERE r.breach_id = (SELECT id FROM breaches WHERE uuid = $1) AND r.email IS NOT NULL"
    "  AND NOT EXISTS (SELECT 1 FROM records o WHERE o.email = r.email"
    "    AND o.breach_id <> r.breach_id))"};
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
        r = run_with_text(p, &ERASE_EMAIL_DOMAINS, email, ok, NULL);
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
    r = run_with_text(p, &ERASE_BREACH_DOMAINS, uuid, NULL, NULL);
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
