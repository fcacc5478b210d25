/* Running statements on the PostgreSQL connection: bound parameters, statements prepared
 * once per connection, results checked, errors mapped, and a lost connection reset on the
 * next call outside a transaction (see pg_impl.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "store/pg/pg_impl.h"
#include "store/pg/sql_split.h"

static void add(pg_params *pp, const char *v, int len, int format)
{
    if (pp->n >= PG_MAX_PARAMS) {
        pp->n = PG_MAX_PARAMS + 1; /* refused by the run functions */
        return;
    }
    pp->values[pp->n] = v;
    pp->lengths[pp->n] = len;
    pp->formats[pp->n] = format;
    pp->n++;
}

void pg_param_text(pg_params *pp, bd_slice v)
{
    add(pp, v.ptr, (int)v.len, 1);
}

void pg_param_str(pg_params *pp, const char *v)
{
    add(pp, v, 0, 0);
}

void pg_param_int(pg_params *pp, int64_t v)
{
    if (pp->n >= PG_MAX_PARAMS) {
        add(pp, NULL, 0, 0);
        return;
    }
    add(pp, bd_i64_text(v, pp->ints[pp->n]), 0, 0);
}

int64_t pg_changes(PGresult *res)
{
    return strtoll(PQcmdTuples(res), NULL, 10);
}

bd_slice pg_slice(const PGresult *res, int row, int col)
{
    if (PQgetisnull(res, row, col))
        return (bd_slice){NULL, 0};
    return (bd_slice){PQgetvalue(res, row, col), (size_t)PQgetlength(res, row, col)};
}

int64_t pg_int_text(const char *v)
{
    /* Up to 18 digits cannot overflow, so they are read here; strtoll (its locale and base
     * handling) was 6.8% of breachd's CPU on a domain page when its integers came as text
     * (perf). 19 digits and more go to strtoll for its range check. */
    const char *d = v + (*v == '-');
    uint64_t n = 0;
    size_t i = 0;
    for (; i < 18 && d[i] >= '0' && d[i] <= '9'; i++)
        n = n * 10 + (uint64_t)(d[i] - '0');
    if (i == 18 && d[i] >= '0' && d[i] <= '9')
        return strtoll(v, NULL, 10);
    return *v == '-' ? -(int64_t)n : (int64_t)n;
}

int64_t pg_int(const PGresult *res, int row, int col)
{
    return pg_int_text(PQgetvalue(res, row, col));
}

/* Forgets what was prepared on a connection that has been reset. */
static void forget_statements(pg_store *p)
{
    memset(p->prepared, 0, sizeof p->prepared);
    for (int i = 0; i < PG_DYN_CACHE; i++) {
        free(p->dyn[i].sql);
        p->dyn[i].sql = NULL;
        p->dyn[i].used = 0;
    }
    if (p->copy_reset)
        p->copy_reset(p);
}

/* BD_OK when the connection is usable. A broken one is reset here, but not while a
 * transaction was open on it: that transaction is gone, and its owner must learn so
 * (every call fails until it ends the transaction). Every statement starts here, so this
 * is where a COPY of streamed record puts ends and its rows move (copy.c): whatever runs
 * next sees them. */
static bd_result ready(pg_store *p)
{
    if (p->copy.open && p->copy_flush) {
        bd_result r = p->copy_flush(p);
        if (r != BD_OK)
            return r;
    }
    if (PQstatus(p->conn) == CONNECTION_OK)
        return BD_OK;
    if (p->in_tx)
        return BD_ERR_BUSY;
    PQreset(p->conn);
    forget_statements(p);
    if (PQstatus(p->conn) != CONNECTION_OK)
        return BD_ERR_BUSY;
    return pg_session_setup(p);
}

static bool sqlstate_is(const char *state, const char *want, size_t n)
{
    return state && strncmp(state, want, n) == 0;
}

/* Maps a failed result to a bd_result, reports it when it is not the server's absence or
 * an expected conflict, and clears it. */
bd_result pg_failed(pg_store *p, PGresult *res)
{
    const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    bd_result r = BD_ERR_STORE;
    if (PQstatus(p->conn) == CONNECTION_BAD || sqlstate_is(state, "08", 2) ||
        sqlstate_is(state, "57P", 3))
        r = BD_ERR_BUSY; /* connection lost, server shutting down or starting */
    else if (sqlstate_is(state, "23505", 5))
        r = BD_ERR_EXISTS;
    else if (sqlstate_is(state, "25006", 5))
        r = BD_ERR_READONLY; /* a write on a hot standby */
    else if (sqlstate_is(state, "40001", 5) || sqlstate_is(state, "40P01", 5) ||
             sqlstate_is(state, "55P03", 5))
        r = BD_ERR_BUSY; /* serialization failure, deadlock, lock not available */
    if (r == BD_ERR_STORE) {
        const char *msg = res ? PQresultErrorMessage(res) : PQerrorMessage(p->conn);
        bd_log_own(BD_LOG_ERROR, "store", "%.*s", (int)strcspn(msg, "\n"), msg);
    }
    PQclear(res);
    return r;
}

/* Hands a successful result to the caller (or clears it), maps a failed one. */
static bd_result finish(pg_store *p, PGresult *rs, PGresult **res)
{
    ExecStatusType st = PQresultStatus(rs);
    if (rs && (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK)) {
        if (res)
            *res = rs;
        else
            PQclear(rs);
        return BD_OK;
    }
    return pg_failed(p, rs);
}

static const pg_params no_params;

/* A statement that failed because the connection was gone, outside a transaction: the
 * connection was found dead only by using it (a server restart closes every connection,
 * and libpq learns so at the next send), so it is worth one more try on a new one (ready()
 * resets it). Only outside a transaction, where nothing before the statement is lost, and
 * every statement run outside one is a read or an idempotent write (puts skip duplicates;
 * a rate-limit lease repeated admits fewer requests, never more). Without this, every
 * server thread answered its first request after a restart with a 503. */
static bool worth_retrying(const pg_store *p, bd_result r)
{
    return r == BD_ERR_BUSY && PQstatus(p->conn) == CONNECTION_BAD && !p->in_tx && !p->copy.open;
}

static bd_result run_once(pg_store *p, const pg_stmt *q, const pg_params *pp, PGresult **res)
{
    if (res)
        *res = NULL;
    if (!pp)
        pp = &no_params;
    if (pp->n > PG_MAX_PARAMS)
        return BD_ERR_LIMIT;
    bd_result r = ready(p);
    if (r != BD_OK)
        return r;
    char name[16];
    snprintf(name, sizeof name, "bd%d", (int)q->id);
    if (!p->prepared[q->id]) {
        PGresult *pr = PQprepare(p->conn, name, q->sql, 0, NULL);
        if (PQresultStatus(pr) != PGRES_COMMAND_OK)
            return pg_failed(p, pr);
        PQclear(pr);
        p->prepared[q->id] = true;
    }
    PGresult *rs = PQexecPrepared(p->conn, name, pp->n, pp->values, pp->lengths, pp->formats,
                                  pp->result_format);
    return finish(p, rs, res);
}

/* The cache slot of a generated statement, preparing it (and evicting the least recently
 * used one) when new. -1 on failure, *r says why. */
static int dyn_slot(pg_store *p, const char *sql, bd_result *r)
{
    int victim = 0;
    for (int i = 0; i < PG_DYN_CACHE; i++) {
        if (p->dyn[i].sql && strcmp(p->dyn[i].sql, sql) == 0) {
            p->dyn[i].used = ++p->tick;
            return i;
        }
        if (p->dyn[i].used < p->dyn[victim].used)
            victim = i;
    }
    char name[16], drop[32];
    snprintf(name, sizeof name, "bdd%d", victim);
    if (p->dyn[victim].sql) {
        snprintf(drop, sizeof drop, "DEALLOCATE %s", name);
        if ((*r = pg_exec(p, drop)) != BD_OK)
            return -1;
        free(p->dyn[victim].sql);
        p->dyn[victim].sql = NULL;
    }
    char *copy = strdup(sql);
    if (!copy) {
        *r = BD_ERR_NOMEM;
        return -1;
    }
    PGresult *pr = PQprepare(p->conn, name, sql, 0, NULL);
    if (PQresultStatus(pr) != PGRES_COMMAND_OK) {
        free(copy);
        *r = pg_failed(p, pr);
        return -1;
    }
    PQclear(pr);
    p->dyn[victim].sql = copy;
    p->dyn[victim].used = ++p->tick;
    return victim;
}

bd_result pg_run(pg_store *p, const pg_stmt *q, const pg_params *pp, PGresult **res)
{
    bd_result r = run_once(p, q, pp, res);
    return worth_retrying(p, r) ? run_once(p, q, pp, res) : r;
}

static bd_result run_sql_once(pg_store *p, const char *sql, const pg_params *pp, bool prepare,
                              PGresult **res)
{
    if (res)
        *res = NULL;
    if (!pp)
        pp = &no_params;
    if (pp->n > PG_MAX_PARAMS)
        return BD_ERR_LIMIT;
    bd_result r = ready(p);
    if (r != BD_OK)
        return r;
    if (!prepare)
        return finish(p,
                      PQexecParams(p->conn, sql, pp->n, NULL, pp->values, pp->lengths, pp->formats,
                                   pp->result_format),
                      res);
    int slot = dyn_slot(p, sql, &r);
    if (slot < 0)
        return r;
    char name[16];
    snprintf(name, sizeof name, "bdd%d", slot);
    PGresult *rs = PQexecPrepared(p->conn, name, pp->n, pp->values, pp->lengths, pp->formats,
                                  pp->result_format);
    return finish(p, rs, res);
}

bd_result pg_run_sql(pg_store *p, const char *sql, const pg_params *pp, bool prepare,
                     PGresult **res)
{
    bd_result r = run_sql_once(p, sql, pp, prepare, res);
    return worth_retrying(p, r) ? run_sql_once(p, sql, pp, prepare, res) : r;
}

static bd_result exec_once(pg_store *p, const char *sql)
{
    bd_result r = ready(p);
    return r == BD_OK ? finish(p, PQexec(p->conn, sql), NULL) : r;
}

bd_result pg_array_text(bd_buf *out, bd_slice v)
{
    bd_result r = bd_buf_append_char(out, '"');
    for (size_t i = 0; r == BD_OK && i < v.len; i++) {
        if (v.ptr[i] == '"' || v.ptr[i] == '\\')
            r = bd_buf_append_char(out, '\\');
        if (r == BD_OK)
            r = bd_buf_append_char(out, v.ptr[i]);
    }
    return r == BD_OK ? bd_buf_append_char(out, '"') : r;
}

/* On a Citus coordinator, each statement of sql as a command of its own: Citus propagates
 * DDL on a distributed table to its shards only from a command of one statement ("cannot
 * insert multiple commands into a prepared statement"). */
static bd_result exec_each(pg_store *p, const char *sql)
{
    bd_result r = BD_OK;
    char one[8192];
    for (const char *s = sql; r == BD_OK && *s;) {
        const char *next;
        size_t n = pg_sql_first_statement(s, &next);
        if (n >= sizeof one)
            return BD_ERR_LIMIT;
        memcpy(one, s, n);
        one[n] = '\0';
        if (strspn(one, " \t\n") < n)
            r = exec_once(p, one);
        s = next;
    }
    return r;
}

bd_result pg_exec(pg_store *p, const char *sql)
{
    if (p->citus && strchr(sql, ';'))
        return exec_each(p, sql);
    bd_result r = exec_once(p, sql);
    return worth_retrying(p, r) ? exec_once(p, sql) : r;
}

/* Whether searches are routed (pg_store.routed): the database has the citus extension, or
 * the session's breachd.routed_searches setting is on (a setting of the database, the role
 * or the connection's options). On one server a routed search costs a second round trip
 * and a probe per row of its page for nothing: scenario 2 at 1M records, 4,749 -> 1,767
 * req/s when every search was routed. */
static const pg_stmt ROUTED = {
    PG_Q_ROUTED,
    "SELECT c OR coalesce(current_setting('breachd.routed_searches', true), '') "
    "IN ('on', 'true', '1'), c, "
    "coalesce(current_setting('breachd.direct_reads', true), '') NOT IN ('off', 'false', '0') "
    "FROM (SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') AS c) AS e"};

/* libpq would print the server's notices (e.g. "index does not exist, skipping") on stderr;
 * none of them is for the operator. */
static void ignore_notice(void *ctx, const char *message)
{
    (void)ctx;
    (void)message;
}

void pg_silence_notices(PGconn *conn)
{
    PQsetNoticeProcessor(conn, ignore_notice, NULL);
}

/* What breachd's statements depend on, set on each of its own connections so that a stock
 * cluster serves as the benchmark's tuned one does. A session sets only what is about
 * breachd's statements; what describes the machine stays the operator's (OPERATIONS.md,
 * "Tuning that matters"):
 *   plan_cache_mode  set: a statement is prepared only when its plan does not depend on
 *                    the values it is run with (pg_run_sql's callers decide), so it is
 *                    planned once, not 5 times first to see whether a generic plan would
 *                    do: planning a search costs more than running it.
 *   jit              set off: JIT compiles a statement whose estimated cost passes
 *                    jit_above_cost (100,000 by default), whatever it then reads, and
 *                    compiling costs tens of milliseconds each execution (no plan cache
 *                    keeps the code). Nothing breachd runs evaluates enough expressions per
 *                    row to win that back; a big store's counts and sorts are what can
 *                    cross the line. At 300,000 records and cards no statement of
 *                    scenarios 1, 4 and 5 did (pg_stat_statements: nothing compiled, with
 *                    or without the setting; bench/RESULTS.md, "general-purpose cluster").
 *   max_parallel_workers_per_gather
 *                    set to 0 on a reading session: a search reads one page, and a
 *                    parallel worker costs milliseconds to start. A generic plan estimates a
 *                    LIMIT given as a parameter at a tenth of the rows, which at 10M cards
 *                    made an owner word's page a Gather Merge with one worker: 4.5 ms a
 *                    page instead of 0.24 (bench/RESULTS.md, the growth run's notes).
 *                    Writing sessions keep the cluster's setting (an import's set-wide
 *                    statements are where parallel plans can pay).
 *   random_page_cost, effective_cache_size, work_mem: not set. They describe the storage
 *                    and the memory, which breachd cannot know, and the plans of its
 *                    lookups are index scans whichever values they hold (the
 *                    general-purpose benchmark run keeps PostgreSQL's random_page_cost of 4
 *                    to show it: bench/RESULTS.md).
 * On a Citus coordinator plan_cache_mode keeps its default: Citus plans a statement for
 * the values it runs with (a generic plan of a parameterised INSERT ... SELECT is "could not
 * create distributed plan"), and its router keeps the plan of a lookup by distribution
 * column cheap without it.
 * A writing session on a Citus coordinator sends each transaction's statements over one
 * connection per worker (citus.multi_shard_modify_mode sequential): an import's batch
 * writes rows to many shards and then reads them back (counts, the change log) in the same
 * transaction, which Citus refuses once a shard was written over several connections.
 * Every session on a coordinator runs a statement's tasks for one worker over one connection
 * (citus.max_adaptive_executor_pool_size 1), the one Citus keeps open: a page read from most
 * shards otherwise opened new worker connections (a backend forked each) for every request,
 * and scenario 2's pages went 20 -> 50 req/s with it (bench/RESULTS.md, the Citus notes).
 * SET applies to the session, not to the role or the database, so nothing else connected
 * to the same database is changed. */
#define SESSION_SETTINGS "SET client_encoding = 'UTF8'; SET jit = off"
#define CITUS_SESSION "; SET citus.max_adaptive_executor_pool_size = 1"
#define GENERIC_PLANS "; SET plan_cache_mode = force_generic_plan"
#define CITUS_WRITES "; SET citus.multi_shard_modify_mode = 'sequential'"

bd_result pg_session_detect(pg_store *p)
{
    PGresult *res;
    bd_result r = pg_run(p, &ROUTED, NULL, &res);
    if (r == BD_OK) {
        p->routed = PQntuples(res) == 1 && PQgetvalue(res, 0, 0)[0] == 't';
        p->citus = PQntuples(res) == 1 && PQgetvalue(res, 0, 1)[0] == 't';
        p->direct_reads = PQntuples(res) == 1 && PQgetvalue(res, 0, 2)[0] == 't';
        PQclear(res);
    }
    return r;
}

bd_result pg_session_settings(pg_store *p)
{
    /* UTF-8 on the wire whatever the database's encoding: what the program hashes into
     * owner keys (owner.c) is what SQL hashes back (schema.c) */
    char set[512];
    snprintf(set, sizeof set, "%s%s%s%s", SESSION_SETTINGS, p->citus ? CITUS_SESSION : "",
             p->citus ? (p->read_only ? "" : CITUS_WRITES) : GENERIC_PLANS,
             p->read_only ? "; SET default_transaction_read_only = on; "
                            "SET max_parallel_workers_per_gather = 0"
                          : "");
    return pg_exec(p, set);
}

bd_result pg_session_setup(pg_store *p)
{
    pg_silence_notices(p->conn);
    bd_result r = pg_session_detect(p);
    return r == BD_OK ? pg_session_settings(p) : r;
}
