/* The audit trail and the lookup log on PostgreSQL (store.h): appended rows, read newest
 * first. Every server of a store inserts its own lookup rows: nothing is shared in memory. */
#include <stdint.h>
#include <string.h>

#include "core/hex.h"
#include "store/pg/pg_impl.h"
#include "store/sql_common.h"

static const pg_stmt AUDIT_ADD = {
    PG_Q_AUDIT_ADD, "INSERT INTO audit(at, key_id, address, action, target, before, after) "
                    "VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id"};
static const pg_stmt AUDIT_LIST = {
    PG_Q_AUDIT_LIST, "SELECT id, at, key_id, address, action, target, before, after FROM audit "
                     "WHERE id < $1 ORDER BY id DESC LIMIT $2"};
static const pg_stmt LOOKUP_ADD = {PG_Q_LOOKUP_ADD,
                                   "INSERT INTO lookups(at, key_id, type, hash) "
                                   "SELECT * FROM unnest($1::bigint[], $2::bigint[], "
                                   "$3::integer[], $4::bytea[])"};
/* The buckets present (lookups_by_bucket's first column), newest first, one index seek
 * each, and the hash's rows in each: LATERAL, so that each bucket is an index scan and
 * never a scan of the whole log for the hash. */
static const pg_stmt LOOKUP_FIND = {
    PG_Q_LOOKUP_FIND,
    "WITH RECURSIVE b(x) AS (SELECT (SELECT " BD_SQL_LOOKUP_BUCKET " FROM lookups ORDER BY "
    BD_SQL_LOOKUP_BUCKET " DESC LIMIT 1) UNION ALL SELECT (SELECT " BD_SQL_LOOKUP_BUCKET
    " FROM lookups WHERE " BD_SQL_LOOKUP_BUCKET " < b.x ORDER BY " BD_SQL_LOOKUP_BUCKET
    " DESC LIMIT 1) FROM b WHERE b.x IS NOT NULL) "
    "SELECT l.at, l.key_id, l.type, encode(l.hash, 'hex') FROM b CROSS JOIN LATERAL "
    "(SELECT at, key_id, type, hash FROM lookups WHERE " BD_SQL_LOOKUP_BUCKET " = b.x "
    "AND hash = $1) l ORDER BY l.at DESC LIMIT $2"};
static const pg_stmt LOOKUP_EXPIRE = {PG_Q_LOOKUP_EXPIRE, "DELETE FROM lookups WHERE at < $1"};

bd_result pg_audit_add(bd_store *s, const bd_audit_row *a, int64_t *id)
{
    pg_store *p = pg_of(s);
    bool own;
    bd_result r = pg_write_begin(p, &own);
    if (r != BD_OK)
        return r;
    pg_params pp = {0};
    pg_param_int(&pp, a->at);
    pg_param_int(&pp, a->key_id);
    pg_param_text(&pp, a->address);
    pg_param_text(&pp, a->action);
    pg_param_text(&pp, a->target);
    pg_param_text(&pp, a->before);
    pg_param_text(&pp, a->after);
    PGresult *res;
    r = pg_run(p, &AUDIT_ADD, &pp, &res);
    if (r == BD_OK) {
        *id = pg_int(res, 0, 0);
        PQclear(res);
    }
    return pg_write_end(p, own, r);
}

bd_result pg_audit_list(bd_store *s, int64_t before, int limit, bd_audit_cb cb, void *ctx)
{
    pg_params pp = {0};
    pg_param_int(&pp, before > 0 ? before : INT64_MAX);
    pg_param_int(&pp, limit);
    PGresult *res;
    bd_result r = pg_run(pg_of(s), &AUDIT_LIST, &pp, &res);
    if (r != BD_OK)
        return r;
    for (int i = 0, rows = PQntuples(res); i < rows; i++) {
        bd_audit_row a = {
            .id = pg_int(res, i, 0),
            .at = pg_int(res, i, 1),
            .key_id = pg_int(res, i, 2),
            .address = pg_slice(res, i, 3),
            .action = pg_slice(res, i, 4),
            .target = pg_slice(res, i, 5),
            .before = pg_slice(res, i, 6),
            .after = pg_slice(res, i, 7),
        };
        if (cb(ctx, &a))
            break;
    }
    PQclear(res);
    return BD_OK;
}

/* Arrays in text form: "{1,2,3}" of numbers, "{\"\\\\x00ff\",...}" of bytea. */
static bd_result array_of_ints(bd_buf *b, const bd_lookup_row *rows, size_t n, int which)
{
    bd_result r = bd_buf_append_char(b, '{');
    for (size_t i = 0; r == BD_OK && i < n; i++) {
        int64_t v = which == 0 ? rows[i].at : which == 1 ? rows[i].key_id : rows[i].type;
        if (i)
            r = bd_buf_append_char(b, ',');
        if (r == BD_OK)
            r = bd_buf_append_i64(b, v);
    }
    if (r == BD_OK)
        r = bd_buf_append_char(b, '}');
    return r == BD_OK ? bd_buf_append_char(b, '\0') : r;
}

static bd_result array_of_hashes(bd_buf *b, const bd_lookup_row *rows, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    bd_result r = bd_buf_append_char(b, '{');
    for (size_t i = 0; r == BD_OK && i < n; i++) {
        if (i)
            r = bd_buf_append_char(b, ',');
        if (r == BD_OK)
            r = bd_buf_append_str(b, "\"\\\\x");
        for (size_t j = 0; r == BD_OK && j < sizeof rows[i].hash; j++) {
            r = bd_buf_append_char(b, hex[rows[i].hash[j] >> 4]);
            if (r == BD_OK)
                r = bd_buf_append_char(b, hex[rows[i].hash[j] & 15]);
        }
        if (r == BD_OK)
            r = bd_buf_append_char(b, '"');
    }
    if (r == BD_OK)
        r = bd_buf_append_char(b, '}');
    return r == BD_OK ? bd_buf_append_char(b, '\0') : r;
}

/* One statement for all the rows (arrays unnested), in a transaction of its own. */
bd_result pg_lookup_add(bd_store *s, const bd_lookup_row *rows, size_t n)
{
    pg_store *p = pg_of(s);
    bd_buf arr[4];
    for (int i = 0; i < 4; i++)
        bd_buf_init(&arr[i], 1u << 28);
    bd_result r = BD_OK;
    for (int i = 0; r == BD_OK && i < 3; i++)
        r = array_of_ints(&arr[i], rows, n, i);
    if (r == BD_OK)
        r = array_of_hashes(&arr[3], rows, n);
    /* One statement, atomic on its own: outside a caller's transaction it runs as its own,
     * not as a write transaction, which would take the writers' lock (waiting behind an
     * import) and move the data version, which says the data searches read has changed and
     * so empties every server's breach objects (v7/breaches.c) at each flush. */
    if (r == BD_OK) {
        pg_params pp = {0};
        for (int i = 0; i < 4; i++)
            pg_param_str(&pp, arr[i].data);
        r = pg_run(p, &LOOKUP_ADD, &pp, NULL);
    }
    for (int i = 0; i < 4; i++)
        bd_buf_free(&arr[i]);
    return r;
}

bd_result pg_lookup_find(bd_store *s, const uint8_t hash[32], int limit, bd_lookup_cb cb,
                         void *ctx)
{
    pg_params pp = {0};
    pg_param_text(&pp, (bd_slice){(const char *)hash, 32});
    pg_param_int(&pp, limit);
    PGresult *res;
    bd_result r = pg_run(pg_of(s), &LOOKUP_FIND, &pp, &res);
    if (r != BD_OK)
        return r;
    for (int i = 0, rows = PQntuples(res); i < rows; i++) {
        bd_lookup_row l = {
            .at = pg_int(res, i, 0),
            .key_id = pg_int(res, i, 1),
            .type = (int)pg_int(res, i, 2),
        };
        if (!bd_hex_decode(pg_slice(res, i, 3), l.hash, sizeof l.hash, BD_HEX_LOWER))
            memset(l.hash, 0, sizeof l.hash);
        if (cb(ctx, &l))
            break;
    }
    PQclear(res);
    return BD_OK;
}

bd_result pg_lookup_expire(bd_store *s, int64_t before_at, int64_t *deleted)
{
    pg_store *p = pg_of(s);
    bool own;
    bd_result r = pg_write_begin(p, &own);
    if (r != BD_OK)
        return r;
    pg_params pp = {0};
    pg_param_int(&pp, before_at);
    PGresult *res;
    r = pg_run(p, &LOOKUP_EXPIRE, &pp, &res);
    if (r == BD_OK) {
        *deleted = pg_changes(res);
        PQclear(res);
    }
    return pg_write_end(p, own, r);
}
