/* The SQLite backend's administration: statistics, erasure (of an email's records or a whole
 * breach, overwritten in place), emptying the write-ahead log after one, and backup. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/sqlite/sqlite_impl.h"
#include "store/sqlite/statements.h"

bd_result sq_stats(bd_store *base, bd_stats_cb cb, void *ctx, int64_t *total_records,
                   int64_t *total_cards)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st = sq_fixed(s, Q_STATS);
    if (!st)
        return BD_ERR_STORE;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        bd_stats_row row = {sq_col_slice(st, 0), sq_col_slice(st, 1), sqlite3_column_int64(st, 2),
                            sqlite3_column_int64(st, 3)};
        if (cb(ctx, &row))
            break;
    }
    bd_result r = rc == SQLITE_ROW || rc == SQLITE_DONE ? BD_OK : sq_map_rc(rc);
    sq_done(st);
    *total_records = sq_count_of(s, Q_COUNT_RECORDS);
    *total_cards = sq_count_of(s, Q_COUNT_CARDS);
    return r;
}

/* Runs fixed statement q, which returns no rows, with text as its one parameter. */
static bd_result run_with_text(sqlite_store *s, int q, const char *text)
{
    sqlite3_stmt *st = sq_fixed(s, q);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_text(st, 1, text, -1, SQLITE_STATIC);
    return sq_step_done(s, st);
}

/* Erasure overwrites what it deletes (secure_delete, whatever the build's default), and drops
 * the per-domain counts it brought to zero: a domain of one person names that person. */
static const char ERASE_SETUP[] = "PRAGMA secure_delete=ON";
static const char ERASE_EMPTY_DOMAINS[] = "DELETE FROM domain_counts WHERE n <= 0";
/* The email hashes are made for the records past an id (meta email_hashes_upto, pastes.c).
 * SQLite gives a new record the id past the greatest left, so once the newest records are
 * erased the next import's ids are ones the hashes already went past, and its emails were
 * never hashed: the mark comes back to the greatest id left with the erasure. */
static const char ERASE_HASH_MARK[] =
    "UPDATE meta SET value = CAST(min(CAST(value AS INTEGER), "
    "(SELECT coalesce(max(id), 0) FROM records)) AS TEXT) WHERE key = 'email_hashes_upto'";

/* Starts an erasure's transaction, with secure_delete on. */
static bd_result erase_begin(sqlite_store *s)
{
    bd_result r = sq_exec(s, ERASE_SETUP);
    return r == BD_OK ? sq_begin(&s->base) : r;
}

/* Commits an erasure that went well (r == BD_OK), else rolls it back; returns the result. */
static bd_result erase_end(sqlite_store *s, bd_result r)
{
    if (r == BD_OK)
        r = sq_commit(&s->base);
    if (r != BD_OK)
        sq_rollback(&s->base);
    return r;
}

typedef struct {
    char (*uuids)[BD_UUID_LEN + 1];
    size_t n, cap;
} uuid_list;

/* Calls cb with each breach that has records of email and how many, and lists their uuids
 * in affected (which the caller frees). */
static bd_result affected_breaches(sqlite_store *s, const char *email, bd_stats_cb cb, void *ctx,
                                   uuid_list *affected)
{
    sqlite3_stmt *st = sq_fixed(s, Q_ERASE_EMAIL_BREACHES);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_text(st, 1, email, -1, SQLITE_STATIC);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        bd_stats_row row = {sq_col_slice(st, 0), sq_col_slice(st, 1), sqlite3_column_int64(st, 2),
                            0};
        if (affected->n == affected->cap) {
            size_t cap = affected->cap ? affected->cap * 2 : 16;
            void *p = realloc(affected->uuids, cap * sizeof *affected->uuids);
            if (!p) {
                rc = SQLITE_NOMEM;
                break;
            }
            affected->uuids = p;
            affected->cap = cap;
        }
        snprintf(affected->uuids[affected->n++], BD_UUID_LEN + 1, "%.*s", (int)row.uuid.len,
                 row.uuid.ptr);
        cb(ctx, &row);
    }
    bd_result r = rc == SQLITE_DONE ? BD_OK : sq_map_rc(rc);
    sq_done(st);
    return r;
}

bd_result sq_erase_email(bd_store *base, const char *email, bd_stats_cb cb, void *ctx,
                         int64_t *removed)
{
    sqlite_store *s = S(base);
    *removed = 0;
    bd_result r = erase_begin(s);
    if (r != BD_OK)
        return r;
    uuid_list affected = {0};
    r = affected_breaches(s, email, cb, ctx, &affected);
    if (r == BD_OK)
        r = sq_changes_erase_email(s, email);
    if (r == BD_OK)
        r = run_with_text(s, Q_ERASE_EMAIL_DOMAINS, email); /* before the records go */
    if (r == BD_OK) {
        r = run_with_text(s, Q_ERASE_EMAIL, email);
        *removed = sqlite3_changes(s->db);
    }
    for (size_t i = 0; i < affected.n && r == BD_OK; i++)
        r = sq_breach_refresh_count(base, affected.uuids[i], -1);
    if (r == BD_OK)
        r = sq_exec(s, ERASE_EMPTY_DOMAINS);
    if (r == BD_OK)
        r = sq_exec(s, ERASE_HASH_MARK);
    if (r == BD_OK)
        r = sq_alerts_erase_email(s, email);
    free(affected.uuids);
    r = erase_end(s, r);
    if (r != BD_OK)
        *removed = 0;
    return r;
}

bd_result sq_erase_breach(bd_store *base, const char *uuid, int64_t *records_removed)
{
    sqlite_store *s = S(base);
    *records_removed = 0;
    bd_result r = erase_begin(s);
    if (r != BD_OK)
        return r;
    int64_t n = 0;
    r = run_with_text(s, Q_ERASE_BREACH_DOMAINS, uuid); /* before the records go */
    if (r == BD_OK)
        r = run_with_text(s, Q_ERASE_BREACH_EMAIL_HASHES, uuid);
    if (r == BD_OK) {
        r = run_with_text(s, Q_ERASE_BREACH_RECORDS, uuid);
        n = sqlite3_changes(s->db);
    }
    if (r == BD_OK)
        r = sq_change_breach(s, BD_CHANGE_BREACH_REMOVED, uuid, n);
    if (r == BD_OK)
        r = run_with_text(s, Q_ERASE_BREACH, uuid);
    if (r == BD_OK && sqlite3_changes(s->db) == 0)
        r = BD_ERR_NOT_FOUND;
    if (r == BD_OK)
        r = sq_exec(s, ERASE_EMPTY_DOMAINS);
    if (r == BD_OK)
        r = sq_exec(s, ERASE_HASH_MARK);
    if (r == BD_OK)
        r = sq_alerts_erase_breach(s, uuid);
    memset(s->breach_cache, 0, sizeof s->breach_cache); /* it may name the erased breach */
    r = erase_end(s, r);
    if (r == BD_OK)
        *records_removed = n;
    return r;
}

/* After an erasure the deleted rows are gone from the main file (secure_delete) but the
 * write-ahead log still holds the pages that had them, until a checkpoint has copied every
 * frame and the log restarts. TRUNCATE waits for readers of older snapshots to move on: a
 * server shares a read view for 2 ms and gives up an idle one within a second, so retrying
 * in short waits gets through; each try waits at most 100 ms for them. */
bd_result sq_truncate_log(bd_store *base, int64_t wait_ms)
{
    sqlite_store *s = S(base);
    int64_t deadline = sq_monotonic_ns() + wait_ms * 1000000;
    int rc, log = -1;
    sqlite3_busy_timeout(s->db, 100);
    for (;;) {
        rc = sqlite3_wal_checkpoint_v2(s->db, "main", SQLITE_CHECKPOINT_TRUNCATE, &log, NULL);
        if ((rc == SQLITE_OK && log == 0) || (rc != SQLITE_OK && rc != SQLITE_BUSY) ||
            sq_monotonic_ns() >= deadline)
            break;
        sqlite3_sleep(20);
    }
    sqlite3_busy_timeout(s->db, 10000);
    if (rc == SQLITE_OK && log != 0)
        rc = SQLITE_BUSY;
    return sq_map_rc(rc);
}

/* true when a descriptor other than fd refers to fd's file: after SQLite opened a name, that
 * it opened the file the caller made, not one swapped in under the name meanwhile. */
static bool opened_elsewhere(int fd)
{
    struct stat want, st;
    if (fstat(fd, &want) != 0)
        return false;
    long max = sysconf(_SC_OPEN_MAX);
    if (max < 0 || max > 65536)
        max = 65536;
    for (int i = 0; i < max; i++) {
        if (i != fd && fstat(i, &st) == 0 && st.st_dev == want.st_dev && st.st_ino == want.st_ino)
            return true;
    }
    return false;
}

/* SQLite's online backup into the file the caller made, opened without following a link and
 * never created, and written only once it is known to be the caller's file. (VACUUM INTO would
 * open the name itself, following whatever link was put there.) One step holds one read view
 * of the source: a consistent copy while writers go on. No journal: a failed copy is thrown
 * away whole, and no side file is made by name. */
bd_result sq_backup(bd_store *base, const char *dest, int dest_fd)
{
    sqlite_store *s = S(base);
    sqlite3 *d = NULL;
    if (sqlite3_open_v2(dest, &d, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW, NULL) !=
            SQLITE_OK ||
        !opened_elsewhere(dest_fd)) {
        sqlite3_close(d);
        return BD_ERR_IO; /* gone, a link, or another file now */
    }
    int rc = sqlite3_exec(d, "PRAGMA journal_mode=OFF", NULL, NULL, NULL);
    sqlite3_backup *b = rc == SQLITE_OK ? sqlite3_backup_init(d, "main", s->db, "main") : NULL;
    if (rc == SQLITE_OK && !b)
        rc = sqlite3_errcode(d);
    if (b) {
        for (int tries = 0; tries < 100; tries++) {
            rc = sqlite3_backup_step(b, -1);
            if (rc != SQLITE_BUSY && rc != SQLITE_LOCKED)
                break;
            sqlite3_sleep(100);
        }
        int done_rc = sqlite3_backup_finish(b);
        rc = rc == SQLITE_DONE ? done_rc : rc;
    }
    if (sqlite3_close(d) != SQLITE_OK && rc == SQLITE_OK)
        rc = SQLITE_IOERR;
    return sq_map_rc(rc);
}
