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

#define HASH_BATCH 4096

static const char EMAILS_AFTER[] =
    "SELECT id, email FROM records WHERE id > $1::bigint AND email IS NOT NULL ORDER BY id"
    " LIMIT 4096";
static const char LAST_RECORD[] = "SELECT coalesce(max(id), 0) FROM records";
/* A batch's hashes and emails as two array literals: one round trip per batch read, where
 * one per email made a records import on PostgreSQL spend as long again after its rows
 * were in (1M records: 5 -> 23 s of breachctl's CPU, 25,000 -> 12,000 records/s). */
static const char HASH_PUT[] =
    "INSERT INTO email_hashes(sha1, email) SELECT * FROM unnest($1::text[], $2::text[])"
    " ON CONFLICT DO NOTHING";
static const char HASH_RANGE[] =
    "SELECT sha1, email FROM email_hashes WHERE sha1 >= $1 AND sha1 < $2 ORDER BY sha1";
static const char HASH_FORGET[] = "DELETE FROM email_hashes WHERE sha1 = $1 AND email = $2";

bd_result pg_email_hashes_sync(bd_store *s, int64_t *added)
{
    pg_store *ps = pg_of(s);
    *added = 0;
    char v[32];
    int64_t upto = 0;
    bd_result r = bd_store_meta_get(s, "email_hashes_upto", v, sizeof v);
    if (r == BD_OK)
        upto = strtoll(v, NULL, 10);
    else if (r != BD_ERR_NOT_FOUND)
        return r;
    PGresult *res;
    r = pg_run_sql(ps, LAST_RECORD, &(pg_params){0}, true, &res);
    if (r != BD_OK)
        return r;
    int64_t end = PQntuples(res) > 0 ? pg_int(res, 0, 0) : 0;
    PQclear(res);
    bd_buf hashes, emails;
    bd_buf_init(&hashes, 1u << 20);
    bd_buf_init(&emails, 64u << 20);
    while (r == BD_OK && upto < end) {
        pg_params pp = {0};
        pg_param_int(&pp, upto);
        r = pg_run_sql(ps, EMAILS_AFTER, &pp, true, &res);
        if (r != BD_OK)
            break;
        int rows = PQntuples(res);
        bd_buf_reset(&hashes);
        bd_buf_reset(&emails);
        r = bd_buf_append_char(&hashes, '{');
        r = r == BD_OK ? bd_buf_append_char(&emails, '{') : r;
        for (int i = 0; r == BD_OK && i < rows; i++) {
            upto = pg_int(res, i, 0);
            bd_slice email = pg_slice(res, i, 1);
            char hex[41];
            bd_email_sha1_hex(email, hex);
            if (i)
                r = bd_buf_append_char(&hashes, ',');
            r = r == BD_OK ? bd_buf_append(&hashes, hex, 40) : r;
            if (r == BD_OK && i)
                r = bd_buf_append_char(&emails, ',');
            r = r == BD_OK ? pg_array_text(&emails, email) : r;
        }
        PQclear(res);
        r = r == BD_OK ? bd_buf_append_char(&hashes, '}') : r;
        r = r == BD_OK ? bd_buf_append_char(&emails, '}') : r;
        if (r == BD_OK && rows > 0) {
            pg_params hp = {0};
            pg_param_str(&hp, hashes.data);
            pg_param_str(&hp, emails.data);
            PGresult *ins;
            r = pg_run_sql(ps, HASH_PUT, &hp, true, &ins);
            if (r == BD_OK) {
                *added += pg_changes(ins);
                PQclear(ins);
            }
        }
        if (r != BD_OK)
            break;
        if (rows < HASH_BATCH)
            upto = end; /* the records without an email past the last one read */
    }
    bd_buf_free(&hashes);
    bd_buf_free(&emails);
    if (r != BD_OK)
        return r;
    snprintf(v, sizeof v, "%lld", (long long)upto);
    return bd_store_meta_set(s, "email_hashes_upto", v);
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
