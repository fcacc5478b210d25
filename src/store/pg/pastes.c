/* The PostgreSQL store's pastes and email hashes (store/pastes.h): tables pastes, paste_emails
 * and email_hashes (schema.c), local to the coordinator of a Citus cluster (docs/SCALING.md). */
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/pg/pg_impl.h"
#include "store/pg/pg_pastes.h"

static const char PASTE_PUT[] =
    "WITH i AS (INSERT INTO pastes(source, paste_id, title, date, email_count)"
    " VALUES($1, $2, $3, $4::bigint, $5::bigint) ON CONFLICT (source, paste_id) DO NOTHING"
    " RETURNING id) SELECT id, true FROM i UNION ALL"
    " SELECT id, false FROM pastes WHERE source = $1 AND paste_id = $2 LIMIT 1";
static const char PASTE_EMAIL_PUT[] =
    "INSERT INTO paste_emails(email, paste) VALUES($1, $2::bigint) ON CONFLICT DO NOTHING";
static const char PASTES_OF_EMAIL[] =
    "SELECT p.source, p.paste_id, p.title, p.date, p.email_count FROM paste_emails e"
    " JOIN pastes p ON p.id = e.paste WHERE e.email = $1"
    " ORDER BY p.date IS NULL, p.date DESC, p.source COLLATE \"C\", p.paste_id COLLATE \"C\"";

bd_result pg_paste_put(bd_store *s, const bd_paste_row *p, const bd_slice *emails, size_t n,
                       bool *inserted)
{
    pg_store *ps = pg_of(s);
    *inserted = false;
    pg_params pp = {0};
    pg_param_text(&pp, p->source);
    pg_param_text(&pp, p->id);
    pg_param_text(&pp, p->title);
    if (p->date >= 0)
        pg_param_int(&pp, p->date);
    else
        pg_param_text(&pp, (bd_slice){NULL, 0});
    pg_param_int(&pp, p->email_count);
    PGresult *res;
    bd_result r = pg_run_sql(ps, PASTE_PUT, &pp, true, &res);
    if (r != BD_OK)
        return r;
    if (PQntuples(res) < 1) {
        PQclear(res);
        return BD_ERR_STORE;
    }
    int64_t id = pg_int(res, 0, 0);
    bd_slice fresh = pg_slice(res, 0, 1);
    *inserted = fresh.len > 0 && fresh.ptr[0] == 't';
    PQclear(res);
    for (size_t i = 0; i < n; i++) {
        pg_params ep = {0};
        pg_param_text(&ep, emails[i]);
        pg_param_int(&ep, id);
        r = pg_run_sql(ps, PASTE_EMAIL_PUT, &ep, true, NULL);
        if (r != BD_OK)
            return r;
    }
    return BD_OK;
}

bd_result pg_pastes_of_email(bd_store *s, bd_slice email, bd_paste_cb cb, void *ctx)
{
    pg_params pp = {0};
    pg_param_text(&pp, email.ptr ? email : (bd_slice){"", 0});
    PGresult *res;
    bd_result r = pg_run_sql(pg_of(s), PASTES_OF_EMAIL, &pp, true, &res);
    if (r != BD_OK)
        return r;
    int rows = PQntuples(res);
    for (int i = 0; i < rows; i++) {
        bd_paste_row row = {
            .source = pg_slice(res, i, 0),
            .id = pg_slice(res, i, 1),
            .title = pg_slice(res, i, 2),
            .date = PQgetisnull(res, i, 3) ? -1 : pg_int(res, i, 3),
            .email_count = pg_int(res, i, 4),
        };
        if (cb(ctx, &row))
            break;
    }
    PQclear(res);
    return BD_OK;
}

/* ---- the SHA-1 of records' emails (GET /breachedaccount/range) ---------------------- */

/* The hashes staged before they are sent: a COPY each 4 MiB (about 55,000 emails). */
#define HASH_STAGE_BYTES (4u << 20)
/* From this many new records into an empty table, its key is built by sorting once (the
 * table is then locked for a moment, which only a first load of a store can see). */
#define HASH_REBUILD_MIN 10000

/* The distinct emails of the records past the last one hashed, read through a cursor so
 * that a large import's never sit in memory at once. */
static const char EMAILS_DECLARE[] =
    "DECLARE bd_hash_emails NO SCROLL CURSOR FOR SELECT DISTINCT email FROM records "
    "WHERE id > $1::bigint AND id <= $2::bigint AND email IS NOT NULL";
static const char EMAILS_FETCH[] = "FETCH 20000 FROM bd_hash_emails";
static const char EMAILS_CLOSE[] = "CLOSE bd_hash_emails";
static const char LAST_RECORD[] = "SELECT coalesce(max(id), 0) FROM records";
/* The new hashes are staged with COPY and then go in as one statement, in key order: a
 * records import on PostgreSQL put them in by batches of 4,096 in the records' order,
 * and each went to a random place in the key; 1M records' hashes took 2.9 s of the
 * server's time that way, 4 s of the import's wall time. A first load into an empty table
 * COPYs them into it without its key and builds the key once at the end instead: the
 * emails are distinct, so their hashes are (but for a SHA-1 collision, when the key cannot
 * be built and they go in as into a table holding some). For 1M records' 455,000 emails that
 * saves the staging table's sorted INSERT (0.4-0.6 s) and costs the key's build (0.14 s) as
 * before. */
static const char HASH_STAGE[] =
    "CREATE TEMP TABLE IF NOT EXISTS bd_hash_staging(sha1 text COLLATE \"C\", "
    "email text COLLATE \"C\") ON COMMIT DELETE ROWS; TRUNCATE pg_temp.bd_hash_staging";
static const char HASH_COPY[] = "COPY pg_temp.bd_hash_staging FROM STDIN (FORMAT binary)";
static const char HASH_COPY_DIRECT[] = "COPY email_hashes(sha1, email) FROM STDIN (FORMAT binary)";
/* another writer's hashes cannot land between the look and the rebuild */
static const char HASH_LOCK[] = "LOCK TABLE email_hashes IN EXCLUSIVE MODE";
static const char HASH_ANY[] = "SELECT EXISTS (SELECT 1 FROM email_hashes)";
static const char HASH_KEY_DROP[] = "ALTER TABLE email_hashes DROP CONSTRAINT email_hashes_pkey";
static const char HASH_KEY_ADD[] = "ALTER TABLE email_hashes ADD PRIMARY KEY (sha1)";
static const char HASH_MERGE[] =
    "INSERT INTO email_hashes(sha1, email) SELECT DISTINCT ON (sha1) sha1, email "
    "FROM pg_temp.bd_hash_staging ORDER BY sha1 ON CONFLICT DO NOTHING";
static const char HASH_RANGE[] =
    "SELECT sha1, email FROM email_hashes WHERE sha1 >= $1 AND sha1 < $2 ORDER BY sha1";
static const char HASH_FORGET[] = "DELETE FROM email_hashes WHERE sha1 = $1 AND email = $2";

/* Sends the staged rows in rows (then emptied), if any, with copy. */
static bd_result stage(pg_store *p, const char *copy, bd_buf *rows)
{
    bd_result r = rows->len ? pg_copy_in(p, copy, rows) : BD_OK;
    bd_buf_reset(rows);
    return r;
}

/* COPYs the hash of every distinct email of the records in (upto, end] with copy (into the
 * staging table or email_hashes); staged: how many. */
static bd_result stage_hashes(pg_store *p, const char *copy, int64_t upto, int64_t end,
                              int64_t *staged)
{
    bd_buf rows;
    bd_buf_init(&rows, 2 * HASH_STAGE_BYTES); /* sent once past the mark: one row over */
    pg_params pp = {0};
    pg_param_int(&pp, upto);
    pg_param_int(&pp, end);
    bd_result r = copy == HASH_COPY ? pg_exec(p, HASH_STAGE) : BD_OK;
    if (r == BD_OK)
        r = pg_run_sql(p, EMAILS_DECLARE, &pp, false, NULL);
    for (int n = -1; r == BD_OK && n != 0;) {
        PGresult *res;
        r = pg_run_sql(p, EMAILS_FETCH, &(pg_params){0}, false, &res);
        if (r != BD_OK)
            break;
        n = PQntuples(res);
        for (int i = 0; r == BD_OK && i < n; i++) {
            bd_slice email = pg_slice(res, i, 0);
            char hex[41];
            bd_email_sha1_hex(email, hex);
            r = pg_copy_put_u16(&rows, 2);
            r = r == BD_OK ? pg_copy_put_bytes(&rows, (bd_slice){hex, 40}) : r;
            r = r == BD_OK ? pg_copy_put_bytes(&rows, email) : r;
            if (r == BD_OK && rows.len >= HASH_STAGE_BYTES)
                r = stage(p, copy, &rows);
        }
        PQclear(res);
        *staged += n;
    }
    if (r == BD_OK)
        r = pg_exec(p, EMAILS_CLOSE);
    if (r == BD_OK)
        r = stage(p, copy, &rows);
    bd_buf_free(&rows);
    return r;
}

/* Into an empty email_hashes, from many new records: the hashes of the emails of the
 * records in (upto, end] COPYed into it without its key, which is then built (see
 * HASH_STAGE); *done tells whether they went in so, added: how many. */
static bd_result fill_empty(pg_store *p, int64_t upto, int64_t end, bool *done, int64_t *added)
{
    *done = false;
    if (end - upto < HASH_REBUILD_MIN)
        return BD_OK;
    PGresult *res;
    bd_result r = pg_exec(p, HASH_LOCK);
    if (r == BD_OK)
        r = pg_run_sql(p, HASH_ANY, &(pg_params){0}, true, &res);
    if (r != BD_OK)
        return r;
    bool empty = PQgetvalue(res, 0, 0)[0] == 'f';
    PQclear(res);
    if (!empty)
        return BD_OK;
    r = pg_exec(p, "SAVEPOINT bd_hash_fill");
    if (r == BD_OK)
        r = pg_exec(p, HASH_KEY_DROP);
    int64_t copied = 0;
    if (r == BD_OK)
        r = stage_hashes(p, HASH_COPY_DIRECT, upto, end, &copied);
    if (r == BD_OK)
        r = pg_exec(p, HASH_KEY_ADD);
    if (r == BD_ERR_EXISTS) /* two emails of one SHA-1: as into a table holding some */
        return pg_exec(p, "ROLLBACK TO SAVEPOINT bd_hash_fill");
    if (r == BD_OK)
        r = pg_exec(p, "RELEASE SAVEPOINT bd_hash_fill");
    *done = r == BD_OK;
    *added = copied;
    return r;
}

/* Moves the hashes of the emails of the records in (upto, end] into email_hashes through the
 * staging table, each new one once; added: how many were new. */
static bd_result merge_staged(pg_store *p, int64_t upto, int64_t end, int64_t *added)
{
    int64_t staged = 0;
    bd_result r = stage_hashes(p, HASH_COPY, upto, end, &staged);
    if (r != BD_OK || staged == 0)
        return r;
    PGresult *res;
    r = pg_run_sql(p, HASH_MERGE, &(pg_params){0}, false, &res);
    if (r == BD_OK) {
        *added = pg_changes(res);
        PQclear(res);
    }
    return r;
}

/* Hashes the emails of the records past the last one hashed, in the caller's transaction or
 * one of its own (the staging table empties at every commit). */
bd_result pg_email_hashes_sync(bd_store *s, int64_t *added)
{
    pg_store *ps = pg_of(s);
    *added = 0;
    bool own;
    bd_result r = pg_write_begin(ps, &own);
    if (r != BD_OK)
        return r;
    char v[32];
    int64_t upto = 0;
    r = bd_store_meta_get(s, "email_hashes_upto", v, sizeof v);
    if (r == BD_OK)
        upto = strtoll(v, NULL, 10);
    else if (r == BD_ERR_NOT_FOUND)
        r = BD_OK;
    PGresult *res = NULL;
    if (r == BD_OK)
        r = pg_run_sql(ps, LAST_RECORD, &(pg_params){0}, true, &res);
    int64_t end = r == BD_OK && PQntuples(res) > 0 ? pg_int(res, 0, 0) : 0;
    PQclear(res);
    bool filled = false;
    if (r == BD_OK && upto < end)
        r = fill_empty(ps, upto, end, &filled, added);
    if (r == BD_OK && upto < end && !filled)
        r = merge_staged(ps, upto, end, added);
    upto = end > upto ? end : upto;
    snprintf(v, sizeof v, "%lld", (long long)upto);
    if (r == BD_OK)
        r = bd_store_meta_set(s, "email_hashes_upto", v);
    return pg_write_end(ps, own, r);
}

bd_result pg_email_hashes_range(bd_store *s, const char prefix[7], bd_email_hash_cb cb,
                                void *ctx)
{
    char below[7];
    memcpy(below, prefix, 6);
    below[6] = 'G'; /* above every hex digit: the end of the prefix's hashes (collation C) */
    pg_params pp = {0};
    pg_param_text(&pp, (bd_slice){prefix, 6});
    pg_param_text(&pp, (bd_slice){below, 7});
    PGresult *res;
    bd_result r = pg_run_sql(pg_of(s), HASH_RANGE, &pp, true, &res);
    if (r != BD_OK)
        return r;
    int rows = PQntuples(res);
    for (int i = 0; i < rows; i++)
        if (cb(ctx, pg_slice(res, i, 0), pg_slice(res, i, 1)))
            break;
    PQclear(res);
    return BD_OK;
}

bd_result pg_email_hash_forget(bd_store *s, bd_slice email)
{
    char hex[41];
    bd_email_sha1_hex(email, hex);
    pg_params pp = {0};
    pg_param_text(&pp, (bd_slice){hex, 40});
    pg_param_text(&pp, email);
    return pg_run_sql(pg_of(s), HASH_FORGET, &pp, true, NULL);
}

/* ---- stealer logs: records' website hosts (HIBP's stealerlogsby*) ------------------- */

static const char *const STEALER_COUNT[] = {
    NULL,
    "SELECT count(*) FROM (SELECT 1 FROM records WHERE website_domain = $1"
    " AND email IS NOT NULL LIMIT $2::bigint) c",
    "SELECT count(*) FROM (SELECT 1 FROM records WHERE email_domain = $1"
    " AND email IS NOT NULL LIMIT $2::bigint) c",
};
/* by email: the owner key $2 names the email's shard (docs/SCALING.md) */
static const char *const STEALER_READ[] = {
    "SELECT DISTINCT website_domain, NULL FROM records WHERE email = $1 AND ok = $2"
    " AND website_domain IS NOT NULL ORDER BY 1",
    "SELECT DISTINCT email, NULL FROM records WHERE website_domain = $1"
    " AND email IS NOT NULL ORDER BY 1",
    "SELECT DISTINCT email, website_domain FROM records WHERE email_domain = $1"
    " AND email IS NOT NULL AND website_domain IS NOT NULL ORDER BY 1, 2",
};

bd_result pg_stealer_logs(bd_store *s, bd_stealer_by by, bd_slice key, int64_t max,
                          bd_stealer_cb cb, void *ctx)
{
    pg_store *ps = pg_of(s);
    key = key.ptr ? key : (bd_slice){"", 0};
    PGresult *res;
    bd_result r;
    if (STEALER_COUNT[by]) {
        pg_params cp = {0};
        pg_param_text(&cp, key);
        pg_param_int(&cp, max + 1);
        r = pg_run_sql(ps, STEALER_COUNT[by], &cp, true, &res);
        if (r != BD_OK)
            return r;
        int64_t n = PQntuples(res) > 0 ? pg_int(res, 0, 0) : 0;
        PQclear(res);
        if (n > max)
            return BD_ERR_LIMIT;
    }
    pg_params pp = {0};
    pg_param_text(&pp, key);
    uint8_t ok[PG_OWNER_KEY_LEN];
    if (by == BD_STEALER_BY_EMAIL) {
        pg_email_owner_key(key, ok);
        pg_param_text(&pp, (bd_slice){(const char *)ok, PG_OWNER_KEY_LEN});
    }
    r = pg_run_sql(ps, STEALER_READ[by], &pp, true, &res);
    if (r != BD_OK)
        return r;
    int rows = PQntuples(res);
    for (int i = 0; i < rows; i++)
        if (cb(ctx, pg_slice(res, i, 0), pg_slice(res, i, 1)))
            break;
    PQclear(res);
    return BD_OK;
}
