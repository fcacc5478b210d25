/* libmicrohttpd glue: daemon setup, per-thread workers, authentication and routing. */
#include "http/server.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sodium.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "auth/keys.h"
#include "auth/ratelimit.h"
#include "auth/secret.h"
#include "http/access_log.h"
#include "http/metrics.h"
#include "http/request.h"

#define BODY_MAX (64u << 20) /* a full page of 1000 records with long attributes fits */
#define KEY_REFRESH_MS 1000
/* Requests on one thread that start within this many microseconds share a read view (see
 * bd_store_share_reads): a search sees every import committed 2 ms before it arrived. */
#define READ_SHARE_US 2000
#define HEADER_MAX 8192 /* request line plus headers */
#define LOG_LINE_MAX 4096

/* What each worker thread keeps between requests. */
typedef struct worker {
    bd_store *store;
    bd_buf body;
    bd_buf log_line;
    bd_breach_json *breach_json; /* NULL when it could not be allocated: no caching */
    struct worker *next;
} worker;

struct bd_server {
    bd_server_config cfg;
    char db[1024];
    char base[128];
    size_t base_len;
    uint8_t secret[BD_SECRET_LEN];
    struct MHD_Daemon *daemon;
    bd_keyring *keys;
    bd_ratelimit *key_rates;  /* per API key, by plan */
    bd_ratelimit *auth_fails; /* per client address, failed keys only */
    bd_ratelimit *exact_rates; /* per API key, exact card-number and Hash: lookups */
    bd_metrics *metrics;
    bd_access_log *log;
    char *tls_cert, *tls_key; /* PEM text */
    pthread_mutex_t workers_lock;
    worker *workers;
    pthread_t refresher;
    pthread_mutex_t stop_lock;
    pthread_cond_t stop_cond;
    bool stopping;
    bool refresher_started;
    uint32_t id_prefix;
    _Atomic uint64_t id_counter;
};

static _Thread_local worker *tls_worker;

/* The calling thread's worker, opened on its first request. NULL when the store cannot be
 * opened (the request then gets a 503). */
static worker *this_worker(bd_server *srv)
{
    if (tls_worker)
        return tls_worker;
    worker *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    char why[256];
    if (bd_store_open(srv->db, BD_STORE_READ, &w->store, why, sizeof why) != BD_OK) {
        fprintf(stderr, "breachd: %s\n", why);
        free(w);
        return NULL;
    }
    bd_store_share_reads(w->store, READ_SHARE_US);
    bd_buf_init(&w->body, BODY_MAX);
    bd_buf_init(&w->log_line, LOG_LINE_MAX);
    w->breach_json = bd_breach_json_new();
    pthread_mutex_lock(&srv->workers_lock);
    w->next = srv->workers;
    srv->workers = w;
    pthread_mutex_unlock(&srv->workers_lock);
    tls_worker = w;
    return w;
}

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

static enum MHD_Result send_reply(struct MHD_Connection *conn, bd_req *rq)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(rq->body->len, rq->body->data, MHD_RESPMEM_MUST_COPY);
    if (!resp)
        return MHD_NO;
    MHD_add_response_header(resp, "Content-Type",
                            rq->content_type ? rq->content_type
                                             : "application/json; charset=utf-8");
    MHD_add_response_header(resp, "Cache-Control", "no-store");
    MHD_add_response_header(resp, "X-Request-Id", rq->request_id);
    if (rq->allow)
        MHD_add_response_header(resp, "Allow", rq->allow);
    char v[24];
    if (rq->retry_after > 0)
        MHD_add_response_header(resp, "Retry-After", bd_i64_text(rq->retry_after, v));
    if (rq->has_rate) {
        MHD_add_response_header(resp, "X-RateLimit-Limit", bd_i64_text(rq->rate_limit, v));
        MHD_add_response_header(resp, "X-RateLimit-Remaining", bd_i64_text(rq->rate_remaining, v));
        MHD_add_response_header(resp, "X-RateLimit-Reset", bd_i64_text(rq->rate_reset, v));
    }
    enum MHD_Result ret = MHD_queue_response(conn, (unsigned)rq->status, resp);
    MHD_destroy_response(resp);
    return ret;
}

static bool is_get(const char *method)
{
    return strcmp(method, MHD_HTTP_METHOD_GET) == 0 || strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
}

static void handle_health(bd_req *rq)
{
    bd_result r = bd_store_read_begin(rq->store);
    if (r == BD_OK)
        r = bd_store_ping(rq->store);
    bd_store_read_end(rq->store);
    if (r != BD_OK) {
        rq->retry_after = 1;
        bd_reply_error(rq, 503, "unavailable", "the store cannot be reached");
        return;
    }
    bd_reply_begin(rq, 200);
    bd_json_object_begin(&rq->json);
    bd_json_key(&rq->json, "status");
    bd_json_cstring(&rq->json, "ok");
    bd_json_object_end(&rq->json);
    bd_reply_finish(rq);
}

static int64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* A non-zero id for the client's address (port excluded), for the failed-key throttle. */
static uint64_t client_id(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const unsigned char *p = NULL;
    size_t n = 0;
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    if (ci && ci->client_addr) {
        if (ci->client_addr->sa_family == AF_INET) {
            p = (const unsigned char *)&((const struct sockaddr_in *)ci->client_addr)->sin_addr;
            n = 4;
        } else if (ci->client_addr->sa_family == AF_INET6) {
            p = (const unsigned char *)&((const struct sockaddr_in6 *)ci->client_addr)->sin6_addr;
            n = 16;
        }
    }
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ULL;
    return h ? h : 1;
}

/* A failed key: 401/403 as given, or 429 once the address has failed too often. */
static void auth_failure(bd_server *srv, bd_req *rq, int status, const char *code,
                         const char *message)
{
    bd_rate_decision d;
    bd_ratelimit_take(srv->auth_fails, client_id(rq->conn), srv->cfg.auth_fail_limit, 60, now_us(),
                      &d);
    if (!d.allowed) {
        bd_metrics_rate_limited(srv->metrics, true);
        rq->retry_after = d.retry_after;
        bd_reply_error(rq, 429, "rate_limited",
                       "too many failed API keys from your address; retry in %lld seconds",
                       (long long)d.retry_after);
        return;
    }
    bd_reply_error(rq, status, code, "%s", message);
}

/* Checks x-api-key and the key's budget; on failure writes the 401/403/429 reply. */
static bool authenticate(bd_server *srv, bd_req *rq)
{
    size_t len = 0;
    const char *key = NULL;
    if (MHD_lookup_connection_value_n(rq->conn, MHD_HEADER_KIND, "x-api-key", 9, &key, &len) !=
            MHD_YES ||
        !key || len == 0) {
        auth_failure(srv, rq, 401, "unauthorized", "send your API key in the x-api-key header");
        return false;
    }
    int64_t now = now_us();
    bd_key_status st = bd_keyring_lookup(srv->keys, (bd_slice){key, len}, now / 1000000, &rq->key);
    if (st == BD_KEY_EXPIRED) {
        auth_failure(srv, rq, 403, "authentication_failed",
                     "this API key has expired; ask your administrator for a new one");
        return false;
    }
    if (st != BD_KEY_VALID) {
        auth_failure(srv, rq, 403, "authentication_failed",
                     "the API key is not valid; check it or ask for a new one");
        return false;
    }
    bd_rate_decision d;
    bd_ratelimit_take(srv->key_rates, (uint64_t)rq->key.id, rq->key.rate_per_hour, 3600, now, &d);
    rq->has_rate = true;
    rq->rate_limit = d.limit;
    rq->rate_remaining = d.remaining;
    rq->rate_reset = d.reset;
    rq->authenticated = true;
    if (!d.allowed) {
        bd_metrics_rate_limited(srv->metrics, false);
        rq->retry_after = d.retry_after;
        bd_reply_error(rq, 429, "rate_limited",
                       "this key's limit of %lld requests per hour is used up; retry in %lld "
                       "seconds",
                       (long long)d.limit, (long long)d.retry_after);
        return false;
    }
    return true;
}

/* The resource a path under the base path names; BD_ROUTE_OTHER when none. */
static bd_route find_route(bd_slice path, bd_slice *arg)
{
    static const char prefix[] = "/breaches/";
    const size_t pl = sizeof prefix - 1;
    if (bd_slice_eq(path, "/breaches"))
        return BD_ROUTE_BREACHES;
    if (bd_slice_eq(path, "/breach-search"))
        return BD_ROUTE_BREACH_SEARCH;
    if (bd_slice_eq(path, "/credit-card-search"))
        return BD_ROUTE_CARD_SEARCH;
    if (path.len > pl && memcmp(path.ptr, prefix, pl) == 0 &&
        !memchr(path.ptr + pl, '/', path.len - pl)) {
        *arg = (bd_slice){path.ptr + pl, path.len - pl};
        return BD_ROUTE_BREACH;
    }
    return BD_ROUTE_OTHER;
}

static void handle_metrics(bd_server *srv, bd_req *rq)
{
    const union MHD_DaemonInfo *info =
        MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
    bd_reply_begin(rq, 200);
    rq->content_type = "text/plain; version=0.0.4; charset=utf-8";
    if (bd_metrics_write(srv->metrics, rq->body, info ? (int64_t)info->num_connections : -1) !=
        BD_OK) {
        rq->content_type = NULL;
        bd_reply_error(rq, 500, "internal_error", "metrics could not be written");
    }
}

/* Unauthenticated operational endpoints outside the base path. */
static bool dispatch_operational(bd_server *srv, bd_req *rq, const char *url, const char *method)
{
    if (strcmp(url, "/healthz") == 0)
        rq->route = BD_ROUTE_HEALTHZ;
    else if (strcmp(url, "/metrics") == 0)
        rq->route = BD_ROUTE_METRICS;
    else
        return false;
    if (!is_get(method)) {
        rq->allow = "GET, HEAD";
        bd_reply_error(rq, 405, "method_not_allowed", "use GET or HEAD");
    } else if (rq->route == BD_ROUTE_HEALTHZ) {
        handle_health(rq);
    } else {
        handle_metrics(srv, rq);
    }
    return true;
}

static void dispatch(bd_server *srv, bd_req *rq, const char *url, const char *method)
{
    size_t ulen = strlen(url);
    rq->route = BD_ROUTE_OTHER;
    if (dispatch_operational(srv, rq, url, method))
        return;
    if (ulen <= srv->base_len || memcmp(url, srv->base, srv->base_len) != 0 ||
        url[srv->base_len] != '/') {
        bd_reply_error(rq, 404, "not_found", "no such path; the API lives under %s/", srv->base);
        return;
    }
    if (!authenticate(srv, rq))
        return;
    rq->path = (bd_slice){url + srv->base_len, ulen - srv->base_len};
    bd_slice arg = {NULL, 0};
    rq->route = find_route(rq->path, &arg);
    if (rq->route == BD_ROUTE_OTHER) {
        bd_reply_error(rq, 404, "not_found",
                       "no such path; see the API reference for the four operations");
        return;
    }
    if (!is_get(method)) {
        rq->allow = "GET, HEAD";
        bd_reply_error(rq, 405, "method_not_allowed", "this API is read-only: use GET or HEAD");
        return;
    }
    switch (rq->route) {
    case BD_ROUTE_BREACHES:
        bd_handle_breach_list(rq);
        break;
    case BD_ROUTE_BREACH:
        bd_handle_breach_get(rq, arg);
        break;
    case BD_ROUTE_BREACH_SEARCH:
        bd_handle_breach_search(rq);
        break;
    case BD_ROUTE_CARD_SEARCH:
        bd_handle_card_search(rq);
        break;
    default:
        break;
    }
}

static enum MHD_Result add_header_size(void *cls, enum MHD_ValueKind kind, const char *key,
                                       size_t key_size, const char *value, size_t value_size)
{
    (void)kind;
    (void)key;
    size_t *total = cls;
    *total += key_size + value_size + 4; /* "name: value\r\n" */
    (void)value;
    return MHD_YES;
}

/* Request line and header bytes, as near as libmicrohttpd lets us count them. */
static size_t request_head_size(struct MHD_Connection *conn, const char *url, const char *method)
{
    size_t total = strlen(method) + strlen(url) + 12; /* " HTTP/1.1\r\n" */
    MHD_get_connection_values_n(conn, MHD_HEADER_KIND, add_header_size, &total);
    MHD_get_connection_values_n(conn, MHD_GET_ARGUMENT_KIND, add_header_size, &total);
    return total;
}

static void format_client(struct MHD_Connection *conn, char out[INET6_ADDRSTRLEN])
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    out[0] = '\0';
    if (!ci || !ci->client_addr)
        return;
    if (ci->client_addr->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)ci->client_addr)->sin_addr, out,
                  INET6_ADDRSTRLEN);
    else if (ci->client_addr->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ci->client_addr)->sin6_addr, out,
                  INET6_ADDRSTRLEN);
}

/* One JSON line per request; never the key, and the account only as a keyed hash. */
static void log_request(bd_server *srv, worker *w, const bd_req *rq, const char *method,
                        int64_t start_us, int64_t micros)
{
    char client[INET6_ADDRSTRLEN], when[40];
    time_t secs = (time_t)(start_us / 1000000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    size_t n = strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(when + n, sizeof when - n, ".%03dZ", (int)(start_us / 1000 % 1000));
    format_client(rq->conn, client);
    bd_buf *b = &w->log_line;
    bd_buf_reset(b);
    bd_json j;
    bd_json_init(&j, b);
    bd_json_object_begin(&j);
    bd_json_key(&j, "time");
    bd_json_cstring(&j, when);
    bd_json_key(&j, "request_id");
    bd_json_cstring(&j, rq->request_id);
    bd_json_key(&j, "key_id");
    if (rq->authenticated)
        bd_json_int(&j, rq->key.id);
    else
        bd_json_null(&j);
    bd_json_key(&j, "client");
    bd_json_cstring(&j, client);
    bd_json_key(&j, "method");
    bd_json_string(&j, (bd_slice){method, strnlen(method, 16)});
    bd_json_key(&j, "route");
    bd_json_cstring(&j, bd_route_name(rq->route));
    bd_json_key(&j, "status");
    bd_json_int(&j, rq->status);
    bd_json_key(&j, "bytes");
    bd_json_int(&j, (int64_t)rq->body->len);
    bd_json_key(&j, "micros");
    bd_json_int(&j, micros);
    bd_json_key(&j, "records");
    if (rq->records >= 0)
        bd_json_int(&j, rq->records);
    else
        bd_json_null(&j);
    bd_json_key(&j, "account_hash");
    bd_json_cstring(&j, rq->account_hash[0] ? rq->account_hash : NULL);
    bd_json_object_end(&j);
    if (bd_json_result(&j) == BD_OK && bd_buf_append_char(b, '\n') == BD_OK)
        bd_access_log_write(srv->log, b->data, b->len);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
    (void)version;
    (void)upload_data;
    bd_server *srv = cls;
    /* The first call only announces the request; answering then makes libmicrohttpd close
     * the connection, so the reply is queued on the next call, once any body is read. The
     * per-request pointer carries the start time (never 0), which saves an allocation. */
    if (!*con_cls) {
        *con_cls = (void *)(uintptr_t)now_us();
        return MHD_YES;
    }
    if (*upload_data_size) { /* this API takes no request body: discard it */
        *upload_data_size = 0;
        return MHD_YES;
    }
    int64_t start = (int64_t)(uintptr_t)*con_cls;
    /* Zeroing the 2 KiB parameter array for every request shows in profiles; only the
     * first nparams entries are ever read. */
    bd_req rq;
    memset(&rq, 0, offsetof(bd_req, params));
    memset((char *)&rq + offsetof(bd_req, nparams), 0, sizeof rq - offsetof(bd_req, nparams));
    rq.conn = conn;
    rq.secret = srv->secret;
    rq.exact_rates = srv->exact_rates;
    rq.records = -1;
    rq.log_account = srv->log != NULL;
    uint64_t n = atomic_fetch_add_explicit(&srv->id_counter, 1, memory_order_relaxed);
    snprintf(rq.request_id, sizeof rq.request_id, "%08x%08x", srv->id_prefix, (uint32_t)n);
    worker *w = this_worker(srv);
    static _Thread_local bd_buf fallback; /* for replying when no worker could be made */
    if (!w) {
        if (!fallback.max)
            bd_buf_init(&fallback, 4096);
        rq.body = &fallback;
        rq.retry_after = 1;
        bd_reply_error(&rq, 503, "unavailable", "the store cannot be reached");
        bd_metrics_store_error(srv->metrics);
        return send_reply(conn, &rq);
    }
    rq.store = w->store;
    rq.body = &w->body;
    rq.breach_json = w->breach_json;
    if (request_head_size(conn, url, method) > HEADER_MAX) {
        bd_reply_error(&rq, 431, "header_too_large",
                       "the request line and headers must fit in %d bytes", HEADER_MAX);
    } else {
        MHD_get_connection_values_n(conn, MHD_GET_ARGUMENT_KIND, collect_param, &rq);
        dispatch(srv, &rq, url, method);
    }
    enum MHD_Result ret = send_reply(conn, &rq);
    int64_t micros = now_us() - start;
    if (rq.store_failed)
        bd_metrics_store_error(srv->metrics);
    bd_metrics_request(srv->metrics, rq.route, rq.status, micros);
    if (srv->log)
        log_request(srv, w, &rq, method, start, micros);
    return ret;
}

static void *refresh_keys(void *arg)
{
    bd_server *srv = arg;
    bd_store *s = NULL;
    char why[256];
    pthread_mutex_lock(&srv->stop_lock);
    while (!srv->stopping) {
        pthread_mutex_unlock(&srv->stop_lock);
        if (!s && bd_store_open(srv->db, BD_STORE_READ, &s, why, sizeof why) != BD_OK)
            fprintf(stderr, "breachd: key refresh: %s\n", why);
        if (s && bd_keyring_refresh(srv->keys, s) != BD_OK) {
            bd_store_close(s); /* reopen next time round */
            s = NULL;
        }
        pthread_mutex_lock(&srv->workers_lock);
        for (worker *w = srv->workers; w; w = w->next)
            bd_store_release_idle(w->store);
        pthread_mutex_unlock(&srv->workers_lock);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += (long)KEY_REFRESH_MS * 1000000L;
        until.tv_sec += until.tv_nsec / 1000000000L;
        until.tv_nsec %= 1000000000L;
        pthread_mutex_lock(&srv->stop_lock);
        if (!srv->stopping)
            pthread_cond_timedwait(&srv->stop_cond, &srv->stop_lock, &until);
    }
    pthread_mutex_unlock(&srv->stop_lock);
    bd_store_close(s);
    return NULL;
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
    fputs("breachd: http: ", stderr);
    vfprintf(stderr, fmt, ap);
}

/* Reads a PEM file (certificate or key) into a NUL-terminated string. */
static bd_result read_pem(const char *path, char **out, char *why, size_t whylen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(why, whylen, "cannot read %s", path);
        return BD_ERR_IO;
    }
    bd_buf b;
    bd_buf_init(&b, 1 << 20);
    char chunk[4096];
    size_t n;
    bd_result r = BD_OK;
    while (r == BD_OK && (n = fread(chunk, 1, sizeof chunk, f)) > 0)
        r = bd_buf_append(&b, chunk, n);
    fclose(f);
    if (r != BD_OK || b.len == 0) {
        bd_buf_free(&b);
        snprintf(why, whylen, "%s is empty or larger than 1 MiB", path);
        return BD_ERR_INVALID;
    }
    *out = b.data;
    return BD_OK;
}

bd_result bd_server_start(const bd_server_config *cfg, bd_server **out, char *why, size_t whylen)
{
    *out = NULL;
    if (sodium_init() < 0)
        return BD_ERR_CRYPTO;
    bd_server *srv = calloc(1, sizeof *srv);
    if (!srv)
        return BD_ERR_NOMEM;
    srv->cfg = *cfg;
    pthread_mutex_init(&srv->workers_lock, NULL);
    pthread_mutex_init(&srv->stop_lock, NULL);
    pthread_cond_init(&srv->stop_cond, NULL);
    bd_result r = BD_ERR_INVALID;
    snprintf(srv->db, sizeof srv->db, "%s", cfg->db);
    const char *base = cfg->base_path ? cfg->base_path : "/v7";
    size_t bl = strlen(base);
    while (bl > 0 && base[bl - 1] == '/')
        bl--;
    if (bl == 0 || base[0] != '/' || bl >= sizeof srv->base) {
        snprintf(why, whylen, "--base-path must start with '/', like /v7");
        goto fail;
    }
    memcpy(srv->base, base, bl);
    srv->base[bl] = '\0';
    srv->base_len = bl;

    char secret_path[1100];
    if (cfg->secret_path)
        snprintf(secret_path, sizeof secret_path, "%s", cfg->secret_path);
    else
        bd_secret_default_path(cfg->db, secret_path, sizeof secret_path);
    r = bd_secret_load(secret_path, srv->secret, why, whylen);
    if (r != BD_OK)
        goto fail;

    /* Open once up front so that a wrong path or a foreign secret fails at start. */
    bd_store *s;
    r = bd_store_open(srv->db, BD_STORE_READ, &s, why, whylen);
    if (r != BD_OK)
        goto fail;
    char want[65], have[65];
    bd_secret_fingerprint(srv->secret, want);
    r = bd_store_meta_get(s, "secret_fingerprint", have, sizeof have);
    if (r != BD_OK || strcmp(want, have) != 0) {
        bd_store_close(s);
        snprintf(why, whylen, "the secret file %s does not belong to the store %s", secret_path,
                 cfg->db);
        r = BD_ERR_INVALID;
        goto fail;
    }
    if (!srv->cfg.auth_fail_limit)
        srv->cfg.auth_fail_limit = 60;
    srv->key_rates = bd_ratelimit_new(1u << 16);
    srv->auth_fails = bd_ratelimit_new(1u << 14);
    srv->exact_rates = bd_ratelimit_new(1u << 16);
    if (!srv->key_rates || !srv->auth_fails || !srv->exact_rates) {
        bd_store_close(s);
        r = BD_ERR_NOMEM;
        goto fail;
    }
    srv->keys = bd_keyring_new();
    r = srv->keys ? bd_keyring_refresh(srv->keys, s) : BD_ERR_NOMEM;
    bd_store_close(s);
    if (r != BD_OK) {
        snprintf(why, whylen, "cannot load API keys from the store");
        goto fail;
    }

    struct sockaddr_storage addr;
    bool v6;
    if (!parse_listen(cfg->listen ? cfg->listen : "127.0.0.1:8080", &addr, &v6)) {
        snprintf(why, whylen, "--listen must be host:port, like 127.0.0.1:8080 or [::1]:8080");
        r = BD_ERR_INVALID;
        goto fail;
    }
    srv->metrics = bd_metrics_new();
    if (!srv->metrics) {
        r = BD_ERR_NOMEM;
        goto fail;
    }
    if (cfg->access_log) {
        r = bd_access_log_open(cfg->access_log, &srv->log, why, whylen);
        if (r != BD_OK)
            goto fail;
    }
    if (!cfg->tls_cert != !cfg->tls_key) {
        snprintf(why, whylen, "--tls-cert and --tls-key go together");
        r = BD_ERR_INVALID;
        goto fail;
    }
    if (cfg->tls_cert) {
        r = read_pem(cfg->tls_cert, &srv->tls_cert, why, whylen);
        if (r == BD_OK)
            r = read_pem(cfg->tls_key, &srv->tls_key, why, whylen);
        if (r != BD_OK)
            goto fail;
    }
    randombytes_buf(&srv->id_prefix, sizeof srv->id_prefix);
    unsigned threads = cfg->threads;
    if (threads == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        threads = n > 0 ? (unsigned)n : 1;
    }
    /* TURBO: read and write sockets before asking epoll, saving a round trip per request on
     * busy keep-alive connections. */
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG |
                     MHD_USE_ITC | MHD_USE_TURBO;
    if (v6)
        flags |= MHD_USE_IPv6;
    if (srv->tls_cert)
        flags |= MHD_USE_TLS;
    struct MHD_OptionItem opts[] = {
        {MHD_OPTION_SOCK_ADDR, 0, &addr},
        {MHD_OPTION_THREAD_POOL_SIZE, threads, NULL},
        {MHD_OPTION_CONNECTION_TIMEOUT, cfg->conn_timeout ? cfg->conn_timeout : 30, NULL},
        {MHD_OPTION_CONNECTION_LIMIT, cfg->max_conns ? cfg->max_conns : 4096, NULL},
        {MHD_OPTION_PER_IP_CONNECTION_LIMIT, cfg->max_conns_per_ip, NULL},
        /* Each connection's buffer pool: room for a request somewhat past HEADER_MAX and
         * its parsed headers, so it reaches the handler and gets a JSON 431 (larger ones
         * get libmicrohttpd's own 414/431), and small enough that 1,000 idle keep-alive
         * connections stay within a few tens of MiB. */
        {MHD_OPTION_CONNECTION_MEMORY_LIMIT, 20 * 1024, NULL},
        {MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024, NULL},
        {srv->tls_cert ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, srv->tls_cert},
        {MHD_OPTION_HTTPS_MEM_KEY, 0, srv->tls_key},
        {MHD_OPTION_END, 0, NULL},
    };
    srv->daemon =
        MHD_start_daemon(flags, 0, NULL, NULL, on_request, srv, MHD_OPTION_EXTERNAL_LOGGER, mhd_log,
                         NULL, MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
    if (!srv->daemon) {
        snprintf(why, whylen, "cannot listen on %s (in use, or not an address of this host)",
                 cfg->listen ? cfg->listen : "127.0.0.1:8080");
        r = BD_ERR_IO;
        goto fail;
    }
    if (pthread_create(&srv->refresher, NULL, refresh_keys, srv) != 0) {
        snprintf(why, whylen, "cannot start the key refresh thread");
        r = BD_ERR_NOMEM;
        goto fail;
    }
    srv->refresher_started = true;
    *out = srv;
    return BD_OK;
fail:
    bd_server_stop(srv, 0);
    return r;
}

uint16_t bd_server_port(const bd_server *srv)
{
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : 0;
}

void bd_server_reopen_log(bd_server *srv)
{
    char why[256];
    if (srv->log && bd_access_log_reopen(srv->log, why, sizeof why) != BD_OK)
        fprintf(stderr, "breachd: %s\n", why);
}

void bd_server_stop(bd_server *srv, unsigned drain_s)
{
    if (!srv)
        return;
    if (srv->daemon) {
        /* Stop accepting, then give open connections (requests in flight, and keep-alive
         * clients reading their last reply) time to finish before closing them. */
        MHD_socket ls = MHD_quiesce_daemon(srv->daemon);
        if (ls != MHD_INVALID_SOCKET)
            close(ls);
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
        MHD_stop_daemon(srv->daemon);
    }
    if (srv->refresher_started) {
        pthread_mutex_lock(&srv->stop_lock);
        srv->stopping = true;
        pthread_cond_signal(&srv->stop_cond);
        pthread_mutex_unlock(&srv->stop_lock);
        pthread_join(srv->refresher, NULL);
    }
    for (worker *w = srv->workers, *next; w; w = next) {
        next = w->next;
        bd_store_close(w->store);
        bd_buf_free(&w->body);
        bd_buf_free(&w->log_line);
        bd_breach_json_free(w->breach_json);
        free(w);
    }
    bd_keyring_free(srv->keys);
    bd_ratelimit_free(srv->key_rates);
    bd_ratelimit_free(srv->auth_fails);
    bd_ratelimit_free(srv->exact_rates);
    bd_metrics_free(srv->metrics);
    bd_access_log_close(srv->log);
    free(srv->tls_cert);
    if (srv->tls_key)
        sodium_memzero(srv->tls_key, strlen(srv->tls_key));
    free(srv->tls_key);
    sodium_memzero(srv->secret, sizeof srv->secret);
    pthread_mutex_destroy(&srv->workers_lock);
    pthread_mutex_destroy(&srv->stop_lock);
    pthread_cond_destroy(&srv->stop_cond);
    free(srv);
}
