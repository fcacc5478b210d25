/* The queues' depths for /metrics (store.h, bd_store_queue_depths). */
#include "store/sqlite/sqlite_impl.h"
#include "store/sqlite/statements.h"

bd_result sq_queue_depths(bd_store *base, bd_store_queues *out)
{
    *out = (bd_store_queues){0};
    sqlite3_stmt *st;
    /* jobs_waiting (status, created_at) and alerts_due (WHERE state = 0) answer both */
    bd_result r = sq_run_dynamic(S(base),
                                 "SELECT (SELECT count(*) FROM jobs WHERE status IN (0, 1)),"
                                 " (SELECT count(*) FROM alerts WHERE state = 0)",
                                 &st);
    if (r != BD_OK)
        return r;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        out->jobs_waiting = sqlite3_column_int64(st, 0);
        out->alerts_pending = sqlite3_column_int64(st, 1);
    }
    r = rc == SQLITE_ROW ? BD_OK : sq_map_rc(rc == SQLITE_DONE ? SQLITE_ERROR : rc);
    sq_done(st);
    return r;
}
