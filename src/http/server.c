/* libmicrohttpd glue: the daemon, its start and drain, the per-thread workers, and a
 * request's path through the guard, routing and the reply. The listening socket is
 * listener.c's, the server object's assembly (defaults, secret, parts, free) server_open.c's,
 * authentication auth.c's, routing router.c's, the connection guard guard.c's. */
#include "http/server.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"
#include "http/listener.h"
#include "http/pg_dispatch.h"
#include "http/routes.h"
#include "http/server_impl.h"
#include "store/pool.h"

/* Each connection's buffer pool. libmicrohttpd 0.9.75 clears the whole pool between the
 * requests of a keep-alive connection, so every idle connection costs all of it: 48 KiB
 * keeps 1,000 idle connections at 49 MiB (the bench's bound is 64). Within it every head
 * up to 8 KiB and past reaches breachd and gets a JSON 431, and up to about 600 query
 * parameters a JSON 400 (300 found libmicrohttpd's former 20 KiB pool exhausted, with no
 * reply at all). A query of more parameters than that exhausts the pool before breachd sees
 * it: libmicrohttpd can send nothing, and the guard closes it at the header deadline. */
#define CONN_POOL (48u * 1024)

/* The per-request pointer libmicrohttpd keeps for us: the start time in microseconds
 * shifted past a few flag bits, which saves an allocation per request. */
#define REQ_FLAG_BITS 4
#define REQ_ANNOUNCED 8u /* the head was checked at the first call */
_Static_assert(sizeof(uintptr_t) >= 8, "the request pointer carries a 64-bit time");

/* What a connection keeps between the calls of its request (its socket context): the body
 * being received, and what the head decided when it let the request through. Only the
 * thread serving the connection touches it. */
typedef struct {
    bd_upload *upload;
    bd_screened screened;
    /* a request whose reply waits, its connection suspended (request.h, bd_deferred): the
     * work, and the request as the handler left it */
    bd_deferred *deferred;
    bd_req *saved;
} conn_state;

static enum MHD_Result collect_param(void *cls, enum MHD_ValueKind kind, const char *key,
                                     size_t key_size, const char *value, size_t value_size)
{
    (void)kind;
    bd_req *rq = cls;
    if (rq->nparams == BD_MAX_PARAMS) {
        rq->too_many_params = true;
        return MHD_NO;
    }
    if (strlen(key) != key_size || (value && strlen(value) != value_size))
        rq->bad_param_bytes = true;
    rq->params[rq->nparams++] = (bd_param){{key, key_size}, {value, value ? value_size : 0}};
    return MHD_YES;
}

/* A request id that says nothing about request volume: a keyed hash of a per-thread
 * salt and counter. */
static void new_request_id(const bd_server *srv, char out[BD_REQUEST_ID_LEN + 1])
{
    static _Thread_local uint64_t seq[2];
    if (!seq[0])
        randombytes_buf(&seq[0], sizeof seq[0]);
    seq[1]++;
    uint8_t h[crypto_shorthash_BYTES];
    crypto_shorthash(h, (const uint8_t *)seq, sizeof seq, srv->id_key);
    sodium_bin2hex(out, BD_REQUEST_ID_LEN + 1, h, sizeof h);
}

/* The body of a 503 for a thread whose worker could not be made (the store unreachable):
 * one buffer per server thread, freed when the thread ends (a key's destructor; the
 * thread-local storage itself outlives it). */
static pthread_key_t fallback_key;
static bool fallback_keyed; /* false only if the process ran out of keys: 4 KiB per thread
                               then stay allocated until the process ends */
static pthread_once_t fallback_once = PTHREAD_ONCE_INIT;

static void free_fallback(void *b)
{
    bd_buf_free(b);
}

static void make_fallback_key(void)
{
    fallback_keyed = pthread_key_create(&fallback_key, free_fallback) == 0;
}

static bd_buf *fallback_body(void)
{
    static _Thread_local bd_buf fallback;
    if (!fallback.max) {
        pthread_once(&fallback_once, make_fallback_key);
        bd_buf_init(&fallback, 4096);
        if (fallback_keyed)
            pthread_setspecific(fallback_key, &fallback);
    }
    return &fallback;
}

/* Fills rq for a request on the calling thread; false when no worker could be opened (rq
 * then holds a 503 in the thread's fallback buffer). */
static bool begin_request(bd_server *srv, struct MHD_Connection *conn, bd_req *rq, bd_worker **wp)
{
    /* Zeroing the 2 KiB parameter array for every request shows in profiles; only the
     * first nparams entries are ever read. */
    memset(rq, 0, offsetof(bd_req, params));
    memset((char *)rq + offsetof(bd_req, nparams), 0, sizeof *rq - offsetof(bd_req, nparams));
    rq->conn = conn;
    rq->secret = srv->secret;
    rq->limiter = srv->limiter;
    rq->usage = srv->usage;
    rq->lookups = srv->lookups;
    rq->records = -1;
    rq->log_account = srv->log != NULL;
    rq->empty_search_status = srv->cfg.empty_search_status;
    rq->cors_allow = bd_cors_allowed(&srv->cors, conn); /* errors too: a browser reads them */
    new_request_id(srv, rq->request_id);
    bd_worker *w = *wp = bd_worker_of_thread(srv);
    if (!w) {
        rq->body = fallback_body();
        rq->retry_after = 1;
        bd_reply_error(rq, 503, "unavailable", "the store cannot be reached");
        bd_metrics_store_error(srv->metrics);
        return false;
    }
    rq->store = w->store;
    rq->worker = w;
    rq->body = &w->body;
    rq->breach_json = w->breach_json;
    rq->replies = w->replies;
    return true;
}

/* Sends the reply, counts it and logs it. */
static enum MHD_Result finish_request(bd_server *srv, bd_worker *w, bd_req *rq, const char *method,
                                      int64_t start)
{
    enum MHD_Result ret = bd_send_reply(srv, rq->conn, rq);
    int64_t micros = bd_now_us() - start;
    if (rq->store_failed)
        bd_metrics_store_error(srv->metrics);
    if (rq->exact_refused)
        bd_metrics_rate_limited(srv->metrics, BD_LIMIT_EXACT_LOOKUPS);
    bd_metrics_request(srv->metrics, bd_route_index(rq->route), rq->status, micros);
    if (srv->log && w)
        bd_log_request(srv, w, rq, method, start, micros);
    return ret;
}

/* The head of a write that announces a body (body: its Content-Length, or -1 when chunked):
 * routed and authenticated now, before a byte of the body is read, exactly as its last call
 * would, so that a request refused (401, 403, 404, 405, 413, 429) never sends its body and
 * gets no 100 Continue. True when it is let through: its key, counted now, is kept in cs for
 * the last call, and a body its resource reads has its share of the server's budget. False
 * with the refusal in rq. */
static bool screen(bd_server *srv, conn_state *cs, bd_req *rq, const char *url, const char *method,
                   int64_t body)
{
    MHD_get_connection_values_n(rq->conn, MHD_GET_ARGUMENT_KIND, collect_param, rq);
    rq->method = method;
    rq->screening = true;
    rq->announced = body;
    bd_dispatch(srv, rq, url, method);
    if (rq->status)
        return false;
    if (!cs || (rq->body_cap &&
                !bd_upload_expect(cs->upload, rq->body_cap, body > 0 ? (size_t)body : 0))) {
        bd_reply_no_room(rq);
        return false;
    }
    cs->screened = (bd_screened){rq->authenticated,  rq->key,       rq->has_rate, rq->rate_limit,
                                 rq->rate_remaining, rq->rate_reset};
    return true;
}

/* The first call, once the head is in: a head that fails the framing checks, or a write whose
 * body would be refused, is answered now, before any body is read, and the connection closes
 * after the reply. (A reply queued at the first call closes the connection in libmicrohttpd,
 * so a request without a body is answered at its second.) */
static enum MHD_Result check_head(bd_server *srv, conn_state *cs, struct MHD_Connection *conn,
                                  const char *url, const char *method, const char *version,
                                  uint64_t v)
{
    bd_head_problem p;
    bd_guard_check_head(conn, url, method, version, (unsigned)(v & (REQ_ANNOUNCED - 1)), &p);
    if (!p.status && (p.body == 0 || !bd_method_takes_body(method)))
        return MHD_YES;
    bd_req rq;
    bd_worker *w;
    bool opened = begin_request(srv, conn, &rq, &w); /* else rq holds a 503 */
    if (p.status)
        bd_reply_error(&rq, p.status, p.code, "%s", p.message);
    else if (opened && screen(srv, cs, &rq, url, method, p.body))
        return MHD_YES; /* the body comes; the last call answers */
    rq.close = true;
    return finish_request(srv, w, &rq, method, (int64_t)(v >> REQ_FLAG_BITS));
}

/* Suspends the connection of a request whose reply waits, with a copy of the request kept
 * for its resumption, and starts the work. False (the deferral given up, a 500 written)
 * when the copy cannot be made. */
static bool suspend(struct MHD_Connection *conn, conn_state *cs, bd_req *rq)
{
    bd_deferred *d = rq->deferred;
    rq->deferred = NULL;
    bd_req *saved = malloc(sizeof *saved);
    if (!saved) {
        d->free(d);
        bd_reply_error(rq, 500, "internal_error", "out of memory; request id %s",
                       rq->request_id);
        return false;
    }
    memcpy(saved, rq, sizeof *saved);
    cs->saved = saved;
    cs->deferred = d;
    d->conn = conn;
    MHD_suspend_connection(conn);
    if (!d->start(d))
        MHD_resume_connection(conn); /* finish runs at once, on this thread's next round */
    return true;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
    bd_server *srv = cls;
    uint64_t v = (uint64_t)(uintptr_t)*con_cls; /* set by on_uri for every request */
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    conn_state *cs = ci ? ci->socket_context : NULL;
    if (!(v & REQ_ANNOUNCED)) {
        *con_cls = (void *)(uintptr_t)(v | REQ_ANNOUNCED);
        return check_head(srv, cs, conn, url, method, version, v);
    }
    if (*upload_data_size) { /* kept when the head was let through to a resource reading it */
        if (cs)
            bd_upload_take(cs->upload, upload_data, *upload_data_size);
        *upload_data_size = 0;
        return MHD_YES;
    }
    int64_t start = (int64_t)(v >> REQ_FLAG_BITS);
    bd_req rq;
    bd_worker *w;
    if (cs && cs->deferred) { /* resumed: the work is done, the reply is written now */
        bd_deferred *d = cs->deferred;
        memcpy(&rq, cs->saved, sizeof rq);
        free(cs->saved);
        cs->saved = NULL;
        cs->deferred = NULL;
        w = bd_worker_of_thread(srv); /* the connection's thread: the one that suspended it */
        if (w) {
            rq.worker = w;
            rq.store = w->store;
            rq.body = &w->body;
            rq.breach_json = w->breach_json;
            rq.replies = w->replies;
            d->finish(d, &rq);
        } else {
            rq.body = fallback_body();
            rq.retry_after = 1;
            bd_reply_error(&rq, 503, "unavailable", "the store cannot be reached");
            bd_metrics_store_error(srv->metrics);
        }
        d->free(d);
    } else {
        bd_guard_request_in(srv->guard, conn);
        if (begin_request(srv, conn, &rq, &w)) {
            MHD_get_connection_values_n(conn, MHD_GET_ARGUMENT_KIND, collect_param, &rq);
            rq.method = method;
            if (cs) { /* without it no head announcing a body was let through */
                rq.screened = cs->screened.on ? &cs->screened : NULL;
                rq.upload = bd_upload_body(cs->upload, &rq.upload_state);
                rq.can_defer = srv->pg_batch != NULL && !cs->saved;
            }
            bd_dispatch(srv, &rq, url, method);
            if (rq.deferred && !rq.status && suspend(conn, cs, &rq))
                return MHD_YES; /* resumed when the work is done */
            if (rq.deferred) /* a reply written after all: the work is not started */
                rq.deferred->free(rq.deferred);
        }
    }
    enum MHD_Result ret = finish_request(srv, w, &rq, method, start);
    if (cs) {
        bd_upload_done(cs->upload);
        cs->screened.on = false;
    }
    return ret;
}

/* Called once per request with the raw request target, before libmicrohttpd decodes it in
 * place; what it returns is the request's *con_cls. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
    (void)cls;
    (void)conn;
    uint64_t v = ((uint64_t)bd_now_us() << REQ_FLAG_BITS) | bd_guard_uri_flags(uri);
    return (void *)(uintptr_t)v;
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    bd_server *srv = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        conn_state *cs = calloc(1, sizeof *cs);
        if (cs && !(cs->upload = bd_upload_new(&srv->uploads))) {
            free(cs);
            cs = NULL; /* its writes are refused with a 503 (screen) */
        }
        *socket_context = cs;
        bd_guard_opened(srv->guard, conn);
    } else {
        conn_state *cs = *socket_context;
        if (cs) /* a body abandoned mid-way gives its share of the budget back here */
            bd_upload_free(cs->upload);
        if (cs && cs->deferred) /* never while suspended: only a resumed one is closed */
            cs->deferred->free(cs->deferred);
        if (cs)
            free(cs->saved);
        free(cs);
        *socket_context = NULL;
        bd_guard_closed(srv->guard, conn);
    }
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)con_cls;
    (void)toe;
    bd_server *srv = cls;
    bd_guard_reply_sent(srv->guard, conn);
}

/* One round of the key refresh (app/svc_maintenance.c calls it once a second, on a thread
 * of its own): the keys are read again on the thread's connection of the read pool, dropped
 * after a failure so that the next round opens a new one. */
void bd_server_refresh_keys(bd_server *srv)
{
    bd_store *s;
    char why[256];
    if (bd_store_pool_get(srv->cfg.reads_pool, &s, why, sizeof why) != BD_OK) {
        bd_log(BD_LOG_ERROR, "auth", "key refresh: %s", why);
        return;
    }
    if (bd_keyring_refresh(srv->keys, s) != BD_OK)
        bd_store_pool_drop(srv->cfg.reads_pool); /* opened anew next time round */
}

void bd_server_release_idle_reads(bd_server *srv)
{
    pthread_mutex_lock(&srv->workers_lock);
    for (bd_worker *w = srv->workers; w; w = w->next)
        bd_store_release_idle(w->store);
    pthread_mutex_unlock(&srv->workers_lock);
}

bd_limiter *bd_server_limiter(bd_server *srv)
{
    return srv->limiter;
}

bd_usage *bd_server_usage(bd_server *srv)
{
    return srv->usage;
}

void bd_server_set_job_runner(bd_server *srv, struct bd_job_runner *runner)
{
    srv->runner = runner;
}

void bd_server_set_pg_batch(bd_server *srv, struct bd_pg_batch *b)
{
    srv->pg_batch = b;
}

struct bd_pg_batch *bd_server_pg_batch(const bd_server *srv)
{
    return srv->pg_batch;
}

void bd_server_set_lookup_log(bd_server *srv, struct bd_lookup_log *log)
{
    srv->lookups = log;
}

const char *bd_server_db(const bd_server *srv)
{
    return srv->db;
}

/* Parses "host:port" or "[v6]:port" into a socket address. */
static bool parse_listen(const char *listen, struct sockaddr_storage *ss, bool *v6)
{
    char host[128];
    const char *colon = strrchr(listen, ':');
    if (!colon)
        return false;
    size_t hl = (size_t)(colon - listen);
    if (hl >= sizeof host)
        return false;
    memcpy(host, listen, hl);
    host[hl] = '\0';
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (*end || end == colon + 1 || port < 0 || port > 65535)
        return false;
    memset(ss, 0, sizeof *ss);
    if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
        host[hl - 1] = '\0';
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
        a->sin6_family = AF_INET6;
        a->sin6_port = htons((uint16_t)port);
        *v6 = true;
        return inet_pton(AF_INET6, host + 1, &a->sin6_addr) == 1;
    }
    struct sockaddr_in *a = (struct sockaddr_in *)ss;
    a->sin_family = AF_INET;
    a->sin_port = htons((uint16_t)port);
    *v6 = false;
    if (hl == 0) {
        a->sin_addr.s_addr = htonl(INADDR_ANY);
        return true;
    }
    return inet_pton(AF_INET, host, &a->sin_addr) == 1;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char msg[BD_LOG_MESSAGE_MAX];
    vsnprintf(msg, sizeof msg, fmt, ap);
    bd_log(BD_LOG_ERROR, "http", "http: %s", msg);
}

/* Raises the descriptor limit as far as allowed and keeps the connection cap below it, so
 * a flood meets the cap (and other addresses are still served), never EMFILE. */
static unsigned connection_cap(unsigned wanted)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return wanted;
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    const rlim_t reserve = 64; /* store files, the log, the listening sockets */
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < wanted + reserve)
        return rl.rlim_cur > reserve * 2 ? (unsigned)(rl.rlim_cur - reserve) : 64;
    return wanted;
}

static bd_result start_daemon(bd_server *srv, char *why, size_t whylen)
{
    const bd_server_config *cfg = &srv->cfg;
    struct sockaddr_storage addr;
    bool v6;
    if (!parse_listen(cfg->listen, &addr, &v6)) {
        snprintf(why, whylen, "--listen must be host:port, like 127.0.0.1:8080 or [::1]:8080");
        return BD_ERR_INVALID;
    }
    unsigned threads = cfg->threads;
    if (threads == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        threads = n > 0 ? (unsigned)n : 1;
    }
    /* TURBO: read and write sockets before asking epoll, saving a round trip per request on
     * busy keep-alive connections. NO_LISTEN_SOCKET: listener.c accepts and hands
     * connections over (ITC lets it wake the worker it chose). */
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG |
                     MHD_USE_ITC | MHD_USE_TURBO | MHD_USE_NO_LISTEN_SOCKET;
    if (v6)
        flags |= MHD_USE_IPv6;
    if (srv->pg_batch) /* searches wait for the lookup dispatcher with their connection suspended */
        flags |= MHD_ALLOW_SUSPEND_RESUME;
    if (srv->tls_cert)
        flags |= MHD_USE_TLS;
    char bind_why[128];
    if (bd_listener_open((const struct sockaddr *)&addr,
                         v6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in), 1024,
                         &srv->listener, bind_why, sizeof bind_why) != BD_OK) {
        snprintf(why, whylen, "cannot listen on %s: %s", cfg->listen, bind_why);
        return BD_ERR_IO;
    }
    unsigned cap = connection_cap(cfg->max_conns);
    struct MHD_OptionItem opts[] = {
        {MHD_OPTION_THREAD_POOL_SIZE, threads, NULL},
        {MHD_OPTION_CONNECTION_TIMEOUT, cfg->conn_timeout, NULL},
        {MHD_OPTION_CONNECTION_LIMIT, cap, NULL},
        {MHD_OPTION_PER_IP_CONNECTION_LIMIT, cfg->max_conns_per_ip, NULL},
        {MHD_OPTION_CONNECTION_MEMORY_LIMIT, CONN_POOL, NULL},
        {MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)on_uri, srv},
        {MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_connection, srv},
        {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, srv},
        {srv->tls_cert ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, srv->tls_cert},
        {MHD_OPTION_HTTPS_MEM_KEY, 0, srv->tls_key},
        {MHD_OPTION_END, 0, NULL},
    };
    srv->daemon =
        MHD_start_daemon(flags, 0, NULL, NULL, on_request, srv, MHD_OPTION_EXTERNAL_LOGGER, mhd_log,
                         NULL, MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
    if (!srv->daemon || bd_listener_start(srv->listener, srv->daemon, cap) != BD_OK) {
        snprintf(why, whylen, "cannot serve on %s (the HTTP daemon did not start)", cfg->listen);
        bd_server_close_listener(srv);
        return BD_ERR_IO;
    }
    return BD_OK;
}

uint16_t bd_server_port(const bd_server *srv)
{
    return bd_listener_port(srv->listener);
}

bd_result bd_server_listen(bd_server *srv, char *why, size_t whylen)
{
    return start_daemon(srv, why, whylen);
}

void bd_server_quiesce(bd_server *srv, unsigned drain_s)
{
    if (!srv->daemon)
        return;
    /* Stop accepting, then give open connections (requests in flight, and keep-alive
     * clients reading their last reply) time to finish before closing them. */
    atomic_store_explicit(&srv->draining, true, memory_order_relaxed);
    bd_listener_close(srv->listener);
    srv->listener = NULL;
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        const union MHD_DaemonInfo *info =
            MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (!info || info->num_connections == 0 || now.tv_sec - start.tv_sec >= drain_s)
            break;
        struct timespec pause = {0, 20 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
}

void bd_server_close_listener(bd_server *srv)
{
    bd_listener_close(srv->listener); /* first: it hands connections to the daemon */
    srv->listener = NULL;
    if (srv->daemon)
        MHD_stop_daemon(srv->daemon);
    srv->daemon = NULL;
}
