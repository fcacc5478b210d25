/* The SQLite backend's per-key usage counters (store.h, "per-key usage"): the month's row
 * and the day's row of a key change in one IMMEDIATE transaction, so every process writing
 * the file takes its turn and a quota holds exactly across them. */
#include "store/sqlite/sqlite_impl.h"
#include "store/sqlite/statements.h"

/* Adds to the month's row within the quota; *added stays 0 when the quota refuses. */
static bd_result add_month(sqlite_store *s, int64_t key_id, int32_t month, int64_t count,
                           int64_t quota, int64_t *added, int64_t *month_total)
{
    sqlite3_stmt *st = sq_fixed(s, Q_USAGE_MONTH);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_int64(st, 1, key_id);
    sqlite3_bind_int64(st, 2, month);
    sqlite3_bind_int64(st, 3, count);
    sqlite3_bind_int64(st, 4, quota);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *added = count;
        *month_total = sqlite3_column_int64(st, 0);
        rc = sqlite3_step(st);
    }
    sq_done(st);
    return rc == SQLITE_DONE ? BD_OK : sq_map_rc(rc);
}

bd_result sq_usage_add(bd_store *base, int64_t key_id, int32_t day, int64_t count, int64_t quota,
                       int64_t *added, int64_t *month_total)
{
    sqlite_store *s = S(base);
    bool own = sqlite3_get_autocommit(s->db) != 0;
    bd_result r = own ? sq_run_fixed(s, Q_BEGIN) : BD_OK;
    if (r != BD_OK)
        return r;
    r = add_month(s, key_id, day / 100, count, quota, added, month_total);
    if (r == BD_OK && *added == 0) {
        int64_t today;
        r = sq_usage_get(base, key_id, day, &today, month_total);
    } else if (r == BD_OK) {
        sqlite3_stmt *st = sq_fixed(s, Q_USAGE_DAY);
        if (!st) {
            r = BD_ERR_STORE;
        } else {
            sqlite3_bind_int64(st, 1, key_id);
            sqlite3_bind_int64(st, 2, day);
            sqlite3_bind_int64(st, 3, count);
            r = sq_step_done(s, st);
        }
    }
    if (own)
        r = r == BD_OK ? sq_run_fixed(s, Q_COMMIT) : r;
    if (r != BD_OK) {
        if (own && !sqlite3_get_autocommit(s->db))
            sq_run_fixed(s, Q_ROLLBACK);
        *added = 0;
    }
    return r;
}

bd_result sq_usage_get(bd_store *base, int64_t key_id, int32_t day, int64_t *day_total,
                       int64_t *month_total)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st = sq_fixed(s, Q_USAGE_GET);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_int64(st, 1, key_id);
    sqlite3_bind_int64(st, 2, day);
    sqlite3_bind_int64(st, 3, day / 100);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *day_total = sqlite3_column_int64(st, 0);
        *month_total = sqlite3_column_int64(st, 1);
        rc = SQLITE_DONE;
    }
    sq_done(st);
    return sq_map_rc(rc);
}

bd_result sq_usage_give_back(bd_store *base, int64_t key_id, int32_t day, int64_t count)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st = sq_fixed(s, Q_USAGE_GIVE_BACK);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_int64(st, 1, key_id);
    sqlite3_bind_int64(st, 2, day);
    sqlite3_bind_int64(st, 3, day / 100);
    sqlite3_bind_int64(st, 4, count);
    return sq_step_done(s, st); /* one statement: both rows or neither */
}
