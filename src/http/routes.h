/* Every route breachd answers, in one table (routes.c): the v7 API, the HIBP API v3, the
 * Pwned Passwords ranges and the operational endpoints. One row per route: its methods, its
 * API (which says under which base path it lives and how a key is presented), its path
 * pattern, who may call it, its handler, its metric label, the body it reads and what its
 * replies allow. The router (router.c) matches requests against the table; the metrics'
 * labels and their order, the 405's Allow header and the methods a CORS preflight grants
 * are derived from it, and tests/unit/test_routes.c holds it against docs/openapi.json.
 * A new route is one row. Only src/http/ includes this. */
#ifndef BD_HTTP_ROUTES_H
#define BD_HTTP_ROUTES_H

#include <stddef.h>

#include "core/slice.h"
#include "http/request.h"

/* Methods, as bits; an Allow text lists them in this order. */
enum {
    BD_METHOD_GET = 1u << 0,
    BD_METHOD_HEAD = 1u << 1,
    BD_METHOD_POST = 1u << 2,
    BD_METHOD_PUT = 1u << 3,
    BD_METHOD_PATCH = 1u << 4,
    BD_METHOD_DELETE = 1u << 5,
};
#define BD_METHODS_READ (BD_METHOD_GET | BD_METHOD_HEAD)

/* The API a route belongs to. It says where the path pattern is matched, and how a key is
 * presented and a request refused (router.c). */
typedef enum {
    BD_API_OPERATIONS, /* at the root: health, metrics, the OpenAPI document */
    BD_API_V7,         /* under --base-path (/v7); the key in x-api-key, a bad one 403 */
    BD_API_HIBP,       /* under --hibp-base-path (/api/v3); hibp-api-key or x-api-key, 401 */
    BD_API_PASSWORDS,  /* Pwned Passwords ranges: at the root and under --base-path; keys as
                          the HIBP API's */
} bd_route_api;

/* Who may call a route. */
typedef enum {
    BD_ACCESS_NONE, /* anyone */
    BD_ACCESS_KEY,  /* an API key */
    /* a key; with --hibp-catalog-auth none also a request without one (a key presented is
     * still checked and charged) */
    BD_ACCESS_KEY_UNLESS_CATALOG_OPEN,
    /* a key; with --range-auth none anyone, and no key is checked */
    BD_ACCESS_KEY_UNLESS_RANGE_OPEN,
    /* an admin key (breachctl keys create --role admin); any other valid key gets 403
     * forbidden before the handler runs (the admin API, v7/admin_*.c) */
    BD_ACCESS_ADMIN,
} bd_route_access;

/* What the one {placeholder} of a path pattern takes (its text is the handler's argument). */
typedef enum {
    BD_ARG_SEGMENT, /* one segment: not empty, no '/' */
    BD_ARG_REST,    /* the rest of the path, '/' included (an account may hold one); not empty */
    BD_ARG_ANY,     /* the rest of the path, possibly empty (the handler refuses a bad one) */
} bd_route_arg;

/* What a route's replies allow. */
enum {
    BD_ROUTE_ETAG = 1u << 0,     /* a 200 carries an ETag and If-None-Match gets 304 (send.c) */
    BD_ROUTE_CSV = 1u << 1,      /* a search page may go out as CSV (Accept: text/csv) */
    BD_ROUTE_NO_QUOTA = 1u << 2, /* neither counted against the key's quota nor refused by it */
};

struct bd_server;

/* Answers a request the router matched; arg is the placeholder's text ({NULL, 0} when the
 * pattern has none). */
typedef void bd_route_handler(struct bd_server *srv, bd_req *rq, bd_slice arg);

typedef struct bd_route_row {
    unsigned methods; /* BD_METHOD_* */
    bd_route_api api;
    const char *path; /* below the API's base path, as docs/openapi.json spells it, with at
                         most one {placeholder} */
    bd_route_arg arg;
    bd_route_access access;
    bd_route_handler *handle;
    const char *label; /* in metrics and the access log */
    size_t body_max;   /* the body a write reads, at most; 0: a body is discarded */
    unsigned flags;    /* BD_ROUTE_* */
} bd_route_row;

/* The table, in the order of the metrics' lines. */
extern const bd_route_row bd_routes[];
extern const size_t bd_routes_n;

/* The row's label; "other" for NULL (a request no route took). */
const char *bd_route_label(const bd_route_row *r);
/* The row's index in bd_routes; bd_routes_n for NULL. */
size_t bd_route_index(const bd_route_row *r);
/* The label of bd_routes[i] (the metrics' names, bd_metrics_new). */
const char *bd_route_label_at(size_t i);

/* The bit of a method name (exact, upper case); 0 for a method no route can answer. */
unsigned bd_method_bit(const char *method);
/* The methods as an Allow header lists them: "GET, HEAD, POST". A static string. */
const char *bd_methods_text(unsigned methods);
/* Every method some route answers, then OPTIONS: what a CORS preflight grants. */
const char *bd_routes_preflight_methods(void);

/* Where a path is matched: the whole URL, or the path below one of the two base paths.
 * BD_API_OPERATIONS rows are at the root, BD_API_V7's under the v7 base, BD_API_HIBP's under
 * the HIBP base, and BD_API_PASSWORDS's both at the root and under the v7 base. */
typedef enum { BD_BASE_ROOT, BD_BASE_V7, BD_BASE_HIBP } bd_route_base;

/* The row of a path at base (router.c), and its argument into *arg; NULL when none. No
 * allocation: a few byte compares per row. */
const bd_route_row *bd_route_match(bd_route_base base, bd_slice path, bd_slice *arg);

#endif
