/* The PostgreSQL store's meta table: reading a named value (schema version, generations,
 * the data version, notes); a write of one is a transaction's (txn.c). */
#include <string.h>

#include "store/pg/pg_impl.h"

const pg_stmt pg_meta_get_stmt = {PG_Q_META_GET, "SELECT value FROM meta WHERE key = $1"};

/* ---- meta ------------------------------------------------------------------------------ */

bd_result pg_meta_get(bd_store *s, const char *key, char *out, size_t outcap)
{
    pg_params pp = {0};
    pg_param_str(&pp, key);
    PGresult *res;
    bd_result r = pg_run(pg_of(s), &pg_meta_get_stmt, &pp, &res);
    if (r != BD_OK)
        return r;
    r = BD_ERR_NOT_FOUND;
    if (PQntuples(res) == 1) {
        bd_slice v = pg_slice(res, 0, 0);
        r = v.len + 1 > outcap ? BD_ERR_LIMIT : BD_OK;
        if (r == BD_OK) {
            memcpy(out, v.ptr, v.len);
            out[v.len] = '\0';
        }
    }
    PQclear(res);
    return r;
}
