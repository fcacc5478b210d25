/* Password ranges on PostgreSQL: the password_ranges table (schema.c, migration 10) holds one
 * bytea per bucket (layout: src/store/ranges.h). A write transaction accumulates hashes (a
 * download's totals from range_load, and the passwords of the records each move put in);
 * before it commits, the buckets they touch are read in one statement, merged here, and
 * written back with one COPY and one upsert: a flush costs four round trips, whatever the
 * number of buckets (two when none of them was stored before). */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "store/pg/pg_impl.h"

static const pg_stmt RANGE_GET = {PG_Q_RANGE_GET,
                                  "SELECT hashes FROM password_ranges WHERE bucket = $1"};

static const char READ_BUCKETS[] = "SELECT bucket, hashes FROM password_ranges "
                                   "WHERE bucket = ANY($1::integer[]) ORDER BY bucket";
static const char STAGE_CREATE[] =
    "CREATE TEMP TABLE IF NOT EXISTS bd_range_staging(bucket integer, hashes bytea) "
    "ON COMMIT DELETE ROWS; TRUNCATE pg_temp.bd_range_staging";
static const char STAGE_COPY[] = "COPY pg_temp.bd_range_staging FROM STDIN (FORMAT binary)";
/* None of the buckets is stored yet (a first load): they go straight in, with no staging
 * and no upsert; the writer lock (conn.c) keeps another import from adding one meanwhile.
 * A 1M-record bulk load's 440,000 buckets: 1.07 s through the staging's upsert. */
static const char DIRECT_COPY[] =
    "COPY password_ranges(bucket, hashes) FROM STDIN (FORMAT binary)";
static const char STAGE_MOVE[] =
    "INSERT INTO password_ranges(bucket, hashes) SELECT bucket, hashes "
    "FROM pg_temp.bd_range_staging ON CONFLICT (bucket) DO UPDATE SET hashes = excluded.hashes";

/* The range version (bd_store_range_version) moves with every flush, in its transaction. */
static const char VERSION_BUMP[] =
    "INSERT INTO meta(key, value) VALUES ('" BD_RANGE_VERSION_KEY "', '1') "
    "ON CONFLICT (key) DO UPDATE SET value = (meta.value::bigint + 1)::text";

bd_result pg_range_get(bd_store *s, bd_range_mode mode, uint32_t prefix, bd_range_cb cb, void *ctx)
{
    pg_store *p = pg_of(s);
    uint32_t key = BD_RANGE_KEY(mode, prefix);
    pg_params pp = {.result_format = 1};
    pg_param_int(&pp, key);
    PGresult *res;
    bd_result r = pg_run(p, &RANGE_GET, &pp, &res);
    if (r != BD_OK)
        return r;
    if (PQntuples(res) == 1)
        r = bd_range_decode(key, (const uint8_t *)PQgetvalue(res, 0, 0),
                            (size_t)PQgetlength(res, 0, 0), cb, ctx);
    PQclear(res);
    return r;
}

bd_result pg_range_load(bd_store *s, bd_range_mode mode, const uint8_t *hash, uint32_t count)
{
    pg_store *p = pg_of(s);
    if (!p->in_tx)
        return BD_ERR_INVALID;
    bd_result r = bd_range_acc_add(&p->ranges, mode, hash, count, BD_RANGE_MAX);
    if (r == BD_OK && p->ranges.n >= BD_RANGE_ACC_FLUSH)
        r = pg_range_flush(p);
    return r;
}

/* The stored buckets of a flush, in key order, and where the merge has got to. */
typedef struct {
    pg_store *p;
    PGresult *stored;
    int row;
} flush_io;

static uint32_t be32(const char *v)
{
    uint32_t n;
    memcpy(&n, v, 4);
    return ntohl(n);
}

static bd_result read_bucket(void *ctx, uint32_t key, const uint8_t **blob, size_t *len)
{
    flush_io *f = ctx;
    int n = PQntuples(f->stored);
    while (f->row < n && be32(PQgetvalue(f->stored, f->row, 0)) < key)
        f->row++;
    *blob = NULL;
    *len = 0;
    if (f->row < n && be32(PQgetvalue(f->stored, f->row, 0)) == key) {
        *blob = (const uint8_t *)PQgetvalue(f->stored, f->row, 1);
        *len = (size_t)PQgetlength(f->stored, f->row, 1);
    }
    return BD_OK;
}

static bd_result put_be32(bd_buf *b, uint32_t v)
{
    uint32_t n = htonl(v);
    return bd_buf_append(b, &n, 4);
}

/* One COPY row (bucket, hashes) of the merged bucket. */
static bd_result write_bucket(void *ctx, uint32_t key, const uint8_t *blob, size_t len)
{
    bd_buf *b = &((flush_io *)ctx)->p->range_rows;
    uint16_t fields = htons(2);
    bd_result r = bd_buf_append(b, &fields, 2);
    if (r == BD_OK)
        r = put_be32(b, 4);
    if (r == BD_OK)
        r = put_be32(b, key);
    if (r == BD_OK)
        r = put_be32(b, (uint32_t)len);
    return r == BD_OK ? bd_buf_append(b, blob, len) : r;
}

/* The accumulated buckets' keys as an integer[] literal: {k1,k2,...}. */
static bd_result key_list(const bd_range_acc *a, bd_buf *out)
{
    bd_result r = bd_buf_append_char(out, '{');
    for (size_t i = 0; i < a->n && r == BD_OK; i++) {
        if (i > 0 && a->e[i].key == a->e[i - 1].key)
            continue;
        if (out->len > 1)
            r = bd_buf_append_char(out, ',');
        if (r == BD_OK)
            r = bd_buf_append_i64(out, a->e[i].key);
    }
    return r == BD_OK ? bd_buf_append_char(out, '}') : r;
}

/* Sends the COPY rows in p->range_rows into the staging table, or straight into the ranges
 * when none is stored yet. */
static bd_result copy_rows(pg_store *p, bool direct)
{
    bd_result r = direct ? BD_OK : pg_exec(p, STAGE_CREATE);
    return r == BD_OK ? pg_copy_in(p, direct ? DIRECT_COPY : STAGE_COPY, &p->range_rows) : r;
}

/* The export (bd_store_range_export): one repeatable-read transaction, so the version and
 * every bucket come from one snapshot, the buckets through a cursor a thousand at a time
 * (binary), so that the whole table (2 x 2^20 buckets, tens of GB at Pwned Passwords' size)
 * never sits in memory at once. */
static const char EXPORT_BEGIN[] = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";
static const char EXPORT_DECLARE[] = "DECLARE bd_range_export NO SCROLL CURSOR FOR "
                                     "SELECT bucket, hashes FROM password_ranges ORDER BY bucket";
static const char EXPORT_FETCH[] = "FETCH 1000 FROM bd_range_export";

bd_result pg_range_export(bd_store *s, uint64_t *version, bd_range_bucket_cb cb, void *ctx)
{
    pg_store *p = pg_of(s);
    *version = 0;
    if (p->in_tx || p->in_read)
        return BD_ERR_INVALID;
    bd_result r = pg_exec(p, EXPORT_BEGIN);
    if (r != BD_OK)
        return r;
    pg_params pp = {0};
    pg_param_str(&pp, BD_RANGE_VERSION_KEY);
    PGresult *res;
    r = pg_run(p, &pg_meta_get_stmt, &pp, &res);
    if (r == BD_OK) {
        *version = PQntuples(res) == 1 ? strtoull(PQgetvalue(res, 0, 0), NULL, 10) : 0;
        PQclear(res);
        r = pg_exec(p, EXPORT_DECLARE);
    }
    for (bool more = true; r == BD_OK && more;) {
        pg_params fetch = {.result_format = 1};
        r = pg_run_sql(p, EXPORT_FETCH, &fetch, false, &res);
        if (r != BD_OK)
            break;
        int n = PQntuples(res);
        more = n > 0;
        for (int i = 0; i < n && more; i++)
            more = cb(ctx, be32(PQgetvalue(res, i, 0)), (const uint8_t *)PQgetvalue(res, i, 1),
                      (size_t)PQgetlength(res, i, 1)) == 0;
        PQclear(res);
    }
    if (r == BD_OK)
        return pg_exec(p, "COMMIT");
    if (PQstatus(p->conn) == CONNECTION_OK && PQtransactionStatus(p->conn) != PQTRANS_IDLE)
        PQclear(PQexec(p->conn, "ROLLBACK"));
    return r;
}

bd_result pg_range_flush(pg_store *p)
{
    bd_result r = pg_copy_flush(p); /* a move adds the hashes of its records */
    if (r != BD_OK || p->ranges.n == 0)
        return r;
    bd_range_acc_sort(&p->ranges);
    bd_buf keys;
    bd_buf_init(&keys, SIZE_MAX / 2);
    flush_io f = {.p = p};
    r = key_list(&p->ranges, &keys);
    pg_params pp = {.result_format = 1};
    pg_param_str(&pp, keys.data);
    if (r == BD_OK)
        r = pg_run_sql(p, READ_BUCKETS, &pp, true, &f.stored);
    bd_buf_reset(&p->range_rows);
    bd_range_io io = {.read = read_bucket, .write = write_bucket, .ctx = &f};
    if (r == BD_OK)
        r = bd_range_acc_flush(&p->ranges, &io);
    bool none_stored = r == BD_OK && PQntuples(f.stored) == 0;
    PQclear(f.stored);
    bd_buf_free(&keys);
    if (r == BD_OK)
        r = copy_rows(p, none_stored);
    if (r == BD_OK && !none_stored)
        r = pg_exec(p, STAGE_MOVE);
    if (r == BD_OK)
        r = pg_exec(p, VERSION_BUMP);
    bd_buf_reset(&p->range_rows);
    return r;
}
