/* Routing: a request's path matched against the route table (routes.h), then the row's
 * access, methods and body limit, then its handler. What differs between the APIs (how a
 * key is presented, the words of a 404 or 405) is here. */
#include <microhttpd.h>
#include <string.h>

#include "http/routes.h"
#include "http/server_impl.h"

/* Whether a row answers at base. */
static bool at_base(const bd_route_row *r, bd_route_base base)
{
    switch (r->api) {
    case BD_API_OPERATIONS:
        return base == BD_BASE_ROOT;
    case BD_API_V7:
        return base == BD_BASE_V7;
    case BD_API_HIBP:
        return base == BD_BASE_HIBP;
    case BD_API_PASSWORDS:
        return base == BD_BASE_ROOT || base == BD_BASE_V7;
    }
    return false;
}

/* Whether path is the pattern, its {placeholder} standing for what kind takes (into *arg). */
static bool path_matches(const char *pat, bd_route_arg kind, bd_slice path, bd_slice *arg)
{
    size_t i = 0;
    for (; *pat && *pat != '{'; pat++, i++)
        if (i >= path.len || path.ptr[i] != *pat)
            return false;
    if (!*pat)
        return i == path.len;
    const char *tail = strchr(pat, '}') + 1;
    size_t tl = strlen(tail);
    if (path.len < i + tl || memcmp(path.ptr + path.len - tl, tail, tl) != 0)
        return false;
    bd_slice a = {path.ptr + i, path.len - i - tl};
    if ((kind != BD_ARG_ANY && a.len == 0) || (kind == BD_ARG_SEGMENT && memchr(a.ptr, '/', a.len)))
        return false;
    *arg = a;
    return true;
}

/* The bytes of a pattern before its placeholder. */
static size_t literal_len(const char *pat)
{
    return strcspn(pat, "{");
}

const bd_route_row *bd_route_match(bd_route_base base, bd_slice path, bd_slice *arg)
{
    const bd_route_row *found = NULL;
    for (size_t i = 0; i < bd_routes_n; i++) {
        const bd_route_row *r = &bd_routes[i];
        bd_slice a = {NULL, 0}; /* a row without a placeholder leaves it empty */
        if (!at_base(r, base) || !path_matches(r->path, r->arg, path, &a))
            continue;
        /* a row taking the rest of the path gives way to a later one that names more of it
         * (HIBP's /breachedaccount/range/{prefix} under /breachedaccount/{account}) */
        if (found && (r->arg == BD_ARG_REST || literal_len(r->path) <= literal_len(found->path)))
            continue;
        found = r;
        *arg = a;
        if (r->arg != BD_ARG_REST)
            break;
    }
    return found;
}

/* The key of a request to api: the v7 API's in x-api-key (a bad one 403), the others' as
 * the HIBP API takes it (401). */
static bool authenticate(bd_server *srv, bd_req *rq, bd_route_api api)
{
    return bd_authenticate(srv, rq, api != BD_API_V7);
}

/* Whether the request may call the row; false with the refusal written. */
static bool admitted(bd_server *srv, bd_req *rq, const bd_route_row *r)
{
    switch (r->access) {
    case BD_ACCESS_NONE:
        return true;
    case BD_ACCESS_KEY_UNLESS_CATALOG_OPEN:
        if (srv->cfg.hibp_catalog_open && !bd_key_presented(rq, true))
            return true;
        break;
    case BD_ACCESS_KEY_UNLESS_RANGE_OPEN:
        if (srv->cfg.range_open)
            return true;
        break;
    case BD_ACCESS_KEY:
        break;
    case BD_ACCESS_ADMIN:
        if (!authenticate(srv, rq, r->api))
            return false;
        if (rq->key.role == BD_KEY_ROLE_ADMIN)
            return true;
        bd_reply_error(rq, 403, "forbidden",
                       "the admin API needs an admin key (breachctl keys create --role admin)");
        return false;
    }
    return authenticate(srv, rq, r->api);
}

/* 405, in the words of the row's API. */
static void refuse_method(bd_req *rq, const bd_route_row *r)
{
    rq->allow = bd_methods_text(r->methods);
    if (r->api == BD_API_V7)
        bd_reply_error(rq, 405, "method_not_allowed", "this resource answers %s", rq->allow);
    else if (r->api == BD_API_OPERATIONS)
        bd_reply_error(rq, 405, "method_not_allowed", "use GET or HEAD");
    else
        bd_reply_error(rq, 405, "method_not_allowed", "this API is read-only: use GET or HEAD");
}

/* The row's access, method and body limit, then its handler. The v7 API checks the key
 * before it tells anything of the path: a refused key is counted under no route ("other").
 * The others count it under the route. */
static void answer(bd_server *srv, bd_req *rq, const bd_route_row *r, bd_slice arg,
                   const char *method)
{
    if (r->api != BD_API_V7)
        rq->route = r;
    rq->usage_exempt = r->flags & BD_ROUTE_NO_QUOTA;
    if (!admitted(srv, rq, r))
        return;
    rq->route = r;
    if (!(bd_method_bit(method) & r->methods)) {
        refuse_method(rq, r);
        return;
    }
    rq->body_cap = r->body_max;
    if (rq->screening) { /* the head alone: let through unless the body is too large */
        if (r->body_max && rq->announced > (int64_t)r->body_max)
            bd_reply_too_large(rq, r->body_max);
        return;
    }
    r->handle(srv, rq, arg);
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

/* Whether url lies under base (followed by '/'); the path below it into *below. */
static bool under(bd_slice url, const char *base, size_t base_len, bd_slice *below)
{
    if (url.len <= base_len || memcmp(url.ptr, base, base_len) != 0 || url.ptr[base_len] != '/')
        return false;
    *below = (bd_slice){url.ptr + base_len, url.len - base_len};
    return true;
}

/* The HIBP base path is tried first, then the root, then the v7 base path. A path under a
 * base path that no row there takes is that API's 404, after its key is checked. */
void bd_dispatch(bd_server *srv, bd_req *rq, const char *url, const char *method)
{
    bd_slice u = {url, strlen(url)}, below, arg = {NULL, 0};
    const bd_route_row *r;
    rq->route = NULL;
    if (bd_cors_enabled(&srv->cors) && bd_cors_is_preflight(rq->conn, method)) {
        answer_preflight(rq);
        return;
    }
    if (under(u, srv->hibp_base, srv->hibp_base_len, &below)) {
        rq->path = below;
        if ((r = bd_route_match(BD_BASE_HIBP, below, &arg)))
            answer(srv, rq, r, arg, method);
        else if (authenticate(srv, rq, BD_API_HIBP))
            bd_reply_error(rq, 404, "not_found", "no such path in the HIBP API v3");
        return;
    }
    if ((r = bd_route_match(BD_BASE_ROOT, u, &arg))) {
        answer(srv, rq, r, arg, method);
        return;
    }
    if (!under(u, srv->base, srv->base_len, &below)) {
        bd_reply_error(rq, 404, "not_found", "no such path; the API lives under %s/", srv->base);
        return;
    }
    rq->path = below;
    if ((r = bd_route_match(BD_BASE_V7, below, &arg)))
        answer(srv, rq, r, arg, method);
    else if (authenticate(srv, rq, BD_API_V7))
        bd_reply_error(rq, 404, "not_found", "no such path; see the API reference");
}
