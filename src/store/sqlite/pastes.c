/* The SQLite store's pastes and email hashes (store/pastes.h): tables pastes, paste_emails and
 * email_hashes (schema.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/pastes.h"
#include "store/sqlite/sqlite_impl.h"
#include "store/sqlite/statements.h"

static const char PASTE_PUT[] =
    "INSERT INTO pastes(source, paste_id, title, date, email_count) VALUES(?1, ?2, ?3, ?4, ?5)"
    " ON CONFLICT(source, paste_id) DO NOTHING";
static const char PASTE_ID[] = "SELECT id FROM pastes WHERE source = ?1 AND paste_id = ?2";
static const char PASTE_EMAIL_PUT[] =
    "INSERT INTO paste_emails(email, paste) VALUES(?1, ?2) ON CONFLICT DO NOTHING";
static const char PASTES_OF_EMAIL[] =
    "SELECT p.source, p.paste_id, p.title, p.date, p.email_count FROM paste_emails e"
    " JOIN pastes p ON p.id = e.paste WHERE e.email = ?1"
    " ORDER BY p.date IS NULL, p.date DESC, p.source, p.paste_id";

bd_result sq_paste_put(bd_store *base, const bd_paste_row *p, const bd_slice *emails, size_t n,
                       bool *inserted)
{
    sqlite_store *s = S(base);
    *inserted = false;
    sqlite3_stmt *st = sq_dynamic(s, PASTE_PUT);
    if (!st)
        return BD_ERR_STORE;
    sq_bind_slice(st, 1, p->source);
    sq_bind_slice(st, 2, p->id);
    sq_bind_slice(st, 3, p->title);
    sq_bind_known(st, 4, p->date);
    sqlite3_bind_int64(st, 5, p->email_count);
    int rc = sqlite3_step(st);
    sq_done(st);
    if (rc != SQLITE_DONE)
        return sq_map_rc(rc);
    *inserted = sqlite3_changes(s->db) > 0;
    st = sq_dynamic(s, PASTE_ID);
    if (!st)
        return BD_ERR_STORE;
    sq_bind_slice(st, 1, p->source);
    sq_bind_slice(st, 2, p->id);
    rc = sqlite3_step(st);
    int64_t id = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sq_done(st);
    if (rc != SQLITE_ROW)
        return rc == SQLITE_DONE ? BD_ERR_STORE : sq_map_rc(rc);
    for (size_t i = 0; i < n; i++) {
        st = sq_dynamic(s, PASTE_EMAIL_PUT);
        if (!st)
            return BD_ERR_STORE;
        sq_bind_slice(st, 1, emails[i]);
        sqlite3_bind_int64(st, 2, id);
        rc = sqlite3_step(st);
        sq_done(st);
        if (rc != SQLITE_DONE)
            return sq_map_rc(rc);
    }
    return BD_OK;
}

bd_result sq_pastes_of_email(bd_store *base, bd_slice email, bd_paste_cb cb, void *ctx)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st = sq_dynamic(s, PASTES_OF_EMAIL);
    if (!st)
        return BD_ERR_STORE;
    sq_bind_slice(st, 1, email.ptr ? email : (bd_slice){"", 0});
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        bd_paste_row row = {
            .source = sq_col_slice(st, 0),
            .id = sq_col_slice(st, 1),
            .title = sq_col_slice(st, 2),
            .date = sqlite3_column_type(st, 3) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 3),
            .email_count = sqlite3_column_int64(st, 4),
        };
        if (cb(ctx, &row)) {
            rc = SQLITE_DONE;
            break;
        }
    }
    bd_result r = rc == SQLITE_DONE ? BD_OK : sq_map_rc(rc);
    sq_done(st);
    return r;
}

/* ---- the SHA-1 of records' emails (GET /breachedaccount/range) ---------------------- */

static const char LAST_RECORD[] = "SELECT coalesce(max(id), 0) FROM records";
/* One statement hashes every email past the last one hashed and puts them in key order:
 * read in the records' order, each hash went to a random place in the key (1M records:
 * 1.13 s of a 5.8 s --bulk import); sorted, each lands next to the one before. */
static const char HASH_PUT[] =
    "INSERT OR IGNORE INTO email_hashes(sha1, email) SELECT breachd_email_sha1(email), email "
    "FROM (SELECT DISTINCT email FROM records WHERE id > ?1 AND id <= ?2 AND email IS NOT NULL) "
    "ORDER BY 1";
static const char HASH_RANGE[] =
    "SELECT sha1, email FROM email_hashes WHERE sha1 >= ?1 AND sha1 < ?2 ORDER BY sha1";
static const char HASH_FORGET[] = "DELETE FROM email_hashes WHERE sha1 = ?1 AND email = ?2";

/* breachd_email_sha1(email): the hex SHA-1 the HIBP range gives for a normalised email. */
static void email_sha1(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    const char *v = (const char *)sqlite3_value_text(argv[0]);
    if (!v) {
        sqlite3_result_null(ctx);
        return;
    }
    char hex[41];
    bd_email_sha1_hex((bd_slice){v, (size_t)sqlite3_value_bytes(argv[0])}, hex);
    sqlite3_result_text(ctx, hex, 40, SQLITE_TRANSIENT);
}

bd_result sq_email_hashes_sync(bd_store *base, int64_t *added)
{
    sqlite_store *s = S(base);
    *added = 0;
    char v[32];
    int64_t upto = 0;
    bd_result r = sq_meta_get(base, "email_hashes_upto", v, sizeof v);
    if (r == BD_OK)
        upto = strtoll(v, NULL, 10);
    else if (r != BD_ERR_NOT_FOUND)
        return r;
    sqlite3_stmt *last = sq_dynamic(s, LAST_RECORD);
    if (!last)
        return BD_ERR_STORE;
    int rc = sqlite3_step(last);
    int64_t end = rc == SQLITE_ROW ? sqlite3_column_int64(last, 0) : 0;
    sq_done(last);
    if (rc != SQLITE_ROW)
        return sq_map_rc(rc);
    if (upto < end) {
        /* direct only: no view, trigger or index of the store may call it */
        if (!s->email_sha1_fn &&
            sqlite3_create_function_v2(s->db, "breachd_email_sha1", 1,
                                       SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_DIRECTONLY,
                                       NULL, email_sha1, NULL, NULL, NULL) != SQLITE_OK)
            return BD_ERR_STORE;
        s->email_sha1_fn = true;
        sqlite3_stmt *put = sq_dynamic(s, HASH_PUT);
        if (!put)
            return BD_ERR_STORE;
        sqlite3_bind_int64(put, 1, upto);
        sqlite3_bind_int64(put, 2, end);
        int64_t was = sq_sort_memory_begin(s);
        rc = sqlite3_step(put);
        sq_done(put);
        bd_result back = sq_sort_memory_end(s, was);
        if (rc == SQLITE_DONE && back != BD_OK)
            return back;
        if (rc != SQLITE_DONE)
            return sq_map_rc(rc);
        *added = sqlite3_changes(s->db);
        upto = end;
    }
    snprintf(v, sizeof v, "%lld", (long long)upto);
    return sq_meta_set(base, "email_hashes_upto", v);
}

bd_result sq_email_hashes_range(bd_store *base, const char prefix[7], bd_email_hash_cb cb,
                                void *ctx)
{
    sqlite_store *s = S(base);
    char below[8];
    memcpy(below, prefix, 6);
    below[6] = 'G'; /* above every hex digit: the end of the prefix's hashes */
    below[7] = '\0';
    sqlite3_stmt *st = sq_dynamic(s, HASH_RANGE);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_text(st, 1, prefix, 6, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, below, 7, SQLITE_STATIC);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        if (cb(ctx, sq_col_slice(st, 0), sq_col_slice(st, 1))) {
            rc = SQLITE_DONE;
            break;
        }
    bd_result r = rc == SQLITE_DONE ? BD_OK : sq_map_rc(rc);
    sq_done(st);
    return r;
}

bd_result sq_email_hash_forget(bd_store *base, bd_slice email)
{
    sqlite_store *s = S(base);
    char hex[41];
    bd_email_sha1_hex(email, hex);
    sqlite3_stmt *st = sq_dynamic(s, HASH_FORGET);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_text(st, 1, hex, 40, SQLITE_STATIC);
    sq_bind_slice(st, 2, email);
    int rc = sqlite3_step(st);
    sq_done(st);
    return rc == SQLITE_DONE ? BD_OK : sq_map_rc(rc);
}

/* ---- stealer logs: records' website hosts (HIBP's stealerlogsby*) ------------------- */

static const char *const STEALER_COUNT[] = {
    NULL,
    "SELECT count(*) FROM (SELECT 1 FROM records WHERE website_domain = ?1"
    " AND email IS NOT NULL LIMIT ?2)",
    "SELECT count(*) FROM (SELECT 1 FROM records WHERE email_domain = ?1"
    " AND email IS NOT NULL LIMIT ?2)",
};
static const char *const STEALER_READ[] = {
    "SELECT DISTINCT website_domain, NULL FROM records WHERE email = ?1"
    " AND website_domain IS NOT NULL ORDER BY 1",
    "SELECT DISTINCT email, NULL FROM records WHERE website_domain = ?1"
    " AND email IS NOT NULL ORDER BY 1",
    "SELECT DISTINCT email, website_domain FROM records WHERE email_domain = ?1"
    " AND email IS NOT NULL AND website_domain IS NOT NULL ORDER BY 1, 2",
};

bd_result sq_stealer_logs(bd_store *base, bd_stealer_by by, bd_slice key, int64_t max,
                          bd_stealer_cb cb, void *ctx)
{
    sqlite_store *s = S(base);
    key = key.ptr ? key : (bd_slice){"", 0};
    int rc;
    if (STEALER_COUNT[by]) {
        sqlite3_stmt *c = sq_dynamic(s, STEALER_COUNT[by]);
        if (!c)
            return BD_ERR_STORE;
        sq_bind_slice(c, 1, key);
        sqlite3_bind_int64(c, 2, max + 1);
        rc = sqlite3_step(c);
        int64_t n = rc == SQLITE_ROW ? sqlite3_column_int64(c, 0) : 0;
        sq_done(c);
        if (rc != SQLITE_ROW)
            return sq_map_rc(rc);
        if (n > max)
            return BD_ERR_LIMIT;
    }
    sqlite3_stmt *st = sq_dynamic(s, STEALER_READ[by]);
    if (!st)
        return BD_ERR_STORE;
    sq_bind_slice(st, 1, key);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        if (cb(ctx, sq_col_slice(st, 0), sq_col_slice(st, 1))) {
            rc = SQLITE_DONE;
            break;
        }
    bd_result r = rc == SQLITE_DONE ? BD_OK : sq_map_rc(rc);
    sq_done(st);
    return r;
}
