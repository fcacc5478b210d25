/* The queues' depths for /metrics (store.h, bd_store_queue_depths). */
#include "store/pg/pg_impl.h"

bd_result pg_queue_depths(bd_store *s, bd_store_queues *out)
{
    *out = (bd_store_queues){0};
    PGresult *res;
    bd_result r = pg_run_sql(pg_of(s),
                             "SELECT (SELECT count(*) FROM jobs WHERE status IN (0, 1)),"
                             " (SELECT count(*) FROM alerts WHERE state = 0)",
                             NULL, true, &res);
    if (r != BD_OK)
        return r;
    out->jobs_waiting = pg_int(res, 0, 0);
    out->alerts_pending = pg_int(res, 0, 1);
    PQclear(res);
    return BD_OK;
}
