/* The SQLite backend's watches (store.h, "watches and alerts") and the landed hook imports
 * match them through. Watches change in write transactions like keys; the alerts they raise,
 * and how delivery avoids the writer lock, are alerts.c's. */
#include <sodium.h>
#include <stdlib.h>

#include "store/sqlite/sqlite_impl.h"
#include "store/sqlite/statements.h"

#define WATCH_COLUMNS "id, key_id, type, key, shown, url, secret, created_at, format"

/* Runs body inside a transaction: the open one, or one of its own. */
static bool own_begin(sqlite_store *s, bd_result *r)
{
    bool own = sqlite3_get_autocommit(s->db) != 0;
    *r = own ? sq_run_fixed(s, Q_BEGIN) : BD_OK;
    return own;
}

static bd_result own_end(sqlite_store *s, bool own, bd_result r)
{
    if (!own)
        return r;
    if (r == BD_OK)
        r = sq_run_fixed(s, Q_COMMIT);
    if (r != BD_OK && !sqlite3_get_autocommit(s->db))
        sq_run_fixed(s, Q_ROLLBACK);
    return r;
}

static bd_result bump(sqlite_store *s)
{
    sqlite3_stmt *st;
    bd_result r = sq_run_dynamic(s,
                                 "UPDATE meta SET value = CAST(value AS INTEGER) + 1 "
                                 "WHERE key = 'watch_generation'",
                                 &st);
    return r == BD_OK ? sq_step_done(s, st) : r;
}

/* A new watch's id: random, 1 to 2^53 - 1 (exact as a JSON number), so that an id tells
 * nothing of the watches other keys hold (a sequence would count them). */
static int64_t random_watch_id(void)
{
    uint64_t v;
    randombytes_buf(&v, sizeof v);
    v &= (UINT64_C(1) << 53) - 1;
    return v ? (int64_t)v : 1;
}

bd_result sq_watch_add(bd_store *base, const bd_watch_row *w, int64_t max_per_key, int64_t *id)
{
    sqlite_store *s = S(base);
    bd_result r;
    bool own = own_begin(s, &r);
    sqlite3_stmt *st = NULL;
    if (r == BD_OK)
        r = sq_run_dynamic(s, "SELECT count(*) FROM watches WHERE key_id = ?1", &st);
    int64_t n = 0;
    if (r == BD_OK) {
        sqlite3_bind_int64(st, 1, w->key_id);
        r = sq_step_count(st, &n);
    }
    if (r == BD_OK && max_per_key > 0 && n >= max_per_key)
        r = BD_ERR_LIMIT;
    /* an id no watch has (inside the write transaction: no one takes it meanwhile) */
    int64_t new_id = 0;
    for (int tries = 0; r == BD_OK && new_id == 0 && tries < 8; tries++) {
        new_id = random_watch_id();
        r = sq_run_dynamic(s, "SELECT count(*) FROM watches WHERE id = ?1", &st);
        if (r == BD_OK) {
            sqlite3_bind_int64(st, 1, new_id);
            r = sq_step_count(st, &n);
        }
        if (r == BD_OK && n > 0)
            new_id = 0;
    }
    if (r == BD_OK && new_id == 0)
        r = BD_ERR_STORE;
    if (r == BD_OK)
        r = sq_run_dynamic(s,
                           "INSERT INTO watches(id, key_id, type, key, shown, url, secret, "
                           "created_at, format) VALUES (?7, ?1, ?2, ?3, ?4, ?5, ?6, "
                           "CAST(strftime('%s','now') AS INTEGER), ?8) "
                           "ON CONFLICT(key_id, type, key, url) DO NOTHING",
                           &st);
    if (r == BD_OK) {
        sqlite3_bind_int64(st, 7, new_id);
        sqlite3_bind_int64(st, 1, w->key_id);
        sqlite3_bind_int(st, 2, w->type);
        sq_bind_slice(st, 3, w->key);
        sq_bind_slice(st, 4, w->shown);
        sq_bind_slice(st, 5, w->url);
        sq_bind_slice(st, 6, w->secret);
        sqlite3_bind_int(st, 8, w->format);
        r = sq_step_done(s, st);
    }
    if (r == BD_OK && sqlite3_changes(s->db) == 0)
        r = BD_ERR_EXISTS;
    if (r == BD_OK) {
        *id = new_id;
        r = bump(s);
    }
    return own_end(s, own, r);
}

bd_result sq_watch_list(bd_store *base, int64_t key_id, int64_t live_at, bd_watch_cb cb, void *ctx)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st;
    bd_result r = sq_run_dynamic(s,
                                 "SELECT " WATCH_COLUMNS " FROM watches "
                                 "WHERE (?1 = 0 OR key_id = ?1) AND (?2 = 0 OR key_id IN "
                                 "(SELECT id FROM api_keys WHERE revoked_at = 0 "
                                 "AND (expires_at = 0 OR expires_at > ?2))) ORDER BY id",
                                 &st);
    if (r != BD_OK)
        return r;
    sqlite3_bind_int64(st, 1, key_id);
    sqlite3_bind_int64(st, 2, live_at);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        bd_watch_row w = {
            .id = sqlite3_column_int64(st, 0),
            .key_id = sqlite3_column_int64(st, 1),
            .type = sqlite3_column_int(st, 2),
            .key = sq_col_slice(st, 3),
            .shown = sq_col_slice(st, 4),
            .url = sq_col_slice(st, 5),
            .secret = sq_col_slice(st, 6),
            .created_at = sqlite3_column_int64(st, 7),
            .format = sqlite3_column_int(st, 8),
        };
        if (cb(ctx, &w))
            break;
    }
    r = rc == SQLITE_ROW || rc == SQLITE_DONE ? BD_OK : sq_map_rc(rc);
    sq_done(st);
    return r;
}

bd_result sq_watch_remove(bd_store *base, int64_t key_id, int64_t id)
{
    sqlite_store *s = S(base);
    bd_result r;
    bool own = own_begin(s, &r);
    sqlite3_stmt *st = NULL;
    if (r == BD_OK)
        r = sq_run_dynamic(s, "DELETE FROM watches WHERE id = ?1 AND (?2 = 0 OR key_id = ?2)", &st);
    if (r == BD_OK) {
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_int64(st, 2, key_id);
        r = sq_step_done(s, st);
    }
    if (r == BD_OK && sqlite3_changes(s->db) == 0)
        r = BD_ERR_NOT_FOUND;
    if (r == BD_OK)
        r = sq_run_dynamic(s, "UPDATE alerts SET state = 2 WHERE watch_id = ?1 AND state = 0", &st);
    if (r == BD_OK) {
        sqlite3_bind_int64(st, 1, id);
        r = sq_step_done(s, st);
    }
    if (r == BD_OK)
        r = bump(s);
    return own_end(s, own, r);
}

bd_result sq_watch_generation(bd_store *base, int64_t *gen)
{
    char v[32];
    bd_result r = sq_meta_get(base, "watch_generation", v, sizeof v);
    *gen = r == BD_OK ? strtoll(v, NULL, 10) : 0;
    return r;
}

void sq_on_landed(bd_store *base, bd_landed_cb cb, void *ctx)
{
    sqlite_store *s = S(base);
    s->landed = cb;
    s->landed_ctx = ctx;
}

/* SQLite decides a row's fate at its put: nothing waits to land. */
bd_result sq_flush(bd_store *base)
{
    (void)base;
    return BD_OK;
}

void sq_landed_record(sqlite_store *s, int64_t breach_id, const bd_record_in *r)
{
    bd_landed_row l;
    bd_landed_of_record(r, breach_id, &l);
    s->landed(s->landed_ctx, &l);
}

void sq_landed_card(sqlite_store *s, const bd_card_in *c)
{
    bd_landed_row l;
    bd_landed_of_card(c, &l);
    s->landed(s->landed_ctx, &l);
}
