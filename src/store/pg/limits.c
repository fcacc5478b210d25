/* Shared rate-limit buckets on PostgreSQL: one statement per lease of requests, outside any
 * transaction of the connection's and without the writer lock, so a lease never waits for
 * an import. The row lock of the bucket orders servers taking from the same bucket. */
#include "store/pg/pg_impl.h"

/* $1 kind, $2 id, $3 now, $4 share, $5 depth, $6 want. Admits k = min(want, what fits)
 * requests: k shares past max(tat, now) must stay within depth of now. Every SET expression
 * reads the row as it was, so granted and tat agree. */
static const pg_stmt RATE_TAKE = {
    PG_Q_RATE_TAKE,
    "INSERT INTO rate_limits AS b(kind, id, tat, granted) "
    "VALUES ($1, $2, $3::bigint + LEAST($6::bigint, $5::bigint / $4::bigint) * $4::bigint, "
    "        LEAST($6::bigint, $5::bigint / $4::bigint)) "
    "ON CONFLICT (id, kind) DO UPDATE SET "
    "  granted = GREATEST(0, LEAST($6::bigint, ($3::bigint + $5::bigint - GREATEST(b.tat, "
    "$3::bigint)) / $4::bigint)), "
    "  tat = GREATEST(b.tat, $3::bigint) + GREATEST(0, LEAST($6::bigint, ($3::bigint + "
    "$5::bigint - GREATEST(b.tat, $3::bigint)) / $4::bigint)) * $4::bigint "
    "RETURNING granted, tat"};

/* An arrival time moved back below now is the same as now: a request given back after its
 * share had drained anyway changes nothing. */
static const pg_stmt RATE_GIVE_BACK = {
    PG_Q_RATE_GIVE_BACK,
    "UPDATE rate_limits SET tat = tat - $3::bigint * $4::bigint WHERE id = $2 AND kind = $1"};

bd_result pg_rate_take(bd_store *s, int kind, int64_t id, int64_t now_us, int64_t share_us,
                       int64_t depth_us, int64_t want, int64_t *granted, int64_t *tat_us)
{
    pg_params pp = {0};
    pg_param_int(&pp, kind);
    pg_param_int(&pp, id);
    pg_param_int(&pp, now_us);
    pg_param_int(&pp, share_us > 0 ? share_us : 1);
    pg_param_int(&pp, depth_us);
    pg_param_int(&pp, want > 0 ? want : 1);
    PGresult *res;
    *granted = 0;
    *tat_us = 0;
    bd_result r = pg_run(pg_of(s), &RATE_TAKE, &pp, &res);
    if (r != BD_OK)
        return r;
    if (PQntuples(res) == 1) {
        *granted = pg_int(res, 0, 0);
        *tat_us = pg_int(res, 0, 1);
    } else {
        r = BD_ERR_STORE;
    }
    PQclear(res);
    return r;
}

bd_result pg_rate_give_back(bd_store *s, int kind, int64_t id, int64_t count, int64_t share_us)
{
    if (count <= 0)
        return BD_OK;
    pg_params pp = {0};
    pg_param_int(&pp, kind);
    pg_param_int(&pp, id);
    pg_param_int(&pp, count);
    pg_param_int(&pp, share_us);
    return pg_run(pg_of(s), &RATE_GIVE_BACK, &pp, NULL);
}
