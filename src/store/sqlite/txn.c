/* SQLite transactions: a write's begin (the breach cache checked once under the write
 * lock), its commit (the password ranges and the change log flushed into it first) and its
 * rollback (what the transaction gathered forgotten). */
#include <string.h>

#include "store/sqlite/sqlite_impl.h"
#include "store/sqlite/statements.h"

/* Empties the breach cache when another connection committed since it was last checked. */
static void breach_cache_check(sqlite_store *s)
{
    int64_t v = sq_count_of(s, Q_OTHERS_VERSION);
    if (v != s->others_version)
        memset(s->breach_cache, 0, sizeof s->breach_cache);
    s->others_version = v;
}

/* Once the write lock is held no other connection can commit until this transaction ends:
 * the breach cache is checked once for all of its record puts. */
bd_result sq_begin(bd_store *base)
{
    bd_result r = sq_run_fixed(S(base), Q_BEGIN);
    if (r == BD_OK)
        breach_cache_check(S(base));
    return r;
}

/* A write transaction that locks the store's own file alone. BEGIN IMMEDIATE takes the write
 * lock of every attached file as well, and a bulk card load's side file is written by
 * another connection while the load's transaction is open (card_words_side.c). An empty
 * write to the store takes its lock at once, as IMMEDIATE does. */
bd_result sq_begin_main_only(bd_store *base)
{
    bd_result r = sq_exec(S(base), "BEGIN DEFERRED; DELETE FROM main.meta WHERE 0");
    if (r == BD_OK)
        breach_cache_check(S(base));
    return r;
}

bd_result sq_commit(bd_store *base)
{
    sqlite_store *s = S(base);
    bd_result r = sq_range_flush(s);
    if (r == BD_OK)
        r = sq_card_counts_flush(s);
    if (r == BD_OK)
        r = sq_changes_flush(s);
    if (r == BD_OK)
        r = sq_run_fixed(s, Q_COMMIT);
    if (r == BD_OK) {
        sq_changes_forget(s);
        sq_words_side_end(s);
    }
    return r;
}

void sq_rollback(bd_store *base)
{
    sqlite_store *s = S(base);
    if (!sqlite3_get_autocommit(s->db))
        sq_run_fixed(s, Q_ROLLBACK);
    sq_words_side_end(s); /* detached before the pragma below, which every attached file takes */
    /* a load into an empty table may have left the WAL for a rollback journal (conn.c,
     * sq_bulk_begin): back to the store's usual mode (a no-op when it never left) */
    sq_exec(s, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL");
    bd_range_acc_clear(&s->ranges);
    sq_card_counts_forget(s);
    sq_changes_forget(s);
    sq_dedup_forget(s);
    memset(s->breach_cache, 0, sizeof s->breach_cache); /* it may name a breach undone */
}
