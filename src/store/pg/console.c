/* The PostgreSQL backend's part of the console (issue 34): alert triage and the list of
 * console sessions signed out (store.h). */
#include <libpq-fe.h>

#include "store/pg/pg_impl.h"

bd_result pg_alert_triage(bd_store *s, int64_t key_id, bd_slice event_id, int triage)
{
    pg_params pp = {0};
    pg_param_int(&pp, key_id);
    pg_param_text(&pp, event_id);
    pg_param_int(&pp, triage);
    PGresult *res;
    bd_result r = pg_run_sql(pg_of(s),
                             "UPDATE alerts SET triage = $3::integer WHERE key_id = $1::bigint "
                             "AND event_id = $2::text",
                             &pp, true, &res);
    if (r != BD_OK)
        return r;
    if (pg_changes(res) == 0)
        r = BD_ERR_NOT_FOUND;
    PQclear(res);
    return r;
}

bd_result pg_session_end(bd_store *s, bd_slice id, int64_t until_at, int64_t now)
{
    pg_params pp = {0};
    pg_param_int(&pp, now);
    bd_result r = pg_run_sql(pg_of(s), "DELETE FROM console_signouts WHERE until_at < $1::bigint",
                             &pp, true, NULL);
    if (r != BD_OK)
        return r;
    pp = (pg_params){0};
    pg_param_text(&pp, id);
    pg_param_int(&pp, until_at);
    return pg_run_sql(pg_of(s),
                      "INSERT INTO console_signouts(id, until_at) VALUES ($1::text, $2::bigint) "
                      "ON CONFLICT (id) DO UPDATE SET until_at = EXCLUDED.until_at",
                      &pp, true, NULL);
}

bd_result pg_session_ended(bd_store *s, bd_slice id, bool *ended)
{
    pg_params pp = {0};
    pg_param_text(&pp, id);
    PGresult *res;
    *ended = false;
    bd_result r = pg_run_sql(pg_of(s), "SELECT 1 FROM console_signouts WHERE id = $1::text", &pp,
                             true, &res);
    if (r != BD_OK)
        return r;
    *ended = PQntuples(res) > 0;
    PQclear(res);
    return BD_OK;
}
