/* API keys on PostgreSQL. Every change moves the key generation in meta, in the change's
 * own transaction, so servers polling the generation see it exactly when the change lands. */
#include <stdlib.h>
#include <string.h>

#include "core/hex.h"
#include "store/pg/pg_impl.h"

/* no row back when tenant $12 (not 0) does not exist */
static const pg_stmt KEY_ADD = {
    PG_Q_KEY_ADD, "INSERT INTO api_keys(name, hash, plan, rate_per_hour, created_at, "
                  "expires_at, exact_per_day, quota_per_month, max_jobs, max_queued_identities, "
                  "max_result_rows, tenant_id, types, allow_ip, role) SELECT $1, $2, $3, $4, $5, "
                  "$6, $7, $8, $9, $10, $11, $12, $13, $14, $15 WHERE $12::bigint = 0 OR "
                  "EXISTS (SELECT 1 FROM tenants WHERE id = $12::bigint) RETURNING id"};
#define KEY_COLS                                                                                   \
    "id, name, encode(hash, 'hex'), plan, rate_per_hour, created_at, expires_at, revoked_at, "      \
    "exact_per_day, quota_per_month, max_jobs, max_queued_identities, max_result_rows, "           \
    "tenant_id, types, allow_ip, role"
static const pg_stmt KEY_LIST = {PG_Q_KEY_LIST,
                                 "SELECT " KEY_COLS " FROM api_keys ORDER BY id"};
static const pg_stmt KEY_GET = {PG_Q_KEY_GET, "SELECT " KEY_COLS " FROM api_keys WHERE id = $1"};
static const pg_stmt KEY_REVOKE = {
    PG_Q_KEY_REVOKE, "UPDATE api_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at = 0"};
static const pg_stmt KEY_BUMP = {PG_Q_KEY_BUMP, "UPDATE meta SET value = (value::bigint + 1)::text "
                                                "WHERE key = 'key_generation'"};

bd_result pg_key_add(bd_store *s, const bd_key_row *k, int64_t *id)
{
    pg_store *p = pg_of(s);
    bool own;
    bd_result r = pg_write_begin(p, &own);
    if (r != BD_OK)
        return r;
    pg_params pp = {0};
    pg_param_text(&pp, k->name);
    pg_param_text(&pp, (bd_slice){(const char *)k->hash, sizeof k->hash});
    pg_param_text(&pp, k->plan);
    pg_param_int(&pp, k->rate_per_hour);
    pg_param_int(&pp, k->created_at);
    pg_param_int(&pp, k->expires_at);
    pg_param_int(&pp, k->exact_per_day);
    pg_param_int(&pp, k->quota_per_month);
    pg_param_int(&pp, k->max_jobs);
    pg_param_int(&pp, k->max_queued_identities);
    pg_param_int(&pp, k->max_result_rows);
    pg_param_int(&pp, k->tenant_id);
    pg_param_int(&pp, (int64_t)k->types);
    pg_param_text(&pp, k->allow_ip.ptr ? k->allow_ip : BD_SLICE_LIT(""));
    pg_param_int(&pp, k->role);
    PGresult *res;
    r = pg_run(p, &KEY_ADD, &pp, &res);
    if (r == BD_OK) {
        bool added = PQntuples(res) == 1;
        if (added)
            *id = pg_int(res, 0, 0);
        PQclear(res);
        r = added ? pg_run(p, &KEY_BUMP, NULL, NULL) : BD_ERR_NOT_FOUND; /* no such tenant */
    }
    return pg_write_end(p, own, r);
}

/* Row i of a KEY_LIST or KEY_GET result into *k (its slices valid while res is). */
static void read_key(const PGresult *res, int i, bd_key_row *k)
{
    k->id = pg_int(res, i, 0);
    k->name = pg_slice(res, i, 1);
    /* encode() writes lower-case hex */
    if (!bd_hex_decode(pg_slice(res, i, 2), k->hash, sizeof k->hash, BD_HEX_LOWER))
        memset(k->hash, 0, sizeof k->hash);
    k->plan = pg_slice(res, i, 3);
    k->rate_per_hour = pg_int(res, i, 4);
    k->created_at = pg_int(res, i, 5);
    k->expires_at = pg_int(res, i, 6);
    k->revoked_at = pg_int(res, i, 7);
    k->exact_per_day = pg_int(res, i, 8);
    k->quota_per_month = pg_int(res, i, 9);
    k->max_jobs = pg_int(res, i, 10);
    k->max_queued_identities = pg_int(res, i, 11);
    k->max_result_rows = pg_int(res, i, 12);
    k->tenant_id = pg_int(res, i, 13);
    k->types = (uint32_t)pg_int(res, i, 14);
    k->allow_ip = pg_slice(res, i, 15);
    k->role = (int)pg_int(res, i, 16);
}

bd_result pg_key_list(bd_store *s, bd_key_cb cb, void *ctx)
{
    PGresult *res;
    bd_result r = pg_run(pg_of(s), &KEY_LIST, NULL, &res);
    if (r != BD_OK)
        return r;
    for (int i = 0, rows = PQntuples(res); i < rows; i++) {
        bd_key_row k;
        read_key(res, i, &k);
        if (cb(ctx, &k))
            break;
    }
    PQclear(res);
    return BD_OK;
}

/* Runs stmt, which changes one key (BD_ERR_NOT_FOUND when no row changed), and moves the
 * key generation so that every server reloads its keys; in the caller's transaction or
 * one of its own. */
static bd_result change_key(pg_store *p, const pg_stmt *stmt, pg_params *pp)
{
    bool own;
    bd_result r = pg_write_begin(p, &own);
    if (r != BD_OK)
        return r;
    PGresult *res;
    r = pg_run(p, stmt, pp, &res);
    if (r == BD_OK) {
        r = pg_changes(res) > 0 ? BD_OK : BD_ERR_NOT_FOUND;
        PQclear(res);
    }
    if (r == BD_OK)
        r = pg_run(p, &KEY_BUMP, NULL, NULL);
    return pg_write_end(p, own, r);
}

bd_result pg_key_revoke(bd_store *s, int64_t id, int64_t now)
{
    pg_params pp = {0};
    pg_param_int(&pp, id);
    pg_param_int(&pp, now);
    return change_key(pg_of(s), &KEY_REVOKE, &pp);
}

bd_result pg_key_generation(bd_store *s, int64_t *gen)
{
    char v[32];
    bd_result r = s->ops->meta_get(s, "key_generation", v, sizeof v);
    if (r == BD_OK)
        *gen = strtoll(v, NULL, 10);
    return r;
}

static const pg_stmt KEY_SET_QUOTA = {
    PG_Q_KEY_SET_QUOTA,
    "UPDATE api_keys SET quota_per_month = $2 WHERE id = $1 AND revoked_at = 0"};

bd_result pg_key_set_quota(bd_store *s, int64_t id, int64_t quota_per_month)
{
    pg_params pp = {0};
    pg_param_int(&pp, id);
    pg_param_int(&pp, quota_per_month);
    return change_key(pg_of(s), &KEY_SET_QUOTA, &pp);
}

/* a limit below 0 stays as it is */
static const pg_stmt KEY_SET_JOB_LIMITS = {
    PG_Q_KEY_SET_JOB_LIMITS,
    "UPDATE api_keys SET max_jobs = CASE WHEN $2::bigint < 0 THEN max_jobs ELSE $2::bigint END, "
    "max_queued_identities = CASE WHEN $3::bigint < 0 THEN max_queued_identities "
    "ELSE $3::bigint END, max_result_rows = CASE WHEN $4::bigint < 0 THEN max_result_rows "
    "ELSE $4::bigint END WHERE id = $1 AND revoked_at = 0"};

bd_result pg_key_set_job_limits(bd_store *s, int64_t id, int64_t max_jobs,
                                int64_t max_queued_identities, int64_t max_result_rows)
{
    pg_params pp = {0};
    pg_param_int(&pp, id);
    pg_param_int(&pp, max_jobs);
    pg_param_int(&pp, max_queued_identities);
    pg_param_int(&pp, max_result_rows);
    return change_key(pg_of(s), &KEY_SET_JOB_LIMITS, &pp);
}

bd_result pg_key_get(bd_store *s, int64_t id, bd_key_row *out)
{
    pg_params pp = {0};
    pg_param_int(&pp, id);
    PGresult *res;
    bd_result r = pg_run(pg_of(s), &KEY_GET, &pp, &res);
    if (r != BD_OK)
        return r;
    if (PQntuples(res) == 1) {
        read_key(res, 0, out);
        out->name = out->plan = out->allow_ip = (bd_slice){NULL, 0}; /* gone with the result */
    } else {
        r = BD_ERR_NOT_FOUND;
    }
    PQclear(res);
    return r;
}
