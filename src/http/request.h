/* One HTTP request as the handlers see it, and the reply helpers they use. A bd_req lives on
 * the worker thread's stack for one request; its body buffer belongs to the worker and is
 * reused by the next request on that thread. */
#ifndef BD_HTTP_REQUEST_H
#define BD_HTTP_REQUEST_H

#include <stdbool.h>
#include <stdint.h>

#include "auth/keys.h"
#include "auth/limiter.h"
#include "auth/ratelimit.h"
#include "auth/usage.h"
#include "auth/secret.h"
#include "core/buf.h"
#include "core/json.h"
#include "core/slice.h"
#include "http/client_addr.h"
#include "http/metrics.h"
#include "http/upload.h"
#include "ingest/normalize.h"
#include "store/store.h"

#define BD_MAX_PARAMS 64
#define BD_REQUEST_ID_LEN 16
#define BD_EXTRA_HEADERS 2560 /* a paging token and a few numbers */

struct MHD_Connection;

/* Breach objects already written into search records, kept per worker thread (a page of
 * a large domain repeats a few breaches a hundred times). Entries hold while the store's
 * data version stays the same. */
typedef struct bd_breach_json bd_breach_json;
bd_breach_json *bd_breach_json_new(void); /* NULL when out of memory */
void bd_breach_json_free(bd_breach_json *c);

typedef struct {
    bd_slice name, value; /* decoded; value.ptr NULL for a name without '=' */
} bd_param;

struct bd_worker;

/* A reply body written while it is sent (bulk job results): read fills up to max bytes of
 * buf and returns how many, 0 at the end, -1 on a failure (the connection is then cut);
 * free releases ctx once the reply is done or abandoned. */
typedef struct {
    int64_t (*read)(void *ctx, char *buf, size_t max);
    void (*free)(void *ctx);
    void *ctx;
} bd_stream;

/* What the head of a request that announces a body left for its last call when it was let
 * through (server.c): the key checked, and counted, then. */
typedef struct {
    bool on;
    bd_key_info key;
    bool has_rate;
    int64_t rate_limit, rate_remaining, rate_reset;
} bd_screened;

/* A reply that waits for work done off the request's thread (the PostgreSQL lookup
 * dispatcher): a handler that sets rq->deferred returns without a reply; server.c then
 * suspends the connection, keeps a copy of the request, and calls start; the work's end
 * resumes the connection (MHD_resume_connection on conn), and finish writes the reply into
 * the request restored on its thread. free releases it once the reply is queued. */
typedef struct bd_deferred {
    struct MHD_Connection *conn;
    /* after the connection is suspended; false: nothing was started, finish runs at once */
    bool (*start)(struct bd_deferred *d);
    void (*finish)(struct bd_deferred *d, void *rq); /* a bd_req * */
    void (*free)(struct bd_deferred *d);
} bd_deferred;

typedef struct {
    struct MHD_Connection *conn;
    const char *method;
    bd_slice path; /* path below the base path, starting with '/' */
    bd_param params[BD_MAX_PARAMS];
    size_t nparams;
    bool too_many_params;
    bool bad_param_bytes; /* a name or value held a NUL byte */
    bd_key_info key;
    int64_t now_us;      /* Unix microseconds when the key was checked, for later budgets */
    bd_limiter *limiter; /* the server's per-key budgets */
    bd_usage *usage;     /* the server's per-key usage counters and quotas */
    bool usage_exempt;   /* GET /usage: not counted, answered with the quota used up */
    int64_t quota_reset; /* Unix seconds: X-Quota-Reset on a 403 quota_exhausted; 0: none */
    char request_id[BD_REQUEST_ID_LEN + 1];
    const uint8_t *secret;
    bd_store *store;
    struct bd_worker *worker; /* the thread's: bd_req_writer opens its write connection */
    bd_slice upload; /* the body kept for the resource (body_cap > 0); ptr NULL: none */
    bd_upload_state upload_state; /* cut at body_cap, or refused by the server's budget */
    size_t body_cap;              /* the resource's limit on its body; 0: it reads none */
    int64_t announced;            /* the body's Content-Length; -1: chunked */
    bool screening; /* the head of a request that announces a body: bd_dispatch routes and
                       authenticates it, and writes a reply only to refuse it */
    const bd_screened *screened; /* the last call of a request let through at its head */
    bd_buf *body;
    bd_breach_json *breach_json; /* the worker's, or NULL */
    struct bd_reply_cache *replies;       /* the worker's, or NULL */
    const struct bd_cached_reply *cached; /* when set, the 200 sent is this, not body */
    bool breach_json_checked;    /* its data version was checked in this read view */
    bd_json json;
    int status;
    const char *allow;   /* Allow header for 405 */
    int64_t retry_after; /* seconds; 0: no Retry-After header */
    bool has_rate;       /* authenticated: send the X-RateLimit headers below */
    int64_t rate_limit, rate_remaining, rate_reset;
    const char *content_type; /* NULL: JSON */
    char location[192];       /* Location header; "" for none */
    bd_stream stream;         /* read not NULL: the body is streamed (a 200 only) */
    bool close;               /* close the connection after this reply */
    bool exact_refused;       /* 429 from the key's budget of exact card lookups */
    int empty_search_status;  /* a breach search that matches nothing: 404 or 200 */
    const char *cors_allow;   /* Access-Control-Allow-Origin value; NULL: no CORS headers */
    bool cors_preflight;      /* the reply answers a CORS preflight */
    /* for the access log and metrics */
    const struct bd_route_row *route; /* the row that took it (routes.h); NULL: none */
    bool authenticated;
    int64_t records;       /* records or cards in the reply; -1: not a search */
    bool log_account;      /* an access log is open: fill account_hash */
    struct bd_lookup_log *lookups; /* the server's lookup log (bd_note_account); NULL: none */
    char account_hash[33]; /* keyed hash of the searched account, "" when none */
    bool store_failed;
    bool csv; /* the search's page goes out as CSV (Accept: text/csv) */
    bool can_defer;        /* the connection can be suspended (server.c) */
    bd_deferred *deferred; /* set by a handler whose reply waits (see bd_deferred) */
    bd_ip client;      /* the client's address (http/client_addr.h), once client_known */
    bool client_known; /* bd_req_client has resolved it */
    /* a tag the handler gave its 200 or 304 (/range/: the data version's; "" for none,
     * when a route's BD_ROUTE_ETAG tags the body itself), sent with cache_control (NULL:
     * "private, no-cache"), and a request header the reply varies by besides the usual */
    char etag[48];
    const char *cache_control;
    const char *vary;
    /* headers of this reply beyond the usual ones, as "name\0value\0" pairs */
    char extra_headers[BD_EXTRA_HEADERS];
    size_t extra_len;
} bd_req;

/* Adds a header to the reply; false when the room for them is used up (never with the
 * few a handler adds). */
bool bd_reply_header(bd_req *rq, const char *name, const char *value);

/* Starts a JSON body: the handler writes its value with rq->json, then calls
 * bd_reply_finish. */
void bd_reply_begin(bd_req *rq, int status);
/* Checks the JSON writer; a body past its cap becomes a 500. */
void bd_reply_finish(bd_req *rq);
/* Replaces whatever was written with {"error":code,"message":...}. */
void bd_reply_error(bd_req *rq, int status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Maps a store failure to 503 (busy or unreachable) or 500 (a bug), logged with the id. */
void bd_reply_store_error(bd_req *rq, bd_result r);

/* Whether a method may carry a body the API reads (POST, PUT, PATCH, DELETE): the head of
 * one that announces a body is routed and authenticated before the body is read (server.c);
 * any other method's body is discarded. */
bool bd_method_takes_body(const char *method);
/* The request body of a write. false, with the reply written, when it was cut at the
 * resource's limit (413), found no room in the server's budget (503), or none came (400). */
bool bd_req_body(bd_req *rq, bd_slice *body);
/* 413 payload_too_large for a body past cap bytes, and the connection closed (what is left of
 * the body may still be on its way). */
void bd_reply_too_large(bd_req *rq, size_t cap);
/* 503 unavailable with Retry-After for a body the server's budget has no room for, and the
 * connection closed. */
void bd_reply_no_room(bd_req *rq);
/* The store for a request that writes (rq->store is read-only): the thread's write
 * connection, opened on first use. NULL, with a 503 written, when it cannot be opened. A
 * write refused by the store (a hot standby, an unreachable server) is the caller's to map
 * with bd_reply_store_error. */
bd_store *bd_req_writer(bd_req *rq);

/* Parameter checks. Each returns true when the request may go on; when it returns false
 * the error reply has been written. */

/* Every parameter must be named in allowed (NULL-terminated) and appear once with a value,
 * except the names in repeatable (NULL-terminated or NULL). An empty value (name= or a bare
 * name) is never a repeat, and "_" (jQuery's cache-buster) is ignored altogether. */
bool bd_params_check(bd_req *rq, const char *const *allowed, const char *const *repeatable);
/* The value of a required parameter, if present: the first non-empty occurrence, else ""
 * when it was sent only empty. */
bool bd_param_get(const bd_req *rq, const char *name, bd_slice *value);
/* The value of an optional parameter; false when it is absent or empty (an empty optional
 * parameter counts as absent: forms send every field, filled or not). */
bool bd_param_opt(const bd_req *rq, const char *name, bd_slice *value);
/* An optional integer parameter in [min, max]: 400 when not an integer, 422 out of range.
 * *out is dflt when the parameter is absent or empty. */
bool bd_param_int(bd_req *rq, const char *name, int64_t min, int64_t max, int64_t dflt,
                  int64_t *out);

/* Writes a breach in one of the interface's shapes. */
typedef enum {
    BD_BREACH_LIST,    /* catalog: source_name, breach_type */
    BD_BREACH_SINGLE,  /* one breach: site_name, no breach_type */
    BD_BREACH_DETAILS, /* inside a search record: the single shape */
} bd_breach_shape;
/* Every shape ends with HEROIC's site_name (list shape only: the others have it already),
 * site_logo and heroic_article_url (= service_article_url). */
void bd_write_breach(bd_json *w, const bd_breach_row *b, bd_breach_shape shape);
/* Replies 200 with the breach catalog (at most limit breaches; <= 0: all, newest first) as a
 * JSON array whose items cb writes (it counts them in rq->records); a store failure
 * replaces it with the store error. */
void bd_reply_breach_list(bd_req *rq, int limit, bd_breach_cb cb, void *ctx);
/* Writes the breach_details value of a search record with rq->json, from rq->breach_json
 * or read from the store (and then remembered). Call inside the read view of the records;
 * BD_ERR_* when the store failed. */
bd_result bd_write_breach_details(bd_req *rq, int64_t breach_id);

/* The lookup key of one identity value of type t: its normalised text, or for a password or
 * SSN the keyed hash of it under secret, exactly as the importer stored it. key points into
 * out. BD_ERR_INVALID with *why (a sentence naming no value) when v is not a valid t. */
typedef struct {
    char norm[BD_NORM_MAX + 1];
    uint8_t mac[BD_MAC_LEN];
    bd_slice key;
} bd_lookup_key;
bd_result bd_lookup_key_make(const uint8_t *secret, bd_id_type t, bd_slice v, bd_lookup_key *out,
                             const char **why);

/* Notes the searched account for the access log, only as a keyed hash of its identity type
 * (bd_id_type) and lookup key, when a log is open; and the search in the lookup log
 * (auth/lookup_log.h) when the server keeps one. */
void bd_note_account(bd_req *rq, int type, bd_slice key);


#endif
