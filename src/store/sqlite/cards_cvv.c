/* The SQLite backend's CVVs kept in clear by stores made before they were keyed: the note
 * the schema step leaves, and the upgrade the first program holding the secret runs (split
 * from cards.c, one concern per file). */
#include <string.h>

#include "store/sqlite/sqlite_impl.h"
#include "store/sqlite/statements.h"

static const char CVV_NOTE[] = "pending_cvv_hashes";
/* A CVV in clear: digits (a mask is stars) without a keyed hash yet. */
#define PLAIN_CVV "cvv_hmac IS NULL AND cvv IS NOT NULL AND cvv NOT GLOB '*[^0-9]*'"
static const char CVV_DONE[] =
    "DROP INDEX IF EXISTS cards_by_cvv; DELETE FROM meta WHERE key = 'pending_cvv_hashes'";

bd_result sq_cvv_note(sqlite_store *s)
{
    char v[8];
    bd_result r = sq_meta_get(&s->base, CVV_NOTE, v, sizeof v);
    if (r != BD_OK)
        return r == BD_ERR_NOT_FOUND ? BD_OK : r;
    sqlite3_stmt *st =
        sq_dynamic(s, "SELECT count(*) FROM (SELECT 1 FROM cards WHERE " PLAIN_CVV " LIMIT 1)");
    int64_t plain = 1;
    r = st ? sq_step_count(st, &plain) : BD_ERR_STORE;
    return r != BD_OK || plain > 0 ? r : sq_exec(s, CVV_DONE);
}

/* Replaces each distinct plain CVV (at most 11,000: 3 or 4 digits) by its mask and keyed
 * hash, through cards_by_cvv, in the open transaction. The values are read first: the
 * updates move the entries of the index being read. */
static bd_result protect_cvvs(sqlite_store *s, bd_cvv_protect_fn protect, void *ctx,
                              int64_t *changed)
{
    sqlite3_stmt *st = sq_dynamic(s, "SELECT DISTINCT cvv FROM cards WHERE " PLAIN_CVV);
    if (!st)
        return BD_ERR_STORE;
    bd_buf plain;
    bd_buf_init(&plain, 1 << 20);
    bd_result r = BD_OK;
    int rc = SQLITE_DONE;
    while (r == BD_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        bd_slice v = sq_col_slice(st, 0);
        r = bd_buf_append(&plain, v.ptr, v.len);
        if (r == BD_OK)
            r = bd_buf_append_char(&plain, '\0');
    }
    if (r == BD_OK && rc != SQLITE_DONE)
        r = sq_map_rc(rc);
    sq_done(st);
    sqlite3_stmt *up = r == BD_OK ? sq_dynamic(s, "UPDATE cards SET cvv = ?2, cvv_hmac = ?3 "
                                                  "WHERE cvv = ?1 AND cvv_hmac IS NULL")
                                  : NULL;
    if (r == BD_OK && !up)
        r = BD_ERR_STORE;
    for (size_t at = 0; r == BD_OK && at < plain.len; at += strlen(plain.data + at) + 1) {
        bd_slice v = bd_slice_from(plain.data + at);
        char masked[5];
        uint8_t hmac[BD_HMAC_LEN];
        protect(ctx, v, masked, hmac);
        sqlite3_bind_text(up, 1, v.ptr, (int)v.len, SQLITE_STATIC);
        sqlite3_bind_text(up, 2, masked, -1, SQLITE_STATIC);
        sqlite3_bind_blob(up, 3, hmac, BD_HMAC_LEN, SQLITE_STATIC);
        r = sq_step_done(s, up);
        if (r == BD_OK)
            *changed += sqlite3_changes(s->db);
    }
    if (plain.data)
        explicit_bzero(plain.data, plain.len);
    bd_buf_free(&plain);
    return r;
}

bd_result sq_cvv_upgrade(bd_store *base, bd_cvv_protect_fn protect, void *ctx, int64_t *changed)
{
    sqlite_store *s = S(base);
    char v[8];
    bd_result r = sq_meta_get(base, CVV_NOTE, v, sizeof v);
    if (r != BD_OK)
        return r == BD_ERR_NOT_FOUND ? BD_OK : r;
    /* The plain values are overwritten where they were, in the table and in the pages of the
     * index dropped, as an erasure does (admin.c); the connection's setting is kept. */
    sqlite3_stmt *st = sq_dynamic(s, "PRAGMA secure_delete");
    int64_t secure = 0;
    r = st ? sq_step_count(st, &secure) : BD_ERR_STORE;
    if (r == BD_OK)
        r = sq_exec(s, "PRAGMA secure_delete=ON");
    if (r == BD_OK)
        r = sq_begin(base);
    if (r == BD_OK)
        r = protect_cvvs(s, protect, ctx, changed);
    if (r == BD_OK)
        r = sq_exec(s, CVV_DONE);
    if (r == BD_OK)
        r = sq_commit(base);
    if (r != BD_OK) {
        sq_rollback(base);
        *changed = 0;
    }
    if (!secure)
        sq_exec(s, "PRAGMA secure_delete=OFF");
    return r;
}
