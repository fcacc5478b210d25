/* PostgreSQL write transactions: begin with the one-writer advisory lock, commit (the
 * streamed puts, the password ranges and the change log landing first, then the data
 * version moved), rollback, a write in the caller's transaction or one of its own, the
 * breach cache's validity across writers, and meta writes. */
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "store/pg/pg_impl.h"

static const pg_stmt META_SET = {PG_Q_META_SET,
                                 "INSERT INTO meta(key, value) VALUES ($1, $2) "
                                 "ON CONFLICT (key) DO UPDATE SET value = excluded.value"};

/* Every write transaction moves the data version as it commits (see pg_commit). */
static const pg_stmt VERSION_BUMP = {PG_Q_VERSION_BUMP,
                                     "UPDATE meta SET value = (value::bigint + 1)::text "
                                     "WHERE key = 'data_version' RETURNING value"};

/* One writer at a time, as SQLite's BEGIN IMMEDIATE gives: every write transaction moves
 * the shared data version and domain counts, and two imports locking those rows in
 * different orders would deadlock. The lock is released by the commit or rollback.
 * Readers take no lock. ("bres" in ASCII.) */
#define WRITER_LOCK "SELECT pg_advisory_xact_lock(1651664243)"

void pg_breach_cache_forget(pg_store *p)
{
    memset(p->breach_cache, 0, sizeof p->breach_cache);
    p->breach_cache_loaded = false;
}

/* The data version as a number, from a result's first field. */
static uint64_t version_of(PGresult *res)
{
    return PQntuples(res) == 1 ? strtoull(PQgetvalue(res, 0, 0), NULL, 10) : 0;
}

/* With the writer lock held, no other writer commits until this transaction ends: when
 * one committed since this connection's last write (the data version moved on without it),
 * a breach of the record puts' cache may be erased: the cache is emptied. Read after the
 * lock statement, whose snapshot predates the wait, by the first record put of each write
 * transaction. */
bd_result pg_breach_cache_check(pg_store *p)
{
    if (p->breach_cache_checked)
        return BD_OK;
    pg_params pp = {0};
    pg_param_str(&pp, "data_version");
    PGresult *res;
    bd_result r = pg_run(p, &pg_meta_get_stmt, &pp, &res);
    if (r != BD_OK)
        return r;
    uint64_t v = version_of(res);
    PQclear(res);
    if (v != p->written_version)
        pg_breach_cache_forget(p);
    p->written_version = v;
    p->breach_cache_checked = true;
    return BD_OK;
}

/* ---- transactions and read views ------------------------------------------------------- */

bd_result pg_begin(bd_store *s)
{
    pg_store *p = pg_of(s);
    if (p->in_tx || p->in_read)
        return BD_ERR_INVALID;
    bd_result r = pg_exec(p, "BEGIN; " WRITER_LOCK);
    p->in_tx = r == BD_OK;
    if (r != BD_OK && PQstatus(p->conn) == CONNECTION_OK &&
        PQtransactionStatus(p->conn) != PQTRANS_IDLE)
        PQclear(PQexec(p->conn, "ROLLBACK")); /* BEGIN ran, the lock did not */
    p->breach_cache_checked = false;
    return r;
}

/* Forgets what a transaction that did not commit may have left in the caches. */
static void forget_transaction(pg_store *p)
{
    p->in_tx = false;
    p->bulk_records = false;
    p->bulk_cards = false;
    pg_changes_forget(p);
    pg_breach_cache_forget(p);
}

bd_result pg_commit(bd_store *s)
{
    pg_store *p = pg_of(s);
    if (!p->in_tx)
        return BD_ERR_INVALID;
    bd_result r = pg_copy_flush(p); /* the streamed record puts land first */
    if (r == BD_OK)
        r = pg_range_flush(p); /* then the password hashes of those that went in */
    if (r == BD_OK)
        r = pg_changes_flush(p); /* and what went in, in the change log */
    PGresult *bumped = NULL;
    if (r == BD_OK)
        r = pg_run(p, &VERSION_BUMP, NULL, &bumped);
    uint64_t version = bumped ? version_of(bumped) : 0;
    PQclear(bumped);
    if (r != BD_OK) {
        pg_rollback(s);
        return r;
    }
    PGresult *res = PQexec(p->conn, "COMMIT");
    ExecStatusType st = PQresultStatus(res);
    /* a transaction that failed earlier answers COMMIT with ROLLBACK */
    if (st == PGRES_COMMAND_OK && strcmp(PQcmdStatus(res), "COMMIT") == 0) {
        PQclear(res);
        p->in_tx = false;
        p->written_version = version; /* this connection's own commit */
        pg_copy_end_transaction(p, true);
        pg_changes_forget(p);
        return BD_OK;
    }
    r = PQstatus(p->conn) == CONNECTION_BAD ? BD_ERR_BUSY : BD_ERR_STORE;
    if (r == BD_ERR_STORE)
        bd_log_own(BD_LOG_ERROR, "store", "commit failed: %s", PQresultErrorMessage(res));
    PQclear(res);
    pg_rollback(s);
    return r;
}

void pg_rollback(bd_store *s)
{
    pg_store *p = pg_of(s);
    if (!p->in_tx)
        return;
    pg_copy_end_transaction(p, false); /* ends an open COPY: ROLLBACK can run */
    bd_range_acc_clear(&p->ranges);
    if (PQstatus(p->conn) == CONNECTION_OK)
        PQclear(PQexec(p->conn, "ROLLBACK"));
    forget_transaction(p);
}

bd_result pg_write_begin(pg_store *p, bool *own)
{
    *own = !p->in_tx;
    return *own ? pg_begin(&p->base) : BD_OK;
}

bd_result pg_write_end(pg_store *p, bool own, bd_result r)
{
    if (!own)
        return r;
    if (r == BD_OK)
        return pg_commit(&p->base);
    pg_rollback(&p->base);
    return r;
}

bd_result pg_meta_set(bd_store *s, const char *key, const char *value)
{
    pg_store *p = pg_of(s);
    bool own;
    bd_result r = pg_write_begin(p, &own);
    if (r != BD_OK)
        return r;
    pg_params pp = {0};
    pg_param_str(&pp, key);
    pg_param_str(&pp, value);
    return pg_write_end(p, own, pg_run(p, &META_SET, &pp, NULL));
}
