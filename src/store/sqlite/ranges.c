/* Password ranges on SQLite: the password_ranges table (schema.c, migration 7) holds one
 * blob per bucket, keyed by rowid (layout: src/store/ranges.h). Writes are accumulated per
 * transaction and merged bucket by bucket before the commit (sq_commit), so a batch of
 * records rewrites each touched bucket once. */
#include <string.h>

#include "store/sqlite/sqlite_impl.h"
#include "store/sqlite/statements.h"

bd_result sq_range_get(bd_store *base, bd_range_mode mode, uint32_t prefix, bd_range_cb cb,
                       void *ctx)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st = sq_fixed(s, Q_RANGE_GET);
    if (!st)
        return BD_ERR_STORE;
    uint32_t key = BD_RANGE_KEY(mode, prefix);
    sqlite3_bind_int64(st, 1, key);
    int rc = sqlite3_step(st);
    bd_result r = sq_map_rc(rc);
    if (rc == SQLITE_ROW) {
        const uint8_t *blob = sqlite3_column_blob(st, 0);
        r = bd_range_decode(key, blob, (size_t)sqlite3_column_bytes(st, 0), cb, ctx);
    }
    sq_done(st);
    return r;
}

bd_result sq_range_load(bd_store *base, bd_range_mode mode, const uint8_t *hash, uint32_t count)
{
    sqlite_store *s = S(base);
    if (sqlite3_get_autocommit(s->db))
        return BD_ERR_INVALID;
    bd_result r = bd_range_acc_add(&s->ranges, mode, hash, count, BD_RANGE_MAX);
    if (r == BD_OK && s->ranges.n >= BD_RANGE_ACC_FLUSH)
        r = sq_range_flush(s);
    return r;
}

static bd_result read_bucket(void *ctx, uint32_t key, const uint8_t **blob, size_t *len)
{
    sqlite_store *s = ctx;
    sqlite3_stmt *st = sq_fixed(s, Q_RANGE_GET);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_int64(st, 1, key);
    int rc = sqlite3_step(st);
    *blob = NULL;
    *len = 0;
    if (rc == SQLITE_ROW) { /* copied: the statement is reset before the write */
        bd_buf *b = &s->range_blob;
        bd_buf_reset(b);
        bd_result r =
            bd_buf_append(b, sqlite3_column_blob(st, 0), (size_t)sqlite3_column_bytes(st, 0));
        sq_done(st);
        *blob = (const uint8_t *)b->data;
        *len = b->len;
        return r;
    }
    sq_done(st);
    return sq_map_rc(rc);
}

static bd_result write_bucket(void *ctx, uint32_t key, const uint8_t *blob, size_t len)
{
    sqlite_store *s = ctx;
    sqlite3_stmt *st = sq_fixed(s, Q_RANGE_PUT);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_int64(st, 1, key);
    sqlite3_bind_blob(st, 2, len ? (const void *)blob : "", (int)len, SQLITE_STATIC);
    return sq_step_done(s, st);
}

bd_result sq_range_flush(sqlite_store *s)
{
    if (s->ranges.n == 0)
        return BD_OK;
    bd_range_io io = {.read = read_bucket, .write = write_bucket, .ctx = s};
    bd_result r = bd_range_acc_flush(&s->ranges, &io);
    if (r != BD_OK)
        return r;
    /* the range version (bd_store_range_version) moves in the same transaction */
    int rc = sqlite3_exec(s->db,
                          "INSERT INTO meta(key, value) VALUES ('" BD_RANGE_VERSION_KEY "', '1') "
                          "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1",
                          NULL, NULL, NULL);
    return rc == SQLITE_OK ? BD_OK : sq_map_rc(rc);
}
