/* The SQLite backend's part of the console (issue 34): alert triage and the list of
 * console sessions signed out (store.h). */
#include "store/sqlite/sqlite_impl.h"
#include "store/sqlite/statements.h"

bd_result sq_alert_triage(bd_store *base, int64_t key_id, bd_slice event_id, int triage)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st;
    bd_result r = sq_run_dynamic(
        s, "UPDATE alerts SET triage = ?3 WHERE key_id = ?1 AND event_id = ?2", &st);
    if (r != BD_OK)
        return r;
    sqlite3_bind_int64(st, 1, key_id);
    sqlite3_bind_text(st, 2, event_id.ptr, (int)event_id.len, SQLITE_TRANSIENT);
    sqlite3_bind_int(st, 3, triage);
    r = sq_step_done(s, st);
    if (r == BD_OK && sqlite3_changes(s->db) == 0)
        r = BD_ERR_NOT_FOUND;
    return r;
}

bd_result sq_session_end(bd_store *base, bd_slice id, int64_t until_at, int64_t now)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st;
    bd_result r = sq_run_dynamic(s, "DELETE FROM console_signouts WHERE until_at < ?1", &st);
    if (r == BD_OK) {
        sqlite3_bind_int64(st, 1, now);
        r = sq_step_done(s, st);
    }
    if (r == BD_OK)
        r = sq_run_dynamic(s,
                           "INSERT OR REPLACE INTO console_signouts(id, until_at) VALUES (?1, ?2)",
                           &st);
    if (r == BD_OK) {
        sqlite3_bind_text(st, 1, id.ptr, (int)id.len, SQLITE_TRANSIENT);
        sqlite3_bind_int64(st, 2, until_at);
        r = sq_step_done(s, st);
    }
    return r;
}

bd_result sq_session_ended(bd_store *base, bd_slice id, bool *ended)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st;
    *ended = false;
    bd_result r = sq_run_dynamic(s, "SELECT count(*) FROM console_signouts WHERE id = ?1", &st);
    if (r != BD_OK)
        return r;
    sqlite3_bind_text(st, 1, id.ptr, (int)id.len, SQLITE_TRANSIENT);
    int64_t n = 0;
    r = sq_step_count(st, &n);
    *ended = n > 0;
    return r;
}
