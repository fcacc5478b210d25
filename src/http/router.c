/* Routing: the operational endpoints, then authentication and the four operations under
 * the base path. */
#include <microhttpd.h>
#include <string.h>

#include "http/openapi.h"
#include "http/server_impl.h"

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

static void handle_metrics(bd_server *srv, bd_req *rq)
{
    const union MHD_DaemonInfo *info =
        MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
    bd_reply_begin(rq, 200);
    rq->content_type = "text/plain; version=0.0.4; charset=utf-8";
    bd_limiter_health lh;
    bd_limiter_health_get(srv->limiter, &lh);
    if (bd_metrics_write(srv->metrics, rq->body, info ? (int64_t)info->num_connections : -1,
                         bd_guard_cut_count(srv->guard)) != BD_OK ||
        bd_metrics_write_limiter(&lh, rq->body) != BD_OK ||
        bd_metrics_write_webhooks(rq->body) != BD_OK ||
        bd_buf_printf(rq->body,
                      "# HELP breachd_upload_bytes_held Bytes of request bodies held now.\n"
                      "# TYPE breachd_upload_bytes_held gauge\n"
                      "breachd_upload_bytes_held %zu\n"
                      "# HELP breachd_upload_bytes_limit The most held at once "
                      "(--max-upload-memory).\n"
                      "# TYPE breachd_upload_bytes_limit gauge\n"
                      "breachd_upload_bytes_limit %zu\n",
                      bd_upload_budget_held(&srv->uploads), srv->uploads.total) != BD_OK) {
        rq->content_type = NULL;
        bd_reply_error(rq, 500, "internal_error", "metrics could not be written");
    }
}

/* The document of this API, as the server was given it at start. */
static void handle_openapi(bd_server *srv, bd_req *rq)
{
    bd_reply_begin(rq, 200);
    if (bd_buf_append(rq->body, srv->openapi.data, srv->openapi.len) != BD_OK)
        bd_reply_error(rq, 500, "internal_error", "the document could not be sent");
}

/* Unauthenticated operational endpoints outside the base path. */
static bool dispatch_operational(bd_server *srv, bd_req *rq, const char *url, const char *method)
{
    if (strcmp(url, "/healthz") == 0)
        rq->route = BD_ROUTE_HEALTHZ;
    else if (strcmp(url, "/metrics") == 0)
        rq->route = BD_ROUTE_METRICS;
    else if (strcmp(url, "/openapi.json") == 0)
        rq->route = BD_ROUTE_OPENAPI;
    else
        return false;
    if (!is_get(method)) {
        rq->allow = "GET, HEAD";
        bd_reply_error(rq, 405, "method_not_allowed", "use GET or HEAD");
    } else if (rq->route == BD_ROUTE_HEALTHZ) {
        handle_health(rq);
    } else if (rq->route == BD_ROUTE_OPENAPI) {
        handle_openapi(srv, rq);
    } else {
        handle_metrics(srv, rq);
    }
    return true;
}

/* The resources under the v7 base path. A path is matched exactly, or, when it ends in
 * '/', as that prefix followed by one segment (the argument handed to the handler), or, when
 * it holds a '*', with one segment in its place (the argument). */
typedef struct {
    const char *path;
    bd_route route;
    const char *allow; /* the methods it answers, for a 405's Allow header */
    size_t body_max;   /* the body its POST reads, at most; 0: a body is discarded */
} route_entry;

/* A watch is four short members (a URL of 2 KiB, a secret of 256 bytes at most). */
#define WATCH_BODY_MAX (64u << 10)

static const route_entry ROUTES[] = {
    {"/breaches", BD_ROUTE_BREACHES, "GET, HEAD", 0},
    {"/breaches/", BD_ROUTE_BREACH, "GET, HEAD", 0},
    {"/breach-search", BD_ROUTE_BREACH_SEARCH, "GET, HEAD", 0},
    {"/credit-card-search", BD_ROUTE_CARD_SEARCH, "GET, HEAD", 0},
    {"/usage", BD_ROUTE_USAGE, "GET, HEAD", 0},
    {"/status", BD_ROUTE_STATUS, "GET, HEAD", 0},
    {"/changes", BD_ROUTE_CHANGES, "GET, HEAD", 0},
    {"/watches", BD_ROUTE_WATCHES, "GET, HEAD, POST", WATCH_BODY_MAX},
    {"/watches/", BD_ROUTE_WATCH, "DELETE", 0},
    {"/alerts", BD_ROUTE_ALERTS, "GET, HEAD", 0},
    {"/jobs", BD_ROUTE_JOBS, "POST", BD_UPLOAD_MAX},
    {"/jobs/", BD_ROUTE_JOB, "GET, HEAD", 0},
    {"/jobs/*/results", BD_ROUTE_JOB_RESULTS, "GET", 0},
};

/* The resource a path under the base path names; NULL when none. */
static const route_entry *find_route(bd_slice path, bd_slice *arg)
{
    for (size_t i = 0; i < sizeof ROUTES / sizeof ROUTES[0]; i++) {
        const route_entry *e = &ROUTES[i];
        size_t pl = strlen(e->path);
        const char *star = strchr(e->path, '*');
        if (star) {
            size_t head = (size_t)(star - e->path), tail = pl - head - 1;
            if (path.len > head + tail && memcmp(path.ptr, e->path, head) == 0 &&
                memcmp(path.ptr + path.len - tail, star + 1, tail) == 0 &&
                !memchr(path.ptr + head, '/', path.len - head - tail)) {
                *arg = (bd_slice){path.ptr + head, path.len - head - tail};
                return e;
            }
        } else if (e->path[pl - 1] != '/') {
            if (bd_slice_eq(path, e->path))
                return e;
        } else if (path.len > pl && memcmp(path.ptr, e->path, pl) == 0 &&
                   !memchr(path.ptr + pl, '/', path.len - pl)) {
            *arg = (bd_slice){path.ptr + pl, path.len - pl};
            return e;
        }
    }
    return NULL;
}

/* Whether method is one of a comma-separated Allow list. */
static bool method_allowed(const char *allow, const char *method)
{
    size_t ml = strlen(method);
    for (const char *p = allow; *p;) {
        size_t n = strcspn(p, ",");
        if (n == ml && memcmp(p, method, ml) == 0)
            return true;
        p += n;
        p += strspn(p, ", ");
    }
    return false;
}

/* A browser's CORS preflight, on any path: answered without a key (it carries none, and
 * grants nothing: the request it announces needs one). */
static void answer_preflight(bd_req *rq)
{
    if (!rq->cors_allow) {
        bd_reply_error(rq, 403, "origin_not_allowed",
                       "this origin may not call the API from a browser; the operator allows "
                       "origins with breachd --cors-origin");
        return;
    }
    rq->cors_preflight = true;
    bd_reply_begin(rq, 204);
}

/* The prefix of a /range/ path, or false when path is not one. */
static bool range_path(bd_slice path, bd_slice *prefix)
{
    static const char head[] = "/range/";
    const size_t hl = sizeof head - 1;
    if (path.len < hl || memcmp(path.ptr, head, hl) != 0)
        return false;
    *prefix = (bd_slice){path.ptr + hl, path.len - hl};
    return true;
}

/* GET /range/{prefix}, at the root or under the base path (a HIBP client is configured with
 * a base URL and appends /range/ABCDE): authenticated unless --range-auth none. */
static void dispatch_range(bd_server *srv, bd_req *rq, bd_slice prefix, const char *method)
{
    rq->route = BD_ROUTE_RANGE;
    if (!srv->cfg.range_open && !bd_authenticate(srv, rq, true))
        return;
    if (!is_get(method)) {
        rq->allow = "GET, HEAD";
        bd_reply_error(rq, 405, "method_not_allowed", "this API is read-only: use GET or HEAD");
        return;
    }
    bd_handle_range(rq, prefix);
}

void bd_dispatch(bd_server *srv, bd_req *rq, const char *url, const char *method)
{
    size_t ulen = strlen(url);
    rq->route = BD_ROUTE_OTHER;
    if (bd_cors_enabled(&srv->cors) && bd_cors_is_preflight(rq->conn, method)) {
        answer_preflight(rq);
        return;
    }
    if (dispatch_operational(srv, rq, url, method))
        return;
    if (ulen > srv->hibp_base_len && memcmp(url, srv->hibp_base, srv->hibp_base_len) == 0 &&
        url[srv->hibp_base_len] == '/') {
        bd_hibp_dispatch(srv, rq, url, method);
        return;
    }
    bd_slice prefix;
    bool under_base = ulen > srv->base_len && memcmp(url, srv->base, srv->base_len) == 0 &&
                      url[srv->base_len] == '/';
    if (range_path((bd_slice){url, ulen}, &prefix) ||
        (under_base &&
         range_path((bd_slice){url + srv->base_len, ulen - srv->base_len}, &prefix))) {
        dispatch_range(srv, rq, prefix, method);
        return;
    }
    if (ulen <= srv->base_len || memcmp(url, srv->base, srv->base_len) != 0 ||
        url[srv->base_len] != '/') {
        bd_reply_error(rq, 404, "not_found", "no such path; the API lives under %s/", srv->base);
        return;
    }
    rq->path = (bd_slice){url + srv->base_len, ulen - srv->base_len};
    rq->usage_exempt = bd_slice_eq(rq->path, "/usage");
    if (!bd_authenticate(srv, rq, false))
        return;
    bd_slice arg = {NULL, 0};
    const route_entry *e = find_route(rq->path, &arg);
    if (!e) {
        bd_reply_error(rq, 404, "not_found", "no such path; see the API reference");
        return;
    }
    rq->route = e->route;
    if (!method_allowed(e->allow, method)) {
        rq->allow = e->allow;
        bd_reply_error(rq, 405, "method_not_allowed", "this resource answers %s", e->allow);
        return;
    }
    rq->body_cap = e->body_max;
    if (rq->screening) { /* the head alone: let through unless the body is too large */
        if (e->body_max && rq->announced > (int64_t)e->body_max)
            bd_reply_too_large(rq, e->body_max);
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
    case BD_ROUTE_USAGE:
        bd_handle_usage(srv, rq);
        break;
    case BD_ROUTE_STATUS:
        bd_handle_status(rq);
        break;
    case BD_ROUTE_CHANGES:
        bd_handle_changes(rq);
        break;
    case BD_ROUTE_WATCHES:
        bd_handle_watches(srv, rq);
        break;
    case BD_ROUTE_WATCH:
        bd_handle_watch(rq, arg);
        break;
    case BD_ROUTE_ALERTS:
        bd_handle_alerts(rq);
        break;
    case BD_ROUTE_JOBS:
        bd_handle_job_submit(srv, rq);
        break;
    case BD_ROUTE_JOB:
        bd_handle_job_get(srv, rq, arg);
        break;
    case BD_ROUTE_JOB_RESULTS:
        bd_handle_job_results(srv, rq, arg);
        break;
    default:
        break;
    }
}
