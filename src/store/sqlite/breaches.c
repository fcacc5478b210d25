/* The SQLite backend's breaches: insert, list and look up, and the derived identity count. */
#include "store/sqlite/sqlite_impl.h"

/* Fills a breach row from BREACH_COLS (statements.c) starting at column c. */
static void breach_from_cols(sqlite3_stmt *st, int c, bd_breach_row *b)
{
    b->uuid = sq_col_slice(st, c + 0);
    b->source_name = sq_col_slice(st, c + 1);
    b->site_domain = sq_col_slice(st, c + 2);
    b->breach_type = sq_col_slice(st, c + 3);
    b->site_categories = sq_col_slice(st, c + 4);
    b->site_country = sq_col_slice(st, c + 5);
    b->site_language = sq_col_slice(st, c + 6);
    b->password_types = sq_col_slice(st, c + 7);
    b->leaked_data_types = sq_col_slice(st, c + 8);
    b->description = sq_col_slice(st, c + 9);
    b->service_article_url = sq_col_slice(st, c + 10);
    b->site_logo = sq_col_slice(st, c + 11);
    b->date_leaked = sqlite3_column_int(st, c + 12);
    b->pwned_count = sqlite3_column_int64(st, c + 13);
}

bd_result sq_breach_put(bd_store *base, const bd_breach_in *b, bool *inserted)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st = sq_fixed(s, Q_BREACH_PUT);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_text(st, 1, b->uuid, -1, SQLITE_STATIC);
    sq_bind_slice(st, 2, b->source_name);
    sq_bind_slice(st, 3, b->site_domain);
    sq_bind_slice(st, 4, b->breach_type);
    sq_bind_slice(st, 5, b->site_categories);
    sq_bind_slice(st, 6, b->site_country);
    sq_bind_slice(st, 7, b->site_language);
    sq_bind_slice(st, 8, b->password_types);
    sq_bind_slice(st, 9, b->leaked_data_types);
    sq_bind_slice(st, 10, b->description);
    sq_bind_slice(st, 11, b->service_article_url);
    sq_bind_slice(st, 12, b->site_logo);
    sqlite3_bind_int(st, 13, b->date_leaked);
    sq_bind_known(st, 14, b->pwned_count);
    bd_result r = sq_step_done(s, st);
    *inserted = r == BD_OK && sqlite3_changes(s->db) > 0;
    return r;
}

static bd_result each_breach(sqlite3_stmt *st, bd_breach_cb cb, void *ctx, int *rows)
{
    int rc;
    *rows = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        bd_breach_row b;
        breach_from_cols(st, 0, &b);
        ++*rows;
        if (cb(ctx, &b))
            break;
    }
    bd_result r = rc == SQLITE_ROW ? BD_OK : sq_map_rc(rc);
    sq_done(st);
    return r;
}

bd_result sq_breach_list(bd_store *base, int limit, bd_breach_cb cb, void *ctx)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st = sq_fixed(s, limit > 0 ? Q_BREACH_LIST_LIMIT : Q_BREACH_LIST);
    if (!st)
        return BD_ERR_STORE;
    if (limit > 0)
        sqlite3_bind_int(st, 1, limit);
    int rows;
    return each_breach(st, cb, ctx, &rows);
}

bd_result sq_breach_get(bd_store *base, const char *uuid, bd_breach_cb cb, void *ctx)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st = sq_fixed(s, Q_BREACH_GET);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_text(st, 1, uuid, -1, SQLITE_STATIC);
    int rows;
    bd_result r = each_breach(st, cb, ctx, &rows);
    return r == BD_OK && rows == 0 ? BD_ERR_NOT_FOUND : r;
}

bd_result sq_breach_by_id(bd_store *base, int64_t id, bd_breach_cb cb, void *ctx)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st = sq_fixed(s, Q_BREACH_BY_ID);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_int64(st, 1, id);
    int rows;
    bd_result r = each_breach(st, cb, ctx, &rows);
    return r == BD_OK && rows == 0 ? BD_ERR_NOT_FOUND : r;
}

bd_result sq_breach_id(sqlite_store *s, const char *uuid, int64_t *id, int32_t *date)
{
    sqlite3_stmt *st = sq_fixed(s, Q_BREACH_ID);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_text(st, 1, uuid, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    bd_result r = rc == SQLITE_ROW ? BD_OK : rc == SQLITE_DONE ? BD_ERR_NOT_FOUND : sq_map_rc(rc);
    if (rc == SQLITE_ROW) {
        *id = sqlite3_column_int64(st, 0);
        *date = sqlite3_column_int(st, 1);
    }
    sq_done(st);
    return r;
}

bd_result sq_breach_exists(bd_store *base, const char *uuid, bool *exists)
{
    int64_t id;
    int32_t date;
    bd_result r = sq_breach_id(S(base), uuid, &id, &date);
    *exists = r == BD_OK;
    return r == BD_ERR_NOT_FOUND ? BD_OK : r;
}

bd_result sq_breach_refresh_count(bd_store *base, const char *uuid)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st = sq_fixed(s, Q_BREACH_REFRESH);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_text(st, 1, uuid, -1, SQLITE_STATIC);
    return sq_step_done(s, st);
}
