/* CORS for browser dashboards: which origins may read breachd's replies, and the answer to
 * a browser's preflight. Off unless the operator names origins (breachd --cors-origin).
 *
 * An origin is matched exactly (scheme, host and port, as a browser serialises it: lower
 * case, no path, no trailing slash); "*" lets every origin read. Nothing here grants access
 * to data: every request but the preflight still needs its API key.
 *
 * Ownership: a bd_cors is a plain value (no allocation) owned by the server; the functions
 * are safe from any thread once bd_cors_init has returned. */
#ifndef BD_HTTP_CORS_H
#define BD_HTTP_CORS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/result.h"

struct MHD_Connection;
struct MHD_Response;

#define BD_CORS_MAX_ORIGINS 32
#define BD_CORS_ORIGIN_MAX 255 /* bytes of one origin */

typedef struct {
    char origin[BD_CORS_MAX_ORIGINS][BD_CORS_ORIGIN_MAX + 1]; /* lower case */
    size_t n;
    bool any; /* "*" was named */
} bd_cors;

/* Checks and keeps the operator's origins (n may be 0: CORS off). BD_ERR_INVALID with a
 * sentence in why for a value that is not an origin ("https://dash.example.com",
 * "http://10.0.0.5:8080", "*"). */
bd_result bd_cors_init(bd_cors *c, const char *const *origins, size_t n, char *why, size_t whylen);

/* Whether any origin was named. */
bool bd_cors_enabled(const bd_cors *c);

/* The Access-Control-Allow-Origin value for the request's Origin header: "*" or the
 * request's origin itself (a string of c); NULL when CORS is off, the request has no Origin
 * or it is not allowed. */
const char *bd_cors_allowed(const bd_cors *c, struct MHD_Connection *conn);

/* Whether the request is a CORS preflight: OPTIONS with Origin and
 * Access-Control-Request-Method. */
bool bd_cors_is_preflight(struct MHD_Connection *conn, const char *method);

/* Adds the CORS headers of a reply: Vary: Origin whenever CORS is on (a reply depends on the
 * origin), and for an allowed origin (allow_origin not NULL) Access-Control-Allow-Origin and
 * -Expose-Headers, or on a preflight (preflight_methods not NULL) -Allow-Methods (those
 * methods: every method a route answers, then OPTIONS, routes.h), -Allow-Headers and
 * -Max-Age. The key comes from a header, never a cookie, so a page can only use a key it
 * already holds. */
void bd_cors_add_headers(const bd_cors *c, struct MHD_Response *resp, const char *allow_origin,
                         const char *preflight_methods);

#endif
