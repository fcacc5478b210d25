/* The SQLite backend's alerts (store.h, "watches and alerts"): their outbox and delivery. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <unistd.h>

#include "core/json.h"
#include "store/sqlite/sqlite_impl.h"
#include "store/sqlite/statements.h"

#define ALERT_COLUMNS                                                                              \
    "a.seq, a.event_id, a.watch_id, a.key_id, a.watch_type, a.watch_shown, a.breach_uuid, "        \
    "a.breach_name, a.matched, a.identities, a.created_at, a.attempts, a.state, a.key_seq"

/* Commits the write transaction begun for r's work, or rolls it back when r failed. */
static bd_result end_write(sqlite_store *s, bd_result r)
{
    if (r == BD_OK)
        r = sq_run_fixed(s, Q_COMMIT);
    if (r != BD_OK && !sqlite3_get_autocommit(s->db))
        sq_run_fixed(s, Q_ROLLBACK);
    return r;
}

bd_result sq_alert_add(bd_store *base, const bd_alert_in *a)
{
    sqlite_store *s = S(base);
    if (sqlite3_get_autocommit(s->db))
        return BD_ERR_INVALID;
    sqlite3_stmt *st;
    /* the key's next cursor (the writer lock orders them as the imports commit) */
    bd_result r = sq_run_dynamic(s,
                                 "INSERT INTO alert_cursors(key_id, last) VALUES (?1, 1) "
                                 "ON CONFLICT(key_id) DO UPDATE SET last = last + 1",
                                 &st);
    if (r == BD_OK) {
        sqlite3_bind_int64(st, 1, a->key_id);
        r = sq_step_done(s, st);
    }
    if (r == BD_OK)
        r = sq_run_dynamic(
            s,
            "INSERT INTO alerts(event_id, watch_id, key_id, watch_type, watch_shown, "
            "breach_uuid, breach_name, matched, identities, created_at, next_attempt_ms, "
            "key_seq) SELECT ?1, ?2, ?3, ?4, ?5, b.uuid, b.name, ?7, ?8, ?9, 0, c.last "
            "FROM alert_cursors c LEFT JOIN breaches b ON b.id = ?6 WHERE c.key_id = ?3",
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
        .cursor = sqlite3_column_int64(st, 13),
    };
}

bd_result sq_alert_list(bd_store *base, int64_t key_id, int64_t after, int limit, bd_alert_cb cb,
                        void *ctx)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st;
    bd_result r = sq_run_dynamic(s,
                                 "SELECT " ALERT_COLUMNS ", a.triage FROM alerts a "
                                 "WHERE a.key_id = ?1 AND a.key_seq > ?2 ORDER BY a.key_seq "
                                 "LIMIT ?3",
                                 &st);
    if (r != BD_OK)
        return r;
    sqlite3_bind_int64(st, 1, key_id);
    sqlite3_bind_int64(st, 2, after);
    sqlite3_bind_int(st, 3, limit);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        bd_alert_row a = alert_of(st);
        a.triage = sqlite3_column_int(st, 14);
        if (cb(ctx, &a))
            break;
    }
    r = rc == SQLITE_ROW || rc == SQLITE_DONE ? BD_OK : sq_map_rc(rc);
    sq_done(st);
    return r;
}

/* Delivery on SQLite. The file has one writer at a time, and an import holds that lock for
 * a whole batch (a second or more) and takes it again at once: a delivery that needed it to
 * lease or settle an alert waited for the import's end (measured: p99 13 s from commit to
 * webhook during a 1M-record import). So nothing on the delivery path waits for the lock:
 *   - one connection per store file delivers at a time, chosen by an advisory lock (flock)
 *     on "<file>-webhooks.lock"; another process's connection leases nothing until the
 *     holder exits (the kernel drops the lock with it);
 *   - a lease reads the due alerts without a write (WAL: readers never wait);
 *   - a settled outcome is kept in the connection's memory and written, with all others
 *     kept, in one write transaction that is tried without waiting (busy timeout 0) at each
 *     lease and settle; until it lands, the kept outcome is what the lease goes by;
 *   - an alert leased and not yet settled is held in the connection's memory, so a second
 *     lease (the deliverer's other senders) passes it by, as a lease row would.
 * An outcome lost with the process means the alert is sent again: at least once. */
#define KEPT_MAX 4096
#define HELD_MAX 64

typedef struct {
    int64_t seq, attempts, next_ms;
    bd_alert_state state;
} kept_outcome;

struct sq_outbox {
    int lock_fd; /* -1: not tried yet; -2: could not open */
    bool holder;
    kept_outcome kept[KEPT_MAX];
    int nkept;
    int64_t held[HELD_MAX]; /* leased, not settled */
    int nheld;
};

static bool held(const sq_outbox *o, int64_t seq)
{
    for (int i = 0; i < o->nheld; i++)
        if (o->held[i] == seq)
            return true;
    return false;
}

static void release(sq_outbox *o, int64_t seq)
{
    for (int i = 0; i < o->nheld; i++)
        if (o->held[i] == seq) {
            o->held[i] = o->held[--o->nheld];
            return;
        }
}

static const kept_outcome *kept_of(const sq_outbox *o, int64_t seq)
{
    for (int i = 0; i < o->nkept; i++)
        if (o->kept[i].seq == seq)
            return &o->kept[i];
    return NULL;
}

/* Keeps the outcome of seq to be written; false when there is no room for it. */
static bool keep_outcome(sq_outbox *o, int64_t seq, bd_alert_state state, int64_t attempts,
                         int64_t next_ms)
{
    kept_outcome *k = (kept_outcome *)kept_of(o, seq);
    if (!k && o->nkept == KEPT_MAX)
        return false;
    if (!k)
        k = &o->kept[o->nkept++];
    *k = (kept_outcome){.seq = seq, .attempts = attempts, .next_ms = next_ms, .state = state};
    return true;
}

/* Whether this connection is the store's deliverer (taking the lock when it is free). */
static bool deliverer(sqlite_store *s, sq_outbox *o)
{
    if (o->holder)
        return true;
    if (o->lock_fd == -1) {
        const char *file = sqlite3_db_filename(s->db, "main");
        char path[4200];
        if (!file || !*file ||
            snprintf(path, sizeof path, "%s-webhooks.lock", file) >= (int)sizeof path) {
            o->lock_fd = -2;
            return false;
        }
        o->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (o->lock_fd < 0)
            o->lock_fd = -2;
    }
    o->holder = o->lock_fd >= 0 && flock(o->lock_fd, LOCK_EX | LOCK_NB) == 0;
    return o->holder;
}

/* Begins a write transaction if the file's writer lock is free now (*begun), without
 * waiting for it: the lock being taken is the common case during an import. */
static bd_result begin_if_free(sqlite_store *s, bool *begun)
{
    *begun = false;
    sqlite3_stmt *begin = sq_fixed(s, Q_BEGIN);
    if (!begin)
        return BD_ERR_STORE;
    sqlite3_busy_timeout(s->db, 0);
    int rc = sqlite3_step(begin);
    sq_done(begin);
    sqlite3_busy_timeout(s->db, 10000);
    if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
        return BD_OK;
    *begun = rc == SQLITE_DONE;
    return sq_map_rc(rc);
}

/* Writes the kept outcomes if the file's writer lock is free now; keeps them otherwise. */
static bd_result write_kept(sqlite_store *s, sq_outbox *o, bool wait)
{
    if (o->nkept == 0)
        return BD_OK;
    bd_result r;
    if (wait) {
        r = sq_run_fixed(s, Q_BEGIN);
    } else {
        bool begun;
        r = begin_if_free(s, &begun);
        if (r == BD_OK && !begun)
            return BD_OK;
    }
    sqlite3_stmt *st = NULL;
    if (r == BD_OK)
        r = sq_run_dynamic(s,
                           "UPDATE alerts SET state = ?2, attempts = ?3, next_attempt_ms = ?4, "
                           "lease_until_ms = 0 WHERE seq = ?1 AND state = 0",
                           &st);
    for (int i = 0; r == BD_OK && i < o->nkept; i++) {
        sqlite3_bind_int64(st, 1, o->kept[i].seq);
        sqlite3_bind_int(st, 2, (int)o->kept[i].state);
        sqlite3_bind_int64(st, 3, o->kept[i].attempts);
        sqlite3_bind_int64(st, 4, o->kept[i].next_ms);
        r = sq_step_done(s, st);
    }
    r = end_write(s, r);
    if (r == BD_OK)
        o->nkept = 0;
    return r;
}

static sq_outbox *outbox(sqlite_store *s)
{
    if (!s->outbox) {
        s->outbox = calloc(1, sizeof *s->outbox);
        if (s->outbox)
            s->outbox->lock_fd = -1;
    }
    return s->outbox;
}

void sq_outbox_free(sqlite_store *s)
{
    if (!s->outbox)
        return;
    write_kept(s, s->outbox, true); /* the last outcomes, waiting for the lock this once */
    if (s->outbox->lock_fd >= 0)
        close(s->outbox->lock_fd);
    free(s->outbox);
    s->outbox = NULL;
}

bd_result sq_alert_lease(bd_store *base, int64_t now_ms, int64_t lease_ms, int limit,
                         bd_alert_cb cb, void *ctx)
{
    (void)lease_ms; /* the advisory lock stands for every lease: held while the process is */
    sqlite_store *s = S(base);
    sq_outbox *o = outbox(s);
    if (!o)
        return BD_ERR_NOMEM;
    if (!sqlite3_get_autocommit(s->db))
        return BD_ERR_INVALID;
    if (!deliverer(s, o))
        return BD_OK;
    bd_result r = write_kept(s, o, false);
    sqlite3_stmt *st = NULL;
    /* live: the alert's key is neither revoked nor expired (nor gone) */
    if (r == BD_OK)
        r = sq_run_dynamic(s,
                           "SELECT " ALERT_COLUMNS ", w.url, w.secret, k.id IS NOT NULL AND "
                           "k.revoked_at = 0 AND (k.expires_at = 0 OR k.expires_at > ?3), w.format "
                           "FROM alerts a JOIN watches w ON w.id = a.watch_id "
                           "LEFT JOIN api_keys k ON k.id = a.key_id WHERE a.state = 0 "
                           "AND a.next_attempt_ms <= ?1 ORDER BY a.next_attempt_ms, a.seq LIMIT ?2",
                           &st);
    if (r != BD_OK)
        return r;
    sqlite3_bind_int64(st, 1, now_ms);
    /* the kept and held ones may come first: skipped */
    sqlite3_bind_int(st, 2, limit + o->nkept + o->nheld);
    sqlite3_bind_int64(st, 3, now_ms / 1000);
    int rc = SQLITE_DONE, n = 0;
    bool dropped = false;
    while (n < limit && o->nheld < HELD_MAX && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        bd_alert_row a = alert_of(st);
        const kept_outcome *k = kept_of(o, a.seq);
        if ((k && (k->state != BD_ALERT_PENDING || k->next_ms > now_ms)) || held(o, a.seq))
            continue;
        if (!sqlite3_column_int(st, 16)) { /* given up in passing; a full list: next time */
            dropped |=
                keep_outcome(o, a.seq, BD_ALERT_FAILED, k ? k->attempts : a.attempts, now_ms);
            continue;
        }
        o->held[o->nheld++] = a.seq;
        if (k)
            a.attempts = k->attempts;
        a.url = sq_col_slice(st, 14);
        a.secret = sq_col_slice(st, 15);
        a.format = sqlite3_column_int(st, 17);
        if (cb(ctx, &a) != 0) { /* not taken */
            release(o, a.seq);
            break;
        }
        n++;
    }
    r = rc == SQLITE_ROW || rc == SQLITE_DONE ? BD_OK : sq_map_rc(rc);
    sq_done(st);
    if (r == BD_OK && dropped)
        r = write_kept(s, o, false);
    return r;
}

bd_result sq_alert_settle(bd_store *base, int64_t seq, bd_alert_state state, int64_t attempts,
                          int64_t next_ms)
{
    sqlite_store *s = S(base);
    sq_outbox *o = outbox(s);
    if (!o)
        return BD_ERR_NOMEM;
    release(o, seq);
    if (!keep_outcome(o, seq, state, attempts, next_ms)) {
        bd_result r = write_kept(s, o, true); /* full: wait for the lock this time */
        if (r != BD_OK)
            return r;
        keep_outcome(o, seq, state, attempts, next_ms);
    }
    return write_kept(s, o, false);
}

bd_result sq_alert_prune(bd_store *base, int64_t before_s, int limit, int64_t *removed)
{
    sqlite_store *s = S(base);
    if (!sqlite3_get_autocommit(s->db))
        return BD_ERR_INVALID;
    /* the identities are overwritten in the main file, as an erasure's rows are; the log's
     * copies go with bd_store_truncate_log, which the caller runs after a prune */
    bd_result r = sq_exec(s, "PRAGMA secure_delete=ON");
    bool begun = false;
    if (r == BD_OK)
        r = begin_if_free(s, &begun);
    if (r == BD_OK && !begun) {
        *removed = 0;
        return BD_ERR_BUSY; /* another connection writes: the caller comes back soon */
    }
    if (r != BD_OK)
        return r;
    sqlite3_stmt *st = NULL;
    r = sq_run_dynamic(s,
                       "DELETE FROM alerts WHERE seq IN (SELECT seq FROM alerts WHERE state <> 0 "
                       "AND created_at < ?1 ORDER BY seq LIMIT ?2)",
                       &st);
    if (r == BD_OK) {
        sqlite3_bind_int64(st, 1, before_s);
        sqlite3_bind_int(st, 2, limit);
        r = sq_step_done(s, st);
    }
    if (r == BD_OK)
        *removed = sqlite3_changes64(s->db);
    return end_write(s, r);
}

/* Erasure reaches the alerts too: their identities are copies of record values. */
bd_result sq_alerts_erase_email(sqlite_store *s, const char *email)
{
    bd_buf quoted; /* the email as a JSON string, as the identities hold it */
    bd_buf_init(&quoted, 4 * 1024);
    bd_json w;
    bd_json_init(&w, &quoted);
    bd_json_string(&w, bd_slice_from(email));
    bd_result r = bd_json_result(&w);
    sqlite3_stmt *st = NULL;
    if (r == BD_OK)
        r = sq_run_dynamic(s,
                           "UPDATE alerts SET identities = replace(identities, ?1, '\"[erased]\"') "
                           "WHERE instr(identities, ?1) > 0",
                           &st);
    if (r == BD_OK) {
        sq_bind_slice(st, 1, (bd_slice){quoted.data, quoted.len});
        r = sq_step_done(s, st);
    }
    bd_buf_free(&quoted);
    return r;
}

bd_result sq_alerts_erase_breach(sqlite_store *s, const char *uuid)
{
    sqlite3_stmt *st;
    bd_result r = sq_run_dynamic(
        s, "UPDATE alerts SET identities = '[]', breach_name = NULL WHERE breach_uuid = ?1", &st);
    if (r == BD_OK) {
        sqlite3_bind_text(st, 1, uuid, -1, SQLITE_STATIC);
        r = sq_step_done(s, st);
    }
    return r;
}
