/* The SQLite store's meta table: named values (schema version, generations, notes). */
#include <string.h>

#include "store/sqlite/sqlite_impl.h"
#include "store/sqlite/statements.h"

bd_result sq_meta_get(bd_store *base, const char *key, char *out, size_t outcap)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st = sq_fixed(s, Q_META_GET);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    bd_result r = BD_ERR_NOT_FOUND;
    if (rc == SQLITE_ROW) {
        bd_slice v = sq_col_slice(st, 0);
        if (v.len + 1 > outcap) {
            r = BD_ERR_LIMIT;
        } else {
            memcpy(out, v.ptr, v.len);
            out[v.len] = '\0';
            r = BD_OK;
        }
    } else if (rc != SQLITE_DONE) {
        r = sq_map_rc(rc);
    }
    sq_done(st);
    return r;
}

bd_result sq_meta_set(bd_store *base, const char *key, const char *value)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st = sq_fixed(s, Q_META_SET);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, value, -1, SQLITE_STATIC);
    return sq_step_done(s, st);
}
