/* Per-key usage counters on PostgreSQL (store.h, "per-key usage"): one statement per call,
 * outside any transaction of the connection's and without the writer lock, so counting
 * never waits for an import. Concurrent servers queue on the month's row lock; a refused
 * ON CONFLICT update re-reads the row as the winner left it, so a quota holds exactly. */
#include "store/pg/pg_impl.h"

/* $1 key, $2 month, $3 count, $4 quota (0: none), $5 day. The day's row changes only when
 * the month's did (it reads m). Columns: added (0/count), the month's counter after the
 * call, or before it when refused (the statement's snapshot: what it held). */
static const pg_stmt USAGE_ADD = {
    PG_Q_USAGE_ADD,
    "WITH m AS (INSERT INTO key_usage AS u(key_id, period, requests) "
    "  SELECT $1::bigint, $2::integer, $3::bigint WHERE $4::bigint = 0 OR $3::bigint <= $4::bigint "
    "  ON CONFLICT (key_id, period) DO UPDATE SET requests = u.requests + $3::bigint "
    "  WHERE $4::bigint = 0 OR u.requests + $3::bigint <= $4::bigint RETURNING requests), "
    "d AS (INSERT INTO key_usage AS u(key_id, period, requests) "
    "  SELECT $1::bigint, $5::integer, $3::bigint FROM m "
    "  ON CONFLICT (key_id, period) DO UPDATE SET requests = u.requests + $3::bigint "
    "  RETURNING requests) "
    "SELECT (SELECT count(*) FROM d), coalesce((SELECT requests FROM m), "
    "  (SELECT requests FROM key_usage WHERE key_id = $1::bigint AND period = $2::integer), 0)"};

static const pg_stmt USAGE_GET = {
    PG_Q_USAGE_GET,
    "SELECT coalesce(max(CASE WHEN period = $2::integer THEN requests END), 0), "
    "coalesce(max(CASE WHEN period = $3::integer THEN requests END), 0) "
    "FROM key_usage WHERE key_id = $1::bigint AND period IN ($2::integer, $3::integer)"};

static const pg_stmt USAGE_GIVE_BACK = {
    PG_Q_USAGE_GIVE_BACK,
    "UPDATE key_usage SET requests = GREATEST(0, requests - $4::bigint) "
    "WHERE key_id = $1::bigint AND period IN ($2::integer, $3::integer)"};

bd_result pg_usage_add(bd_store *s, int64_t key_id, int32_t day, int64_t count, int64_t quota,
                       int64_t *added, int64_t *month_total)
{
    pg_params pp = {0};
    pg_param_int(&pp, key_id);
    pg_param_int(&pp, day / 100);
    pg_param_int(&pp, count);
    pg_param_int(&pp, quota);
    pg_param_int(&pp, day);
    PGresult *res;
    bd_result r = pg_run(pg_of(s), &USAGE_ADD, &pp, &res);
    if (r != BD_OK)
        return r;
    if (PQntuples(res) == 1) {
        *added = pg_int(res, 0, 0) > 0 ? count : 0;
        *month_total = pg_int(res, 0, 1);
    } else {
        r = BD_ERR_STORE;
    }
    PQclear(res);
    return r;
}

bd_result pg_usage_get(bd_store *s, int64_t key_id, int32_t day, int64_t *day_total,
                       int64_t *month_total)
{
    pg_params pp = {0};
    pg_param_int(&pp, key_id);
    pg_param_int(&pp, day);
    pg_param_int(&pp, day / 100);
    PGresult *res;
    bd_result r = pg_run(pg_of(s), &USAGE_GET, &pp, &res);
    if (r != BD_OK)
        return r;
    if (PQntuples(res) == 1) {
        *day_total = pg_int(res, 0, 0);
        *month_total = pg_int(res, 0, 1);
    } else {
        r = BD_ERR_STORE;
    }
    PQclear(res);
    return r;
}

bd_result pg_usage_give_back(bd_store *s, int64_t key_id, int32_t day, int64_t count)
{
    pg_params pp = {0};
    pg_param_int(&pp, key_id);
    pg_param_int(&pp, day);
    pg_param_int(&pp, day / 100);
    pg_param_int(&pp, count);
    return pg_run(pg_of(s), &USAGE_GIVE_BACK, &pp, NULL);
}
