/* Watches and the alerts outbox on PostgreSQL (store.h, "watches and alerts"). Watch
 * changes are writes like key changes (the writer lock, the data version); the outbox's
 * lease and settle are one statement each outside any transaction, without the writer
 * lock, so delivery never waits for an import. Several servers lease with FOR UPDATE SKIP
 * LOCKED: each due alert goes to one of them. */
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "store/pg/pg_impl.h"

#define ALERT_COLUMNS                                                                              \
    "a.seq, a.event_id, a.watch_id, a.key_id, a.watch_type, a.watch_shown, a.breach_uuid, "        \
    "a.breach_name, a.matched, a.identities, a.created_at, a.attempts, a.state, a.key_seq"

/* A new watch's id: random, 1 to 2^53 - 1 (exact as a JSON number), so that an id tells
 * nothing of the watches other keys hold (a sequence would count them). */
static int64_t random_watch_id(void)
{
    uint64_t v;
    randombytes_buf(&v, sizeof v);
    v &= (UINT64_C(1) << 53) - 1;
    return v ? (int64_t)v : 1;
}

bd_result pg_watch_add(bd_store *s, const bd_watch_row *w, int64_t max_per_key, int64_t *id)
{
    pg_store *p = pg_of(s);
    bool own;
    bd_result r = pg_write_begin(p, &own);
    if (r != BD_OK)
        return r;
    pg_params pp = {0};
    pg_param_int(&pp, w->key_id);
    PGresult *res;
    r = pg_run_sql(p, "SELECT count(*) FROM watches WHERE key_id = $1::bigint", &pp, true, &res);
    if (r == BD_OK) {
        if (max_per_key > 0 && pg_int(res, 0, 0) >= max_per_key)
            r = BD_ERR_LIMIT;
        PQclear(res);
    }
    /* an id no watch has (under the writer lock: no one takes it meanwhile) */
    int64_t new_id = 0;
    for (int tries = 0; r == BD_OK && new_id == 0 && tries < 8; tries++) {
        new_id = random_watch_id();
        pp = (pg_params){0};
        pg_param_int(&pp, new_id);
        r = pg_run_sql(p, "SELECT count(*) FROM watches WHERE id = $1::bigint", &pp, true, &res);
        if (r == BD_OK) {
            if (pg_int(res, 0, 0) > 0)
                new_id = 0;
            PQclear(res);
        }
    }
    if (r == BD_OK && new_id == 0)
        r = BD_ERR_STORE;
    if (r == BD_OK) {
        pp = (pg_params){0};
        pg_param_int(&pp, w->key_id);
        pg_param_int(&pp, w->type);
        pg_param_text(&pp, w->key);
        pg_param_text(&pp, w->shown);
        pg_param_text(&pp, w->url);
        pg_param_text(&pp, w->secret);
        pg_param_int(&pp, new_id);
        pg_param_int(&pp, w->format);
        r = pg_run_sql(p,
                       "INSERT INTO watches(id, key_id, type, key, shown, url, secret, "
                       "created_at, format) VALUES ($7::bigint, $1::bigint, $2::integer, $3, $4, "
                       "$5, $6, extract(epoch FROM now())::bigint, $8::integer) "
                       "ON CONFLICT (key_id, type, key, url) DO NOTHING RETURNING id",
                       &pp, true, &res);
    }
    if (r == BD_OK) {
        if (PQntuples(res) == 1)
            *id = pg_int(res, 0, 0);
        else
            r = BD_ERR_EXISTS;
        PQclear(res);
    }
    if (r == BD_OK)
        r = pg_run_sql(p,
                       "UPDATE meta SET value = (value::bigint + 1)::text "
                       "WHERE key = 'watch_generation'",
                       NULL, true, NULL);
    return pg_write_end(p, own, r);
}

bd_result pg_watch_list(bd_store *s, int64_t key_id, int64_t live_at, bd_watch_cb cb,
                        void *ctx)
{
    pg_params pp = {0};
    pg_param_int(&pp, key_id);
    pg_param_int(&pp, live_at);
    PGresult *res;
    bd_result r = pg_run_sql(pg_of(s),
                             "SELECT id, key_id, type, key, shown, url, secret, created_at, "
                             "format FROM watches WHERE ($1::bigint = 0 OR key_id = $1::bigint) "
                             "AND ($2::bigint = 0 OR key_id IN (SELECT id FROM api_keys "
                             "WHERE revoked_at = 0 AND (expires_at = 0 "
                             "OR expires_at > $2::bigint))) ORDER BY id",
                             &pp, true, &res);
    if (r != BD_OK)
        return r;
    for (int i = 0, n = PQntuples(res); i < n; i++) {
        bd_watch_row w = {
            .id = pg_int(res, i, 0),
            .key_id = pg_int(res, i, 1),
            .type = (int)pg_int(res, i, 2),
            .key = pg_slice(res, i, 3),
            .shown = pg_slice(res, i, 4),
            .url = pg_slice(res, i, 5),
            .secret = pg_slice(res, i, 6),
            .created_at = pg_int(res, i, 7),
            .format = (int)pg_int(res, i, 8),
        };
        if (cb(ctx, &w))
            break;
    }
    PQclear(res);
    return BD_OK;
}

bd_result pg_watch_remove(bd_store *s, int64_t key_id, int64_t id)
{
    pg_store *p = pg_of(s);
    bool own;
    bd_result r = pg_write_begin(p, &own);
    if (r != BD_OK)
        return r;
    pg_params pp = {0};
    pg_param_int(&pp, id);
    pg_param_int(&pp, key_id);
    PGresult *res;
    r = pg_run_sql(p,
                   "DELETE FROM watches WHERE id = $1::bigint "
                   "AND ($2::bigint = 0 OR key_id = $2::bigint)",
                   &pp, true, &res);
    if (r == BD_OK) {
        if (pg_changes(res) == 0)
            r = BD_ERR_NOT_FOUND;
        PQclear(res);
    }
    if (r == BD_OK) {
        pp = (pg_params){0};
        pg_param_int(&pp, id);
        r = pg_run_sql(p, "UPDATE alerts SET state = 2 WHERE watch_id = $1::bigint AND state = 0",
                       &pp, true, NULL);
    }
    if (r == BD_OK)
        r = pg_run_sql(p,
                       "UPDATE meta SET value = (value::bigint + 1)::text "
                       "WHERE key = 'watch_generation'",
                       NULL, true, NULL);
    return pg_write_end(p, own, r);
}

bd_result pg_watch_generation(bd_store *s, int64_t *gen)
{
    PGresult *res;
    bd_result r = pg_run_sql(pg_of(s), "SELECT value FROM meta WHERE key = 'watch_generation'",
                             NULL, true, &res);
    *gen = 0;
    if (r != BD_OK)
        return r;
    if (PQntuples(res) == 1)
        *gen = pg_int(res, 0, 0);
    PQclear(res);
    return BD_OK;
}

bd_result pg_alert_add(bd_store *s, const bd_alert_in *a)
{
    if (!pg_of(s)->in_tx)
        return BD_ERR_INVALID; /* an alert lands with the rows that caused it */
    pg_params pp = {0};
    pg_param_str(&pp, a->event_id);
    pg_param_int(&pp, a->watch_id);
    pg_param_int(&pp, a->key_id);
    pg_param_int(&pp, a->watch_type);
    pg_param_text(&pp, a->watch_shown);
    pg_param_int(&pp, a->breach_id);
    pg_param_int(&pp, a->matched);
    pg_param_text(&pp, a->identities);
    pg_param_int(&pp, a->created_at);
    /* with the key's next cursor (the row lock orders them as the imports commit) */
    return pg_run_sql(pg_of(s),
                      "WITH c AS (INSERT INTO alert_cursors(key_id, last) "
                      "VALUES ($3::bigint, 1) ON CONFLICT (key_id) "
                      "DO UPDATE SET last = alert_cursors.last + 1 RETURNING last) "
                      "INSERT INTO alerts(event_id, watch_id, key_id, watch_type, watch_shown, "
                      "breach_uuid, breach_name, matched, identities, created_at, "
                      "next_attempt_ms, key_seq) SELECT $1, $2::bigint, $3::bigint, "
                      "$4::integer, $5, b.uuid::text, b.name, $7::bigint, $8, $9::bigint, 0, "
                      "c.last FROM c LEFT JOIN breaches b ON b.id = $6::bigint",
                      &pp, true, NULL);
}

static bd_alert_row alert_of(const PGresult *res, int i)
{
    return (bd_alert_row){
        .seq = pg_int(res, i, 0),
        .event_id = pg_slice(res, i, 1),
        .watch_id = pg_int(res, i, 2),
        .key_id = pg_int(res, i, 3),
        .watch_type = (int)pg_int(res, i, 4),
        .watch_shown = pg_slice(res, i, 5),
        .breach_uuid = pg_slice(res, i, 6),
        .breach_name = pg_slice(res, i, 7),
        .matched = pg_int(res, i, 8),
        .identities = pg_slice(res, i, 9),
        .created_at = pg_int(res, i, 10),
        .attempts = pg_int(res, i, 11),
        .state = (bd_alert_state)pg_int(res, i, 12),
        .cursor = pg_int(res, i, 13),
    };
}

bd_result pg_alert_list(bd_store *s, int64_t key_id, int64_t after, int limit, bd_alert_cb cb,
                        void *ctx)
{
    pg_params pp = {0};
    pg_param_int(&pp, key_id);
    pg_param_int(&pp, after);
    pg_param_int(&pp, limit);
    PGresult *res;
    bd_result r = pg_run_sql(pg_of(s),
                             "SELECT " ALERT_COLUMNS ", a.triage FROM alerts a WHERE a.key_id = $1::bigint "
                             "AND a.key_seq > $2::bigint ORDER BY a.key_seq LIMIT $3::bigint",
                             &pp, true, &res);
    if (r != BD_OK)
        return r;
    for (int i = 0, n = PQntuples(res); i < n; i++) {
        bd_alert_row a = alert_of(res, i);
        a.triage = (int)pg_int(res, i, 14);
        if (cb(ctx, &a))
            break;
    }
    PQclear(res);
    return BD_OK;
}

bd_result pg_alert_lease(bd_store *s, int64_t now_ms, int64_t lease_ms, int limit, bd_alert_cb cb,
                         void *ctx)
{
    pg_params pp = {0};
    pg_param_int(&pp, now_ms);
    pg_param_int(&pp, now_ms + lease_ms);
    pg_param_int(&pp, limit);
    pg_param_int(&pp, now_ms / 1000);
    PGresult *res;
    /* An alert whose key is revoked, expired or gone is given up (state 2) in passing, not
     * leased. */
    bd_result r = pg_run_sql(
        pg_of(s),
        "WITH due AS (SELECT d.seq, k.id IS NOT NULL AND k.revoked_at = 0 AND "
        "(k.expires_at = 0 OR k.expires_at > $4::bigint) AS live FROM alerts d "
        "LEFT JOIN api_keys k ON k.id = d.key_id WHERE d.state = 0 "
        "AND d.next_attempt_ms <= $1::bigint AND d.lease_until_ms <= $1::bigint "
        "ORDER BY d.next_attempt_ms, d.seq LIMIT $3::bigint FOR UPDATE OF d SKIP LOCKED), "
        "a AS (UPDATE alerts u SET lease_until_ms = CASE WHEN due.live THEN $2::bigint ELSE 0 END, "
        "state = CASE WHEN due.live THEN 0 ELSE 2 END FROM due WHERE u.seq = due.seq "
        "RETURNING u.*) "
        "SELECT " ALERT_COLUMNS ", w.url, w.secret, w.format FROM a "
        "JOIN watches w ON w.id = a.watch_id "
        "WHERE a.state = 0 ORDER BY a.seq",
        &pp, true, &res);
    if (r != BD_OK)
        return r;
    for (int i = 0, n = PQntuples(res); i < n; i++) {
        bd_alert_row a = alert_of(res, i);
        a.url = pg_slice(res, i, 14);
        a.secret = pg_slice(res, i, 15);
        a.format = (int)pg_int(res, i, 16);
        cb(ctx, &a);
    }
    PQclear(res);
    return BD_OK;
}

bd_result pg_alert_settle(bd_store *s, int64_t seq, bd_alert_state state, int64_t attempts,
                          int64_t next_ms)
{
    pg_params pp = {0};
    pg_param_int(&pp, seq);
    pg_param_int(&pp, (int64_t)state);
    pg_param_int(&pp, attempts);
    pg_param_int(&pp, next_ms);
    return pg_run_sql(pg_of(s),
                      "UPDATE alerts SET state = $2::integer, attempts = $3::bigint, "
                      "next_attempt_ms = $4::bigint, lease_until_ms = 0 "
                      "WHERE seq = $1::bigint AND state = 0",
                      &pp, true, NULL);
}

bd_result pg_alert_prune(bd_store *s, int64_t before_s, int limit, int64_t *removed)
{
    pg_params pp = {0};
    pg_param_int(&pp, before_s);
    pg_param_int(&pp, limit);
    PGresult *res;
    bd_result r = pg_run_sql(pg_of(s),
                             "DELETE FROM alerts WHERE seq IN (SELECT seq FROM alerts "
                             "WHERE state <> 0 AND created_at < $1::bigint ORDER BY seq "
                             "LIMIT $2::integer)",
                             &pp, true, &res);
    if (r == BD_OK) {
        *removed = pg_changes(res);
        PQclear(res);
    }
    return r;
}

void pg_on_landed(bd_store *s, bd_landed_cb cb, void *ctx)
{
    pg_store *p = pg_of(s);
    p->landed = cb;
    p->landed_ctx = ctx;
}

bd_result pg_flush(bd_store *s)
{
    return pg_copy_flush(pg_of(s));
}

bd_result pg_alerts_erase_email(pg_store *p, const char *email)
{
    bd_buf quoted; /* the email as a JSON string, as the identities hold it */
    bd_buf_init(&quoted, 4 * 1024);
    bd_json w;
    bd_json_init(&w, &quoted);
    bd_json_string(&w, bd_slice_from(email));
    bd_result r = bd_json_result(&w);
    if (r == BD_OK) {
        pg_params pp = {0};
        pg_param_text(&pp, (bd_slice){quoted.data, quoted.len});
        r = pg_run_sql(p,
                       "UPDATE alerts SET identities = replace(identities, $1, '\"[erased]\"') "
                       "WHERE strpos(identities, $1) > 0",
                       &pp, true, NULL);
    }
    bd_buf_free(&quoted);
    return r;
}

bd_result pg_alerts_erase_breach(pg_store *p, const char *uuid)
{
    pg_params pp = {0};
    pg_param_str(&pp, uuid);
    return pg_run_sql(p,
                      "UPDATE alerts SET identities = '[]', breach_name = NULL "
                      "WHERE breach_uuid = $1",
                      &pp, true, NULL);
}
