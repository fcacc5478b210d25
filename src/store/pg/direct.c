/* Direct reads on a Citus cluster (direct.h).
 *
 * The shard map is the coordinator's pg_dist_shard, pg_dist_placement and pg_dist_node for
 * the records table: each shard's range of hashes, its number and the worker (group) that
 * holds it. A record's shard is the one whose range holds PostgreSQL's hash of its owner key
 * (hash_bytes.c, which is what Citus hashes a uuid with).
 *
 * The page is read from the shard's own table on that worker (records_<shard>), which
 * PostgreSQL plans once per connection like any prepared statement: through Citus, the
 * worker's planner routed the same statement again at every execution (0.19 ms a bind, more
 * than the read). The same statement reads the data version from the worker's copy of meta
 * where the worker's copy of Citus's metadata (pg_dist_placement, which Citus changes on
 * every node in the transaction that moves a shard) still places the shard there, and the
 * page joined to that one row: a moved shard answers no row, is read through the coordinator
 * and the map read again, so a page is never read from a placement Citus has left. Each worker gets
 * one connection per store, opened at its first direct read, in pipeline mode. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/log.h"
#include "store/pg/direct.h"
#include "store/pg/hash_bytes.h"
#include "store/pg/pg_impl.h"
#include "store/pg/uri.h"

#define MAP_TTL_US (30 * 1000000LL) /* the shard map is read again after this long */
#define DOWN_US (5 * 1000000LL)     /* a worker that failed is not tried again for this long */
#define CONNECT_TIMEOUT "2"         /* seconds: a search waits this long at most for a worker */

static const char MAP_SQL[] =
    "SELECT s.shardminvalue::integer, s.shardmaxvalue::integer, n.nodename, n.nodeport::text, "
    "s.shardid, pl.groupid, (SELECT min(shardid) FROM pg_dist_shard "
    "WHERE logicalrelid = 'meta'::regclass) "
    "FROM pg_dist_shard s JOIN pg_dist_placement pl ON pl.shardid = s.shardid "
    "JOIN pg_dist_node n ON n.groupid = pl.groupid "
    "WHERE s.logicalrelid = 'records'::regclass AND n.isactive AND n.noderole = 'primary' "
    "ORDER BY 1, n.nodeid";
/* On the worker, the pages' v: the data version from the worker's copy of meta, where the
 * worker's copy of Citus's metadata still places the shard in its group. */
static const char PLACED_SQL[] =
    "SELECT value FROM meta_%lld WHERE key = 'data_version' AND EXISTS (SELECT 1 FROM "
    "pg_catalog.pg_dist_placement WHERE shardid = %lld AND groupid = %d)";
/* What a worker session needs of pg_session_settings' reading settings (exec.c says why). */
static const char SESSION_SQL[] =
    "SET client_encoding = 'UTF8'; SET jit = off; SET default_transaction_read_only = on; "
    "SET max_parallel_workers_per_gather = 0; SET plan_cache_mode = force_generic_plan";

typedef struct {
    int32_t min, max;
    int node;
    long long id; /* pg_dist_shard.shardid */
    int group;    /* pg_dist_placement.groupid of the placement read */
} shard;

typedef struct {
    char *host, *port;
    PGconn *conn; /* NULL until its first read, and after a failure */
    struct {
        long long shard;
        unsigned mask; /* bit q: the statement of template q */
    } * prepared;      /* what conn has prepared, by shard */
    int nprepared, capprepared;
    int64_t retry_at; /* after a failure: not tried again before this time */
    bool said_down;   /* the failure is logged; its end will be */
} node;

struct pg_direct {
    char *uri;
    const char *const *sql;
    shard *shards;
    int nshards;
    node nodes[PG_DIRECT_MAX_NODES];
    int nnodes;
    long long meta_shard; /* the meta reference table's shard, on every node */
    int64_t map_at;       /* when the map was read; 0: never */
    bool said_map_failed;
};

static int64_t now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

pg_direct *pg_direct_new(const char *uri, const char *const sql[PG_DIRECT__COUNT])
{
    pg_direct *d = calloc(1, sizeof *d);
    if (d && !(d->uri = strdup(uri))) {
        free(d);
        return NULL;
    }
    if (d)
        d->sql = sql;
    return d;
}

static void node_free(node *n)
{
    PQfinish(n->conn);
    free(n->prepared);
    free(n->host);
    free(n->port);
    memset(n, 0, sizeof *n);
}

void pg_direct_free(pg_direct *d)
{
    if (!d)
        return;
    for (int i = 0; i < d->nnodes; i++)
        node_free(&d->nodes[i]);
    free(d->shards);
    free(d->uri);
    free(d);
}

/* The first line of a libpq message, scrubbed of the URI's password. */
static void reason(const pg_direct *d, const char *msg, char *out, size_t cap)
{
    char line[512];
    snprintf(line, sizeof line, "%.*s", (int)strcspn(msg, "\n"), msg);
    if (pg_uri_scrub(d->uri, line, out, cap) != BD_OK)
        snprintf(out, cap, "(reason withheld)");
}

/* The node named host:port in the new list, taking over the old list's connection to it. */
static int node_index(node *fresh, int *nfresh, node *old, int nold, const char *host,
                      const char *port)
{
    for (int i = 0; i < *nfresh; i++)
        if (strcmp(fresh[i].host, host) == 0 && strcmp(fresh[i].port, port) == 0)
            return i;
    if (*nfresh == PG_DIRECT_MAX_NODES)
        return -1;
    node *n = &fresh[*nfresh];
    for (int i = 0; i < nold; i++)
        if (old[i].host && strcmp(old[i].host, host) == 0 && strcmp(old[i].port, port) == 0) {
            *n = old[i];
            memset(&old[i], 0, sizeof old[i]);
            return (*nfresh)++;
        }
    n->host = strdup(host);
    n->port = strdup(port);
    if (!n->host || !n->port) {
        node_free(n);
        return -1;
    }
    return (*nfresh)++;
}

/* Reads the shard map from the coordinator. On failure the map before stays (before the
 * first, none: every read goes through the coordinator) until the next reading, 30 s on. */
static void load_map(pg_store *p, pg_direct *d)
{
    d->map_at = now_us();
    PGresult *res;
    if (pg_run_sql(p, MAP_SQL, NULL, false, &res) != BD_OK) {
        if (!d->said_map_failed)
            bd_log(BD_LOG_WARN, "store",
                   "citus: cannot read the shard map; email searches "
                   "go through the coordinator");
        d->said_map_failed = true;
        return;
    }
    int rows = PQntuples(res);
    shard *shards = calloc(rows ? (size_t)rows : 1, sizeof *shards);
    node fresh[PG_DIRECT_MAX_NODES];
    int nfresh = 0, nshards = 0;
    memset(fresh, 0, sizeof fresh);
    for (int i = 0; shards && i < rows; i++) {
        int32_t min = (int32_t)pg_int(res, i, 0);
        if (nshards > 0 && shards[nshards - 1].min == min)
            continue; /* a second placement of the same shard: the first will do */
        int at = node_index(fresh, &nfresh, d->nodes, d->nnodes, PQgetvalue(res, i, 2),
                            PQgetvalue(res, i, 3));
        if (at < 0)
            break;
        shards[nshards++] =
            (shard){min, (int32_t)pg_int(res, i, 1), at, pg_int(res, i, 4), (int)pg_int(res, i, 5)};
    }
    long long meta = rows ? pg_int(res, 0, 6) : 0;
    PQclear(res);
    for (int i = 0; i < d->nnodes; i++)
        node_free(&d->nodes[i]); /* the workers no longer in the map */
    if (meta != d->meta_shard)   /* the statements name it: prepared again */
        for (int i = 0; i < nfresh; i++) {
            PQfinish(fresh[i].conn);
            fresh[i].conn = NULL;
            fresh[i].nprepared = 0;
        }
    memcpy(d->nodes, fresh, sizeof fresh);
    d->nnodes = nfresh;
    d->meta_shard = meta;
    free(d->shards);
    d->shards = shards;
    d->nshards = shards && meta ? nshards : 0;
    if (d->said_map_failed)
        bd_log(BD_LOG_INFO, "store",
               "citus: the shard map is read again: email searches go "
               "to their workers");
    d->said_map_failed = false;
}

/* The shard of hash h, or NULL. */
static const shard *shard_of(const pg_direct *d, int32_t h)
{
    int lo = 0, hi = d->nshards - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (h < d->shards[mid].min)
            hi = mid - 1;
        else if (h > d->shards[mid].max)
            lo = mid + 1;
        else
            return &d->shards[mid];
    }
    return NULL;
}

/* A connection to n: the coordinator URI's settings with n's host and port, a short connect
 * timeout, the reading session's settings, in pipeline mode. NULL with why set on failure. */
static PGconn *open_node(const pg_direct *d, node *n, char *why, size_t cap)
{
    PQconninfoOption *opts = PQconninfoParse(d->uri, NULL);
    if (!opts) {
        snprintf(why, cap, "out of memory");
        return NULL;
    }
    const char *keys[80], *vals[80];
    int k = 0;
    for (PQconninfoOption *o = opts; o->keyword && k < 70; o++) {
        if (!o->val || !o->val[0] || strcmp(o->keyword, "host") == 0 ||
            strcmp(o->keyword, "hostaddr") == 0 || strcmp(o->keyword, "port") == 0 ||
            strcmp(o->keyword, "connect_timeout") == 0)
            continue;
        keys[k] = o->keyword;
        vals[k++] = o->val;
    }
    keys[k] = "host", vals[k++] = n->host;
    keys[k] = "port", vals[k++] = n->port;
    keys[k] = "connect_timeout", vals[k++] = CONNECT_TIMEOUT;
    keys[k] = "fallback_application_name", vals[k++] = "breachd direct reads";
    keys[k] = NULL, vals[k] = NULL;
    PGconn *c = PQconnectdbParams(keys, vals, 0);
    PQconninfoFree(opts);
    n->nprepared = 0;
    if (PQstatus(c) != CONNECTION_OK)
        goto fail;
    pg_silence_notices(c);
    PGresult *r = PQexec(c, SESSION_SQL);
    bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    if (ok && PQenterPipelineMode(c))
        return c;
fail:
    reason(d, c ? PQerrorMessage(c) : "out of memory", why, cap);
    PQfinish(c);
    return NULL;
}

/* The statement name of query q on shard id. */
static void stmt_name(char *out, size_t cap, long long id, pg_direct_q q)
{
    snprintf(out, cap, "bdx_%lld_%d", id, (int)q);
}

/* Queues the preparation of sh's statement q on n's connection when it has not prepared it:
 * its template completed with the shard's placement check and table. */
static bool prepare_shard(const pg_direct *d, node *n, const shard *sh, pg_direct_q q)
{
    int at = 0;
    while (at < n->nprepared && n->prepared[at].shard != sh->id)
        at++;
    if (at < n->nprepared && (n->prepared[at].mask & (1u << q)))
        return true;
    if (at == n->capprepared) {
        int cap = n->capprepared ? 2 * n->capprepared : 16;
        void *more = realloc(n->prepared, (size_t)cap * sizeof *n->prepared);
        if (!more)
            return false;
        n->prepared = more;
        n->capprepared = cap;
    }
    char placed[384], name[48], sql[4096];
    snprintf(placed, sizeof placed, PLACED_SQL, d->meta_shard, sh->id, sh->group);
    stmt_name(name, sizeof name, sh->id, q);
    int len = snprintf(sql, sizeof sql, d->sql[q], placed, sh->id);
    if (len < 0 || (size_t)len >= sizeof sql || !PQsendPrepare(n->conn, name, sql, 0, NULL))
        return false;
    if (at == n->nprepared)
        n->prepared[n->nprepared++].shard = sh->id, n->prepared[at].mask = 0;
    n->prepared[at].mask |= 1u << q;
    return true;
}

PGresult *pg_direct_next_result(PGconn *c)
{
    for (int nulls = 0; nulls < 2; nulls++) {
        if (PQisnonblocking(c) && PQisBusy(c))
            return NULL;
        PGresult *r = PQgetResult(c);
        if (r || PQstatus(c) == CONNECTION_BAD)
            return r;
    }
    return NULL;
}

/* What came back for one round trip, up to the sync. *got is the page's result; BD_OK when
 * every statement succeeded. */
static bd_result collect(PGconn *c, PGresult **got)
{
    bool ok = true;
    for (;;) {
        PGresult *r = pg_direct_next_result(c);
        if (!r)
            return BD_ERR_BUSY; /* no sync is coming */
        ExecStatusType st = PQresultStatus(r);
        if (st == PGRES_PIPELINE_SYNC) {
            PQclear(r);
            return ok && *got ? BD_OK : BD_ERR_STORE;
        }
        if (st == PGRES_TUPLES_OK) {
            PQclear(*got);
            *got = r;
        } else {
            if (st != PGRES_COMMAND_OK) /* a statement prepared says COMMAND_OK */
                ok = false;
            PQclear(r);
        }
    }
}

static void failed(node *n, const char *why)
{
    PQfinish(n->conn);
    n->conn = NULL;
    n->retry_at = now_us() + DOWN_US;
    if (!n->said_down)
        bd_log(BD_LOG_WARN, "store",
               "citus: direct reads from worker %s:%s failed (%s); its email searches go "
               "through the coordinator",
               n->host, n->port, why);
    n->said_down = true;
}

/* One round trip on n's connection: sh's statements prepared if they are not, the page. */
static bd_result round_trip(const pg_direct *d, node *n, const shard *sh, pg_direct_q q,
                            const pg_params *pp, PGresult **got)
{
    char name[48];
    stmt_name(name, sizeof name, sh->id, q);
    if (!prepare_shard(d, n, sh, q))
        return BD_ERR_STORE;
    if (!PQsendQueryPrepared(n->conn, name, pp->n, pp->values, pp->lengths, pp->formats,
                             pp->result_format) ||
        !PQpipelineSync(n->conn))
        return BD_ERR_BUSY;
    return collect(n->conn, got);
}

bd_result pg_direct_run(pg_store *p, const uint8_t *ok, size_t ok_len, pg_direct_q q,
                        const pg_params *pp, PGresult **res)
{
    pg_direct *d = p->direct;
    *res = NULL;
    int64_t now = now_us();
    if (!d->map_at || now - d->map_at > MAP_TTL_US)
        load_map(p, d);
    const shard *sh = shard_of(d, pg_hash_bytes(ok, ok_len));
    if (!sh)
        return BD_ERR_NOT_FOUND;
    node *n = &d->nodes[sh->node];
    if (!n->conn && now < n->retry_at)
        return BD_ERR_BUSY;
    char why[512];
    /* A connection that served before may have been closed by the worker since (a restart,
     * an idle timeout): that is learned only by using it, so it is worth one new one. */
    for (int attempt = 0; attempt < 2; attempt++) {
        bool fresh = !n->conn;
        if (fresh && !(n->conn = open_node(d, n, why, sizeof why))) {
            failed(n, why);
            return BD_ERR_BUSY;
        }
        PGresult *got = NULL;
        bd_result r = round_trip(d, n, sh, q, pp, &got);
        if (r == BD_OK && PQntuples(got) == 0)
            r = BD_ERR_NOT_FOUND; /* the shard moved: read through the coordinator */
        if (r == BD_OK) {
            *res = got;
            if (n->said_down)
                bd_log(BD_LOG_INFO, "store", "citus: direct reads from worker %s:%s again", n->host,
                       n->port);
            n->said_down = false;
            return BD_OK;
        }
        PQclear(got);
        if (r == BD_ERR_NOT_FOUND) {
            d->map_at = 0; /* read again at the next search */
            return r;
        }
        reason(d, PQerrorMessage(n->conn), why, sizeof why);
        if (fresh || PQstatus(n->conn) != CONNECTION_BAD || attempt == 1) {
            failed(n, why);
            return BD_ERR_BUSY;
        }
        PQfinish(n->conn);
        n->conn = NULL;
    }
    return BD_ERR_BUSY;
}

/* ---- the lookup dispatcher's ------------------------------------------------------------ */

void pg_direct_refresh(pg_store *p)
{
    pg_direct *d = p->direct;
    if (!d->map_at || now_us() - d->map_at > MAP_TTL_US) {
        int nonblocking = PQisnonblocking(p->conn); /* the dispatcher's connection */
        PQsetnonblocking(p->conn, 0);
        load_map(p, d);
        PQsetnonblocking(p->conn, nonblocking);
    }
}

bool pg_direct_locate(pg_store *p, const uint8_t *ok, size_t ok_len, int *node_at, int *shard_at)
{
    pg_direct *d = p->direct;
    const shard *sh = shard_of(d, pg_hash_bytes(ok, ok_len));
    if (!sh)
        return false;
    *node_at = sh->node;
    *shard_at = (int)(sh - d->shards);
    return true;
}

PGconn *pg_direct_conn(pg_store *p, int at)
{
    pg_direct *d = p->direct;
    node *n = &d->nodes[at];
    if (!n->conn && now_us() >= n->retry_at) {
        char why[512];
        if (!(n->conn = open_node(d, n, why, sizeof why)))
            failed(n, why);
        else if (PQsetnonblocking(n->conn, 1) != 0)
            failed(n, "cannot set the connection non-blocking");
        else if (n->said_down) {
            bd_log(BD_LOG_INFO, "store", "citus: direct reads from worker %s:%s again", n->host,
                   n->port);
            n->said_down = false;
        }
    }
    return n->conn;
}

bool pg_direct_send(pg_store *p, int at, pg_direct_q q, int nparams, const char *const *values,
                    int result_format)
{
    pg_direct *d = p->direct;
    const shard *sh = &d->shards[at];
    node *n = &d->nodes[sh->node];
    char name[48];
    stmt_name(name, sizeof name, sh->id, q);
    return n->conn && prepare_shard(d, n, sh, q) &&
           PQsendQueryPrepared(n->conn, name, nparams, values, NULL, NULL, result_format);
}

void pg_direct_node_failed(pg_store *p, int at)
{
    pg_direct *d = p->direct;
    node *n = &d->nodes[at];
    char why[512];
    reason(d, n->conn ? PQerrorMessage(n->conn) : "no connection", why, sizeof why);
    failed(n, why);
}

void pg_direct_map_stale(pg_store *p)
{
    p->direct->map_at = 0;
}
