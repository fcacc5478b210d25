/* PostgreSQL backend of store.h: the connection, transactions and read views, the data
 * version, bulk-load index handling, meta settings, and the operations table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "store/pg/cards_sql.h"
#include "store/pg/pg_impl.h"
#include "store/pg/uri.h"
#include "store/uri.h"

static const pg_stmt META_GET = {PG_Q_META_GET, "SELECT value FROM meta WHERE key = $1"};
static const pg_stmt META_SET = {PG_Q_META_SET,
                                 "INSERT INTO meta(key, value) VALUES ($1, $2) "
                                 "ON CONFLICT (key) DO UPDATE SET value = excluded.value"};
/* Every write transaction moves the data version as it commits (see pg_commit). */
static const pg_stmt VERSION_BUMP = {PG_Q_VERSION_BUMP,
                                     "UPDATE meta SET value = (value::bigint + 1)::text "
                                     "WHERE key = 'data_version' RETURNING value"};
static const pg_stmt PING = {PG_Q_PING, "SELECT 1"};

/* libpq would print the server's notices (e.g. "index does not exist, skipping") on stderr;
 * none of them is for the operator. */
static void ignore_notice(void *ctx, const char *message)
{
    (void)ctx;
    (void)message;
}

/* Whether searches are routed (pg_store.routed): the database has the citus extension, or
 * the session's breachd.routed_searches setting is on (a setting of the database, the role
 * or the connection's options). On one server a routed search costs a second round trip
 * and a probe per row of its page for nothing: scenario 2 at 1M records, 4,749 -> 1,767
 * req/s when every search was routed. */
static const pg_stmt ROUTED = {
    PG_Q_ROUTED,
    "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') "
    "OR coalesce(current_setting('breachd.routed_searches', true), '') IN ('on', 'true', '1')"};

/* plan_cache_mode: a statement is prepared only when its plan does not depend on the values
 * it is run with (pg_run_sql's callers decide), so it is planned once, not 5 times first to
 * see whether a generic plan would do: planning a search costs more than running it. */
bd_result pg_session_setup(pg_store *p)
{
    PQsetNoticeProcessor(p->conn, ignore_notice, NULL);
    /* UTF-8 on the wire whatever the database's encoding: what the program hashes into
     * owner keys (owner.c) is what SQL hashes back (schema.c) */
    bd_result r = pg_exec(p, p->read_only ? "SET client_encoding = 'UTF8'; "
                                            "SET plan_cache_mode = force_generic_plan; "
                                            "SET default_transaction_read_only = on"
                                          : "SET client_encoding = 'UTF8'; "
                                            "SET plan_cache_mode = force_generic_plan");
    PGresult *res;
    if (r == BD_OK)
        r = pg_run(p, &ROUTED, NULL, &res);
    if (r == BD_OK) {
        p->routed = PQntuples(res) == 1 && PQgetvalue(res, 0, 0)[0] == 't';
        PQclear(res);
    }
    return r;
}

void pg_close(bd_store *s)
{
    pg_store *p = pg_of(s);
    if (!p)
        return;
    for (int i = 0; i < PG_DYN_CACHE; i++)
        free(p->dyn[i].sql);
    PQfinish(p->conn);
    bd_buf_free(&p->sql);
    bd_buf_free(&p->where);
    bd_buf_free(&p->words[0]);
    bd_buf_free(&p->words[1]);
    pg_card_sql_free(&p->card);
    bd_buf_free(&p->copy.out);
    bd_buf_free(&p->copy.word_rows);
    bd_buf_free(&p->copy.owner_word_rows);
    bd_buf_free(&p->copy.password_rows);
    bd_range_acc_free(&p->ranges);
    bd_buf_free(&p->range_rows);
    free(p->copy.wordv);
    free(p);
}

/* ---- transactions and read views ------------------------------------------------------- */

/* One writer at a time, as SQLite's BEGIN IMMEDIATE gives: every write transaction moves
 * the shared data version and domain counts, and two imports locking those rows in
 * different orders would deadlock. The lock is released by the commit or rollback.
 * Readers take no lock. ("bres" in ASCII.) */
#define WRITER_LOCK "SELECT pg_advisory_xact_lock(1651664243)"

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
    bd_result r = pg_run(p, &META_GET, &pp, &res);
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

/* A read here is no transaction: every search is one statement, which is one snapshot for
 * its page, its count and the data version (store.h), and a BEGIN and a COMMIT would each
 * cost a round trip. read_begin and read_end only bracket what the data version of the
 * read is. */
bd_result pg_read_begin(bd_store *s)
{
    pg_store *p = pg_of(s);
    if (p->in_tx || p->in_read)
        return BD_ERR_INVALID;
    p->has_version = false;
    p->in_read = true;
    return BD_OK;
}

void pg_read_end(bd_store *s)
{
    pg_store *p = pg_of(s);
    p->in_read = false;
    p->has_version = false;
}

void pg_note_version(pg_store *p, bd_slice value)
{
    if (!p->in_read || !value.ptr)
        return;
    uint64_t v = 0;
    for (size_t i = 0; i < value.len && value.ptr[i] >= '0' && value.ptr[i] <= '9'; i++)
        v = v * 10 + (uint64_t)(value.ptr[i] - '0');
    p->version = v;
    p->has_version = true;
}

/* Read views are per request here: PostgreSQL starts a snapshot cheaply and holds back no
 * other process's writes, so sharing them across requests buys nothing. */
void pg_share_reads(bd_store *s, int64_t window_us)
{
    (void)s;
    (void)window_us;
}

void pg_release_idle(bd_store *s)
{
    (void)s;
}

/* The meta counter that every committed write transaction moved (pg_commit): within a read,
 * the one the read's search noted, else read now. 0 when it cannot be read. */
uint64_t pg_data_version(bd_store *s)
{
    pg_store *p = pg_of(s);
    if (p->in_read && p->has_version)
        return p->version;
    pg_params pp = {0};
    pg_param_str(&pp, "data_version");
    PGresult *res;
    if (pg_run(p, &META_GET, &pp, &res) != BD_OK)
        return 0;
    uint64_t v = PQntuples(res) == 1 ? strtoull(PQgetvalue(res, 0, 0), NULL, 10) : 0;
    PQclear(res);
    if (p->in_read) {
        p->version = v;
        p->has_version = true;
    }
    return v;
}

bd_result pg_ping(bd_store *s)
{
    return pg_run(pg_of(s), &PING, NULL, NULL);
}

/* ---- meta ------------------------------------------------------------------------------ */

bd_result pg_meta_get(bd_store *s, const char *key, char *out, size_t outcap)
{
    pg_params pp = {0};
    pg_param_str(&pp, key);
    PGresult *res;
    bd_result r = pg_run(pg_of(s), &META_GET, &pp, &res);
    if (r != BD_OK)
        return r;
    r = BD_ERR_NOT_FOUND;
    if (PQntuples(res) == 1) {
        bd_slice v = pg_slice(res, 0, 0);
        r = v.len + 1 > outcap ? BD_ERR_LIMIT : BD_OK;
        if (r == BD_OK) {
            memcpy(out, v.ptr, v.len);
            out[v.len] = '\0';
        }
    }
    PQclear(res);
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

/* ---- opening --------------------------------------------------------------------------- */

/* Connects: the URI's own settings win over our defaults (a 10 s connect timeout, so a
 * reset against an unreachable host cannot hang a worker for minutes). */
static PGconn *connect_uri(const char *uri)
{
    const char *const keys[] = {"connect_timeout", "fallback_application_name", "dbname", NULL};
    const char *const values[] = {"10", "breachd", uri, NULL};
    return PQconnectdbParams(keys, values, 1);
}

/* "cannot connect to <URI without password>: <libpq's reason, first line>". libpq can quote
 * part of the URI in its reason, so the reason is scrubbed of the password too. */
static void explain_failure(const char *uri, const char *shown, PGconn *conn, char *why,
                            size_t whylen)
{
    const char *msg = conn ? PQerrorMessage(conn) : "out of memory";
    char line[512], clean[512];
    snprintf(line, sizeof line, "%.*s", (int)strcspn(msg, "\n"), msg);
    if (pg_uri_scrub(uri, line, clean, sizeof clean) == BD_ERR_NOMEM)
        snprintf(clean, sizeof clean, "(reason withheld)");
    bd_why(why, whylen, "cannot connect to %s: %s", shown, clean);
}

bd_result bd_pg_open(const char *uri, int flags, bd_store **out, char *why, size_t whylen)
{
    *out = NULL;
    if (why && whylen)
        why[0] = '\0';
    char shown[512];
    bd_uri_redact(uri, shown, sizeof shown);
    pg_store *p = calloc(1, sizeof *p);
    if (p)
        pg_changes_forget(p);
    if (!p)
        return BD_ERR_NOMEM;
    p->base.ops = &bd_pg_ops;
    p->read_only = !(flags & BD_STORE_WRITE);
    bd_buf_init(&p->sql, 16384);
    bd_range_acc_init(&p->ranges);
    bd_buf_init(&p->range_rows, SIZE_MAX / 2);
    bd_buf_init(&p->where, 8192);
    bd_buf_init(&p->words[0], 65536);
    bd_buf_init(&p->words[1], 65536);
    pg_card_sql_init(&p->card);
    bd_buf_init(&p->copy.out, 64u << 20);
    bd_buf_init(&p->copy.word_rows, 1u << 30);
    bd_buf_init(&p->copy.owner_word_rows, 1u << 30);
    bd_buf_init(&p->copy.password_rows, 1u << 30);
    p->conn = connect_uri(uri);
    bd_result r = BD_ERR_BUSY;
    if (PQstatus(p->conn) != CONNECTION_OK) {
        explain_failure(uri, shown, p->conn, why, whylen);
        goto fail;
    }
    PQsetNoticeProcessor(p->conn, ignore_notice, NULL);
    r = pg_migrate(p, flags & BD_STORE_CREATE, shown, why, whylen);
    if (r == BD_OK)
        r = pg_session_setup(p);
    if (r != BD_OK)
        goto fail;
    *out = &p->base;
    return BD_OK;
fail:
    if (r != BD_OK && why && whylen && !why[0])
        bd_why(why, whylen, "cannot set up the store at %s", shown);
    pg_close(&p->base);
    return r;
}
