/* CORS: the operator's origins, matching a request's Origin, and the headers of a reply. */
#include "http/cors.h"

#include <microhttpd.h>
#include <stdio.h>
#include <string.h>

/* What a browser may read besides the CORS-safelisted headers: the request id to quote,
 * the budget, when to retry, the tag to revalidate with, when a quota resets, the numbers
 * of a CSV search page, and where a new job or watch lives. */
#define EXPOSE_HEADERS                                                                             \
    "X-Request-Id, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, "     \
    "Allow, ETag, X-Quota-Reset, X-Records-Found, X-Pagination-Token, X-Total-Elements, "         \
    "X-Total-Pages, X-Page-Number, X-Page-Size, X-Number-Of-Elements, Location"
/* The keys (v7's and HIBP v3's header), and what HEROIC dashboards' HTTP libraries add
 * (jQuery, axios, fetch). */
#define ALLOW_HEADERS                                                                              \
    "x-api-key, hibp-api-key, content-type, accept, accept-language, cache-control, "            \
    "x-requested-with"
#define MAX_AGE "7200" /* seconds; Chromium caps a preflight's lifetime at two hours */

/* host: a DNS name or an IPv4 address (letters, digits, '-', '.'), or "[v6]". */
static bool valid_host(const char *h, size_t n)
{
    if (n == 0)
        return false;
    if (h[0] == '[')
        return n > 2 && h[n - 1] == ']' && strspn(h + 1, "0123456789abcdef:.") == n - 2;
    return strspn(h, "abcdefghijklmnopqrstuvwxyz0123456789-.") == n && h[0] != '.' && h[0] != '-';
}

/* s (lower case) is scheme "://" host [":" port], nothing more. */
static bool valid_origin(const char *s)
{
    const char *host;
    if (strncmp(s, "https://", 8) == 0)
        host = s + 8;
    else if (strncmp(s, "http://", 7) == 0)
        host = s + 7;
    else
        return false;
    const char *colon = host[0] == '[' ? strchr(host, ']') : host;
    colon = colon ? strchr(colon, ':') : NULL;
    size_t hl = colon ? (size_t)(colon - host) : strlen(host);
    if (!valid_host(host, hl))
        return false;
    if (!colon)
        return true;
    const char *port = colon + 1;
    size_t pl = strlen(port);
    if (pl == 0 || pl > 5 || strspn(port, "0123456789") != pl || port[0] == '0')
        return false;
    long p = 0;
    for (size_t i = 0; i < pl; i++)
        p = p * 10 + (port[i] - '0');
    return p <= 65535;
}

bd_result bd_cors_init(bd_cors *c, const char *const *origins, size_t n, char *why, size_t whylen)
{
    memset(c, 0, sizeof *c);
    if (n > BD_CORS_MAX_ORIGINS) {
        snprintf(why, whylen, "at most %d --cors-origin values", BD_CORS_MAX_ORIGINS);
        return BD_ERR_INVALID;
    }
    for (size_t i = 0; i < n; i++) {
        if (strcmp(origins[i], "*") == 0) {
            c->any = true;
            continue;
        }
        size_t len = strlen(origins[i]);
        char *o = c->origin[c->n];
        if (len <= BD_CORS_ORIGIN_MAX) {
            /* Browsers send scheme and host in lower case. */
            for (size_t j = 0; j <= len; j++) {
                char ch = origins[i][j];
                o[j] = ch >= 'A' && ch <= 'Z' ? (char)(ch - 'A' + 'a') : ch;
            }
        }
        if (len > BD_CORS_ORIGIN_MAX || !valid_origin(o)) {
            snprintf(why, whylen,
                     "--cors-origin must be an origin like https://dash.example.com or "
                     "http://10.0.0.5:8080 (scheme, host, optional port; no path or trailing "
                     "slash), or *");
            return BD_ERR_INVALID;
        }
        c->n++;
    }
    return BD_OK;
}

bool bd_cors_enabled(const bd_cors *c)
{
    return c->any || c->n > 0;
}

static bool header(struct MHD_Connection *conn, const char *name, const char **v, size_t *len)
{
    return MHD_lookup_connection_value_n(conn, MHD_HEADER_KIND, name, strlen(name), v, len) ==
               MHD_YES &&
           *v && *len > 0;
}

const char *bd_cors_allowed(const bd_cors *c, struct MHD_Connection *conn)
{
    const char *v = NULL;
    size_t len = 0;
    if (!bd_cors_enabled(c) || !header(conn, "Origin", &v, &len))
        return NULL;
    if (c->any)
        return "*";
    for (size_t i = 0; i < c->n; i++)
        if (strlen(c->origin[i]) == len && memcmp(c->origin[i], v, len) == 0)
            return c->origin[i];
    return NULL;
}

bool bd_cors_is_preflight(struct MHD_Connection *conn, const char *method)
{
    const char *v = NULL;
    size_t len = 0;
    return strcmp(method, MHD_HTTP_METHOD_OPTIONS) == 0 && header(conn, "Origin", &v, &len) &&
           header(conn, "Access-Control-Request-Method", &v, &len);
}

void bd_cors_add_headers(const bd_cors *c, struct MHD_Response *resp, const char *allow_origin,
                         const char *preflight_methods)
{
    if (c->n > 0) /* with "*" alone no reply depends on the origin */
        MHD_add_response_header(resp, "Vary", "Origin");
    if (!allow_origin)
        return;
    MHD_add_response_header(resp, "Access-Control-Allow-Origin", allow_origin);
    if (!preflight_methods) {
        MHD_add_response_header(resp, "Access-Control-Expose-Headers", EXPOSE_HEADERS);
        return;
    }
    MHD_add_response_header(resp, "Access-Control-Allow-Methods", preflight_methods);
    MHD_add_response_header(resp, "Access-Control-Allow-Headers", ALLOW_HEADERS);
    MHD_add_response_header(resp, "Access-Control-Max-Age", MAX_AGE);
}
