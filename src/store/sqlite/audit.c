/* The SQLite backend's audit trail and lookup log (store.h): appended rows, read newest
 * first. */
#include <stdint.h>
#include <string.h>

#include "store/sqlite/sqlite_impl.h"
#include "store/sqlite/statements.h"

bd_result sq_audit_add(bd_store *base, const bd_audit_row *a, int64_t *id)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st = sq_fixed(s, Q_AUDIT_ADD);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_int64(st, 1, a->at);
    sqlite3_bind_int64(st, 2, a->key_id);
    sq_bind_slice(st, 3, a->address);
    sq_bind_slice(st, 4, a->action);
    sq_bind_slice(st, 5, a->target);
    sq_bind_slice(st, 6, a->before);
    sq_bind_slice(st, 7, a->after);
    bd_result r = sq_step_done(s, st);
    if (r == BD_OK)
        *id = sqlite3_last_insert_rowid(s->db);
    return r;
}

bd_result sq_audit_list(bd_store *base, int64_t before, int limit, bd_audit_cb cb, void *ctx)
{
    sqlite3_stmt *st = sq_fixed(S(base), Q_AUDIT_LIST);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_int64(st, 1, before > 0 ? before : INT64_MAX);
    sqlite3_bind_int(st, 2, limit);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        bd_audit_row a = {
            .id = sqlite3_column_int64(st, 0),
            .at = sqlite3_column_int64(st, 1),
            .key_id = sqlite3_column_int64(st, 2),
            .address = sq_col_slice(st, 3),
            .action = sq_col_slice(st, 4),
            .target = sq_col_slice(st, 5),
            .before = sq_col_slice(st, 6),
            .after = sq_col_slice(st, 7),
        };
        if (cb(ctx, &a))
            break;
    }
    bd_result r = rc == SQLITE_ROW || rc == SQLITE_DONE ? BD_OK : sq_map_rc(rc);
    sq_done(st);
    return r;
}

bd_result sq_lookup_add(bd_store *base, const bd_lookup_row *rows, size_t n)
{
    sqlite_store *s = S(base);
    bool own = sqlite3_get_autocommit(s->db) != 0;
    bd_result r = own ? sq_run_fixed(s, Q_BEGIN) : BD_OK;
    sqlite3_stmt *st = r == BD_OK ? sq_fixed(s, Q_LOOKUP_ADD) : NULL;
    if (r == BD_OK && !st)
        r = BD_ERR_STORE;
    for (size_t i = 0; r == BD_OK && i < n; i++) {
        sqlite3_bind_int64(st, 1, rows[i].at);
        sqlite3_bind_int64(st, 2, rows[i].key_id);
        sqlite3_bind_int(st, 3, rows[i].type);
        sqlite3_bind_blob(st, 4, rows[i].hash, sizeof rows[i].hash, SQLITE_STATIC);
        r = sq_step_done(s, st);
    }
    if (own) {
        if (r == BD_OK)
            r = sq_run_fixed(s, Q_COMMIT);
        if (r != BD_OK && !sqlite3_get_autocommit(s->db))
            sq_run_fixed(s, Q_ROLLBACK);
    }
    return r;
}

bd_result sq_lookup_find(bd_store *base, const uint8_t hash[32], int limit, bd_lookup_cb cb,
                         void *ctx)
{
    sqlite3_stmt *st = sq_fixed(S(base), Q_LOOKUP_FIND);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_blob(st, 1, hash, 32, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, limit);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        bd_lookup_row l = {
            .at = sqlite3_column_int64(st, 0),
            .key_id = sqlite3_column_int64(st, 1),
            .type = sqlite3_column_int(st, 2),
        };
        if (sqlite3_column_bytes(st, 3) == (int)sizeof l.hash)
            memcpy(l.hash, sqlite3_column_blob(st, 3), sizeof l.hash);
        if (cb(ctx, &l))
            break;
    }
    bd_result r = rc == SQLITE_ROW || rc == SQLITE_DONE ? BD_OK : sq_map_rc(rc);
    sq_done(st);
    return r;
}

bd_result sq_lookup_expire(bd_store *base, int64_t before_at, int64_t *deleted)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st = sq_fixed(s, Q_LOOKUP_EXPIRE);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_int64(st, 1, before_at);
    bd_result r = sq_step_done(s, st);
    if (r == BD_OK)
        *deleted = sqlite3_changes64(s->db);
    return r;
}
