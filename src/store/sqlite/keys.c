/* The SQLite backend's API keys: add, list, revoke, and the generation servers poll. */
#include <stdlib.h>
#include <string.h>

#include "store/sqlite/sqlite_impl.h"
#include "store/sqlite/statements.h"

bd_result sq_key_add(bd_store *base, const bd_key_row *k, int64_t *id)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st = sq_fixed(s, Q_KEY_ADD);
    if (!st)
        return BD_ERR_STORE;
    sq_bind_slice(st, 1, k->name);
    sqlite3_bind_blob(st, 2, k->hash, sizeof k->hash, SQLITE_STATIC);
    sq_bind_slice(st, 3, k->plan);
    sqlite3_bind_int64(st, 4, k->rate_per_hour);
    sqlite3_bind_int64(st, 5, k->created_at);
    sqlite3_bind_int64(st, 6, k->expires_at);
    sqlite3_bind_int64(st, 7, k->exact_per_day);
    sqlite3_bind_int64(st, 8, k->quota_per_month);
    sqlite3_bind_int64(st, 9, k->max_jobs);
    sqlite3_bind_int64(st, 10, k->max_queued_identities);
    sqlite3_bind_int64(st, 11, k->max_result_rows);
    sqlite3_bind_int64(st, 12, k->tenant_id);
    sqlite3_bind_int64(st, 13, (int64_t)k->types);
    sqlite3_bind_text(st, 14, k->allow_ip.ptr ? k->allow_ip.ptr : "", (int)k->allow_ip.len,
                      SQLITE_STATIC);
    sqlite3_bind_int64(st, 15, k->role);
    bd_result r = sq_step_done(s, st);
    if (r != BD_OK)
        return r;
    if (sqlite3_changes(s->db) == 0)
        return BD_ERR_NOT_FOUND; /* no such tenant */
    *id = sqlite3_last_insert_rowid(s->db);
    return sq_run_fixed(s, Q_KEY_BUMP);
}

/* A row of Q_KEY_LIST or Q_KEY_GET into *k (its slices valid until the next step). */
static void read_key(sqlite3_stmt *st, bd_key_row *k)
{
    k->id = sqlite3_column_int64(st, 0);
    k->name = sq_col_slice(st, 1);
    memset(k->hash, 0, sizeof k->hash);
    if (sqlite3_column_bytes(st, 2) == (int)sizeof k->hash)
        memcpy(k->hash, sqlite3_column_blob(st, 2), sizeof k->hash);
    k->plan = sq_col_slice(st, 3);
    k->rate_per_hour = sqlite3_column_int64(st, 4);
    k->created_at = sqlite3_column_int64(st, 5);
    k->expires_at = sqlite3_column_int64(st, 6);
    k->revoked_at = sqlite3_column_int64(st, 7);
    k->exact_per_day = sqlite3_column_int64(st, 8);
    k->quota_per_month = sqlite3_column_int64(st, 9);
    k->max_jobs = sqlite3_column_int64(st, 10);
    k->max_queued_identities = sqlite3_column_int64(st, 11);
    k->max_result_rows = sqlite3_column_int64(st, 12);
    k->tenant_id = sqlite3_column_int64(st, 13);
    k->types = (uint32_t)sqlite3_column_int64(st, 14);
    k->allow_ip = sq_col_slice(st, 15);
    k->role = (int)sqlite3_column_int64(st, 16);
}

bd_result sq_key_list(bd_store *base, bd_key_cb cb, void *ctx)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st = sq_fixed(s, Q_KEY_LIST);
    if (!st)
        return BD_ERR_STORE;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        bd_key_row k;
        read_key(st, &k);
        if (cb(ctx, &k))
            break;
    }
    bd_result r = rc == SQLITE_ROW || rc == SQLITE_DONE ? BD_OK : sq_map_rc(rc);
    sq_done(st);
    return r;
}

/* Steps st, which changes one key (BD_ERR_NOT_FOUND when no row changed), and moves the
 * key generation so that every server reloads its keys. */
static bd_result change_key(sqlite_store *s, sqlite3_stmt *st)
{
    bd_result r = sq_step_done(s, st);
    if (r != BD_OK)
        return r;
    if (sqlite3_changes(s->db) == 0)
        return BD_ERR_NOT_FOUND;
    return sq_run_fixed(s, Q_KEY_BUMP);
}

bd_result sq_key_revoke(bd_store *base, int64_t id, int64_t now)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st = sq_fixed(s, Q_KEY_REVOKE);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, now);
    return change_key(s, st);
}

bd_result sq_key_generation(bd_store *base, int64_t *gen)
{
    char v[32];
    bd_result r = sq_meta_get(base, "key_generation", v, sizeof v);
    if (r != BD_OK)
        return r;
    *gen = strtoll(v, NULL, 10);
    return BD_OK;
}

/* Shared rate limits are for several servers on several machines: a SQLite file is one
 * machine's, and its single writer is the importer's. */
bd_result sq_rate_take(bd_store *base, int kind, int64_t id, int64_t now_us, int64_t share_us,
                       int64_t depth_us, int64_t want, int64_t *granted, int64_t *tat_us)
{
    (void)base, (void)kind, (void)id, (void)now_us, (void)share_us, (void)depth_us, (void)want;
    *granted = 0;
    *tat_us = 0;
    return BD_ERR_INVALID;
}

bd_result sq_rate_give_back(bd_store *base, int kind, int64_t id, int64_t count,
                            int64_t share_us)
{
    (void)base, (void)kind, (void)id, (void)count, (void)share_us;
    return BD_ERR_INVALID;
}

bd_result sq_key_set_quota(bd_store *base, int64_t id, int64_t quota_per_month)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st = sq_fixed(s, Q_KEY_SET_QUOTA);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, quota_per_month);
    return change_key(s, st);
}

bd_result sq_key_set_job_limits(bd_store *base, int64_t id, int64_t max_jobs,
                                int64_t max_queued_identities, int64_t max_result_rows)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st = sq_fixed(s, Q_KEY_SET_JOB_LIMITS);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, max_jobs);
    sqlite3_bind_int64(st, 3, max_queued_identities);
    sqlite3_bind_int64(st, 4, max_result_rows);
    return change_key(s, st);
}

bd_result sq_key_get(bd_store *base, int64_t id, bd_key_row *out)
{
    sqlite3_stmt *st = sq_fixed(S(base), Q_KEY_GET);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_int64(st, 1, id);
    int rc = sqlite3_step(st);
    bd_result r = rc == SQLITE_ROW ? BD_OK : rc == SQLITE_DONE ? BD_ERR_NOT_FOUND : sq_map_rc(rc);
    if (rc == SQLITE_ROW) {
        read_key(st, out);
        /* gone with the statement's reset */
        out->name = out->plan = out->allow_ip = (bd_slice){NULL, 0};
    }
    sq_done(st);
    return r;
}
