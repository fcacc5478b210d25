/* CVVs kept in clear by stores made before they were keyed: the pending note, the upgrade. */
#include "store/pg/pg_impl.h"

/* A CVV in clear: digits (a mask is stars) without a keyed hash yet. */
#define PLAIN_CVV "cvv IS NOT NULL AND cvv_hmac IS NULL AND cvv ~ '^[0-9]+$'"
static const char CVV_PROTECT[] =
    "UPDATE cards SET cvv = $2, cvv_hmac = $3 WHERE cvv = $1 AND cvv_hmac IS NULL";
static const char CVV_DONE[] =
    "DROP INDEX IF EXISTS cards_by_cvv; DELETE FROM meta WHERE key = 'pending_cvv_hashes'";

/* Whether sql, a query, returns a row. */
static bd_result any_row(pg_store *p, const char *sql, bool *any)
{
    PGresult *res;
    bd_result r = pg_run_sql(p, sql, NULL, false, &res);
    if (r != BD_OK)
        return r;
    *any = PQntuples(res) > 0;
    PQclear(res);
    return BD_OK;
}

bd_result pg_cvv_note(pg_store *p)
{
    bool pending, plain = true;
    bd_result r = any_row(p, "SELECT 1 FROM meta WHERE key = 'pending_cvv_hashes'", &pending);
    if (r != BD_OK || !pending)
        return r;
    r = any_row(p, "SELECT 1 FROM cards WHERE " PLAIN_CVV " LIMIT 1", &plain);
    return r != BD_OK || plain ? r : pg_exec(p, CVV_DONE);
}

/* Replaces each distinct plain CVV (at most 11,000: 3 or 4 digits) by its mask and keyed
 * hash, in the open transaction: one update per value, through cards_by_cvv (on Citus a
 * statement on every shard, each an index range). */
static bd_result protect_cvvs(pg_store *p, bd_cvv_protect_fn protect, void *ctx, int64_t *changed)
{
    PGresult *plain;
    bd_result r =
        pg_run_sql(p, "SELECT DISTINCT cvv FROM cards WHERE " PLAIN_CVV, NULL, false, &plain);
    if (r != BD_OK)
        return r;
    for (int i = 0; r == BD_OK && i < PQntuples(plain); i++) {
        bd_slice v = pg_slice(plain, i, 0);
        char masked[5];
        uint8_t hmac[BD_HMAC_LEN];
        protect(ctx, v, masked, hmac);
        pg_params pp = {0};
        pg_param_text(&pp, v);
        pg_param_str(&pp, masked);
        pg_param_text(&pp, (bd_slice){(const char *)hmac, BD_HMAC_LEN});
        PGresult *res;
        r = pg_run_sql(p, CVV_PROTECT, &pp, true, &res);
        if (r == BD_OK) {
            *changed += pg_changes(res);
            PQclear(res);
        }
    }
    PQclear(plain);
    return r;
}

bd_result pg_cvv_upgrade(bd_store *s, bd_cvv_protect_fn protect, void *ctx, int64_t *changed)
{
    pg_store *p = pg_of(s);
    bool pending;
    bd_result r = any_row(p, "SELECT 1 FROM meta WHERE key = 'pending_cvv_hashes'", &pending);
    if (r != BD_OK || !pending)
        return r;
    r = pg_begin(s);
    if (r != BD_OK)
        return r;
    /* again under the writer lock: another process may have done it meanwhile */
    r = any_row(p, "SELECT 1 FROM meta WHERE key = 'pending_cvv_hashes'", &pending);
    if (r == BD_OK && pending)
        r = protect_cvvs(p, protect, ctx, changed);
    if (r == BD_OK && pending)
        r = pg_exec(p, CVV_DONE);
    if (r == BD_OK)
        r = pg_commit(s); /* rolls back on failure */
    else
        pg_rollback(s);
    if (r != BD_OK)
        *changed = 0;
    return r;
}
