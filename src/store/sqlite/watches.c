/* The SQLite backend's watches and alerts outbox (store.h, "watches and alerts"). The
 * outbox's writes from a server (lease, settle) are short IMMEDIATE transactions of their
 * own, so they take their turn with an import's batches like the usage counters do. */
#include <stdlib.h>
#include <string.h>

#include "store/sqlite/sqlite_impl.h"

#define WATCH_COLUMNS "id, key_id, type, key, shown, url, secret, created_at"
#define ALERT_COLUMNS                                                                              \
    "a.seq, a.event_id, a.watch_id, a.key_id, a.watch_type, a.watch_shown, a.breach_uuid, "      \
    "a.breach_name, a.matched, a.identities, a.created_at, a.attempts, a.state"

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

static bd_result run_dynamic(sqlite_store *s, const char *sql, sqlite3_stmt **out)
{
    *out = sq_dynamic(s, sql);
    return *out ? BD_OK : BD_ERR_STORE;
}

static bd_result bump(sqlite_store *s)
{
    sqlite3_stmt *st;
    bd_result r = run_dynamic(s,
                              "UPDATE meta SET value = CAST(value AS INTEGER) + 1 "
                              "WHERE key = 'watch_generation'",
                              &st);
    return r == BD_OK ? sq_step_done(s, st) : r;
}

bd_result sq_watch_add(bd_store *base, const bd_watch_row *w, int64_t max_per_key, int64_t *id)
{
    sqlite_store *s = S(base);
    bd_result r;
    bool own = own_begin(s, &r);
    sqlite3_stmt *st = NULL;
    if (r == BD_OK)
        r = run_dynamic(s, "SELECT count(*) FROM watches WHERE key_id = ?1", &st);
    int64_t n = 0;
    if (r == BD_OK) {
        sqlite3_bind_int64(st, 1, w->key_id);
        r = sq_step_count(st, &n);
    }
    if (r == BD_OK && max_per_key > 0 && n >= max_per_key)
        r = BD_ERR_LIMIT;
    if (r == BD_OK)
        r = run_dynamic(s,
                        "INSERT INTO watches(key_id, type, key, shown, url, secret, created_at) "
                        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, CAST(strftime('%s','now') AS INTEGER)) "
                        "ON CONFLICT DO NOTHING",
                        &st);
    if (r == BD_OK) {
        sqlite3_bind_int64(st, 1, w->key_id);
        sqlite3_bind_int(st, 2, w->type);
        sq_bind_slice(st, 3, w->key);
        sq_bind_slice(st, 4, w->shown);
        sq_bind_slice(st, 5, w->url);
        sq_bind_slice(st, 6, w->secret);
        r = sq_step_done(s, st);
    }
    if (r == BD_OK && sqlite3_changes(s->db) == 0)
        r = BD_ERR_EXISTS;
    if (r == BD_OK) {
        *id = sqlite3_last_insert_rowid(s->db);
        r = bump(s);
    }
    return own_end(s, own, r);
}

bd_result sq_watch_list(bd_store *base, int64_t key_id, bd_watch_cb cb, void *ctx)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st;
    bd_result r = run_dynamic(s,
                              "SELECT " WATCH_COLUMNS " FROM watches "
                              "WHERE ?1 = 0 OR key_id = ?1 ORDER BY id",
                              &st);
    if (r != BD_OK)
        return r;
    sqlite3_bind_int64(st, 1, key_id);
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
        r = run_dynamic(s, "DELETE FROM watches WHERE id = ?1 AND (?2 = 0 OR key_id = ?2)", &st);
    if (r == BD_OK) {
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_int64(st, 2, key_id);
        r = sq_step_done(s, st);
    }
    if (r == BD_OK && sqlite3_changes(s->db) == 0)
        r = BD_ERR_NOT_FOUND;
    if (r == BD_OK)
        r = run_dynamic(s, "UPDATE alerts SET state = 2 WHERE watch_id = ?1 AND state = 0", &st);
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

bd_result sq_alert_add(bd_store *base, const bd_alert_in *a)
{
    sqlite_store *s = S(base);
    if (sqlite3_get_autocommit(s->db))
        return BD_ERR_INVALID;
    sqlite3_stmt *st;
    bd_result r = run_dynamic(
        s,
        "INSERT INTO alerts(event_id, watch_id, key_id, watch_type, watch_shown, breach_uuid, "
        "breach_name, matched, identities, created_at, next_attempt_ms) "
        "SELECT ?1, ?2, ?3, ?4, ?5, b.uuid, b.name, ?7, ?8, ?9, 0 "
        "FROM (SELECT 1) LEFT JOIN breaches b ON b.id = ?6",
        &st);
    if (r != BD_OK)
        return r;
    sqlite3_bind_text(st, 1, a->event_id, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, a->watch_id);
    sqlite3_bind_int64(st, 3, a->key_id);
    sqlite3_bind_int(st, 4, a->watch_type);
    sq_bind_slice(st, 5, a->watch_shown);
    sqlite3_bind_int64(st, 6, a->breach_id);
    sqlite3_bind_int64(st, 7, a->matched);
    sq_bind_slice(st, 8, a->identities);
    sqlite3_bind_int64(st, 9, a->created_at);
    return sq_step_done(s, st);
}

static bd_alert_row alert_of(sqlite3_stmt *st)
{
    return (bd_alert_row){
        .seq = sqlite3_column_int64(st, 0),
        .event_id = sq_col_slice(st, 1),
        .watch_id = sqlite3_column_int64(st, 2),
        .key_id = sqlite3_column_int64(st, 3),
        .watch_type = sqlite3_column_int(st, 4),
        .watch_shown = sq_col_slice(st, 5),
        .breach_uuid = sq_col_slice(st, 6),
        .breach_name = sq_col_slice(st, 7),
        .matched = sqlite3_column_int64(st, 8),
        .identities = sq_col_slice(st, 9),
        .created_at = sqlite3_column_int64(st, 10),
        .attempts = sqlite3_column_int64(st, 11),
        .state = (bd_alert_state)sqlite3_column_int(st, 12),
    };
}

bd_result sq_alert_list(bd_store *base, int64_t key_id, int64_t after, int limit, bd_alert_cb cb,
                        void *ctx)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st;
    bd_result r = run_dynamic(s,
                              "SELECT " ALERT_COLUMNS " FROM alerts a "
                              "WHERE a.key_id = ?1 AND a.seq > ?2 ORDER BY a.seq LIMIT ?3",
                              &st);
    if (r != BD_OK)
        return r;
    sqlite3_bind_int64(st, 1, key_id);
    sqlite3_bind_int64(st, 2, after);
    sqlite3_bind_int(st, 3, limit);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        bd_alert_row a = alert_of(st);
        if (cb(ctx, &a))
            break;
    }
    r = rc == SQLITE_ROW || rc == SQLITE_DONE ? BD_OK : sq_map_rc(rc);
    sq_done(st);
    return r;
}

/* One writer at a time holds the file, so a lease needs no row locks: the due alerts are
 * read and leased in one IMMEDIATE transaction. */
bd_result sq_alert_lease(bd_store *base, int64_t now_ms, int64_t lease_ms, int limit,
                         bd_alert_cb cb, void *ctx)
{
    sqlite_store *s = S(base);
    if (!sqlite3_get_autocommit(s->db))
        return BD_ERR_INVALID;
    sqlite3_stmt *st;
    /* A look without the writer lock first: an idle outbox costs no write transaction. */
    bd_result r = run_dynamic(s,
                              "SELECT count(*) FROM (SELECT 1 FROM alerts WHERE state = 0 "
                              "AND next_attempt_ms <= ?1 AND lease_until_ms <= ?1 LIMIT 1)",
                              &st);
    int64_t due = 0;
    if (r == BD_OK) {
        sqlite3_bind_int64(st, 1, now_ms);
        r = sq_step_count(st, &due);
    }
    if (r != BD_OK || due == 0)
        return r;
    r = sq_run_fixed(s, Q_BEGIN);
    if (r == BD_OK)
        r = run_dynamic(s,
                        "UPDATE alerts SET lease_until_ms = ?2 WHERE seq IN (SELECT seq FROM "
                        "alerts WHERE state = 0 AND next_attempt_ms <= ?1 AND lease_until_ms "
                        "<= ?1 ORDER BY next_attempt_ms, seq LIMIT ?3)",
                        &st);
    if (r == BD_OK) {
        sqlite3_bind_int64(st, 1, now_ms);
        sqlite3_bind_int64(st, 2, now_ms + lease_ms);
        sqlite3_bind_int(st, 3, limit);
        r = sq_step_done(s, st);
    }
    if (r == BD_OK)
        r = run_dynamic(s,
                        "SELECT " ALERT_COLUMNS ", w.url, w.secret FROM alerts a "
                        "JOIN watches w ON w.id = a.watch_id "
                        "WHERE a.state = 0 AND a.lease_until_ms = ?1 ORDER BY a.seq",
                        &st);
    if (r == BD_OK) {
        sqlite3_bind_int64(st, 1, now_ms + lease_ms);
        int rc;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            bd_alert_row a = alert_of(st);
            a.url = sq_col_slice(st, 13);
            a.secret = sq_col_slice(st, 14);
            cb(ctx, &a);
        }
        r = rc == SQLITE_DONE ? BD_OK : sq_map_rc(rc);
        sq_done(st);
    }
    return own_end(s, true, r);
}

bd_result sq_alert_settle(bd_store *base, int64_t seq, bd_alert_state state, int64_t attempts,
                          int64_t next_ms)
{
    sqlite_store *s = S(base);
    bd_result r;
    bool own = own_begin(s, &r);
    sqlite3_stmt *st = NULL;
    if (r == BD_OK)
        r = run_dynamic(s,
                        "UPDATE alerts SET state = ?2, attempts = ?3, next_attempt_ms = ?4, "
                        "lease_until_ms = 0 WHERE seq = ?1 AND state = 0",
                        &st);
    if (r == BD_OK) {
        sqlite3_bind_int64(st, 1, seq);
        sqlite3_bind_int(st, 2, (int)state);
        sqlite3_bind_int64(st, 3, attempts);
        sqlite3_bind_int64(st, 4, next_ms);
        r = sq_step_done(s, st);
    }
    return own_end(s, own, r);
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
