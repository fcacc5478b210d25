/* The SQLite backend's change log (store.h): what a write transaction added, counted by
 * id ranges at its commit, and the reads of the log. A record or card put in a transaction
 * gets an id above every id before it (a rowid is the largest one plus one, and the write
 * lock keeps other connections out), so "id > the largest id before the first put" is
 * exactly what the transaction added, duplicates never among it. */
#include <time.h>

#include "store/sqlite/sqlite_impl.h"
#include "store/sqlite/statements.h"

bd_result sq_changes_note_put(sqlite_store *s, bool cards)
{
    int64_t *from = cards ? &s->tx_cards_from : &s->tx_records_from;
    if (*from >= 0)
        return BD_OK;
    int64_t n = sq_count_of(s, cards ? Q_MAX_CARD : Q_MAX_RECORD);
    if (n < 0)
        return BD_ERR_STORE;
    *from = n;
    return BD_OK;
}

/* Past this many rows added, the count's sort runs with the sorter's memory (conn.c): the
 * GROUP BY sorts every row the transaction added, and with a bulk writer's page cache its
 * runs in memory were up to 512 MiB (10M cards --bulk peaked at 1,268,644 KB, its commit
 * sorting for 12 s). Below it the cache is left alone: shrinking it would drop the pages the
 * next batch of a plain import reads again. */
#define SORTED_FLUSH_ROWS 262144

static bd_result added_since(sqlite_store *s, int q, int max_q, int64_t from, int64_t now)
{
    sqlite3_stmt *st = sq_fixed(s, q);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_int64(st, 1, now);
    sqlite3_bind_int64(st, 2, from);
    if (sq_count_of(s, max_q) - from <= SORTED_FLUSH_ROWS)
        return sq_step_done(s, st);
    int64_t was = sq_sort_memory_begin(s);
    bd_result r = sq_step_done(s, st);
    bd_result back = sq_sort_memory_end(s, was);
    return r != BD_OK ? r : back;
}

bd_result sq_changes_flush(sqlite_store *s)
{
    int64_t now = (int64_t)time(NULL);
    bd_result r = BD_OK;
    if (s->tx_records_from >= 0)
        r = added_since(s, Q_CHANGES_RECORDS, Q_MAX_RECORD, s->tx_records_from, now);
    if (r == BD_OK && s->tx_cards_from >= 0)
        r = sq_leak_tally_usable(s)
                ? sq_leak_tally_flush(s, now)
                : added_since(s, Q_CHANGES_CARDS, Q_MAX_CARD, s->tx_cards_from, now);
    return r;
}

void sq_changes_forget(sqlite_store *s)
{
    s->tx_records_from = -1;
    s->tx_cards_from = -1;
    sq_leak_tally_forget(s);
}

bd_result sq_change_breach(sqlite_store *s, bd_change_kind kind, const char *uuid, int64_t n)
{
    bool changed = kind == BD_CHANGE_BREACH_CHANGED;
    sqlite3_stmt *st = sq_fixed(s, changed ? Q_CHANGE_BREACH : Q_CHANGE_ADD);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_int64(st, 1, (int64_t)time(NULL));
    if (changed) {
        sqlite3_bind_text(st, 2, uuid, -1, SQLITE_STATIC);
    } else {
        sqlite3_bind_int(st, 2, (int)kind);
        sqlite3_bind_text(st, 3, uuid, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 4, n);
    }
    return sq_step_done(s, st);
}

bd_result sq_changes_erase_email(sqlite_store *s, const char *email)
{
    sqlite3_stmt *st = sq_fixed(s, Q_CHANGES_ERASE_EMAIL);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_int64(st, 1, (int64_t)time(NULL));
    sqlite3_bind_text(st, 2, email, -1, SQLITE_STATIC);
    return sq_step_done(s, st);
}

bd_result sq_changes(bd_store *base, int64_t after, int limit, bd_change_cb cb, void *ctx)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st = sq_fixed(s, Q_CHANGES_LIST);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_int64(st, 1, after);
    sqlite3_bind_int(st, 2, limit);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        bd_change_row row = {
            .seq = sqlite3_column_int64(st, 0),
            .at = sqlite3_column_int64(st, 1),
            .kind = (bd_change_kind)sqlite3_column_int(st, 2),
            .subject = sq_col_slice(st, 3),
            .name = sq_col_slice(st, 4),
            .count = sqlite3_column_int64(st, 5),
        };
        if (cb(ctx, &row))
            break;
    }
    bd_result r = rc == SQLITE_ROW || rc == SQLITE_DONE ? BD_OK : sq_map_rc(rc);
    sq_done(st);
    return r;
}

bd_result sq_change_version(bd_store *base, int64_t *version)
{
    int64_t v = sq_count_of(S(base), Q_CHANGE_VERSION);
    *version = v < 0 ? 0 : v;
    return v < 0 ? BD_ERR_STORE : BD_OK;
}

bd_result sq_status_get(bd_store *base, bd_store_status *out)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st = sq_fixed(s, Q_STATUS);
    if (!st)
        return BD_ERR_STORE;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        *out = (bd_store_status){
            .version = sqlite3_column_int64(st, 0),
            .last_change_at = sqlite3_column_int64(st, 1),
            .last_import_at = sqlite3_column_int64(st, 2),
            .breaches = sqlite3_column_int64(st, 3),
            .records = sqlite3_column_int64(st, 4),
            .cards = sqlite3_column_int64(st, 5),
        };
    bd_result r = rc == SQLITE_ROW ? BD_OK : sq_map_rc(rc == SQLITE_DONE ? SQLITE_ERROR : rc);
    sq_done(st);
    return r;
}
