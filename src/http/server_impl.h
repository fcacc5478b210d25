/* What the server's parts share behind server.h: the server object, the per-thread worker,
 * and the steps a request goes through (guard, authentication, routing, the access-log
 * line). Only src/http/ and the handlers behind its route table (src/v7/, src/hibp/) include
 * this. */
#ifndef BD_HTTP_SERVER_IMPL_H
#define BD_HTTP_SERVER_IMPL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "auth/keys.h"
#include "auth/known_keys.h"
#include "auth/limiter.h"
#include "auth/ratelimit.h"
#include "auth/secret.h"
#include "http/access_log.h"
#include "http/cors.h"
#include "http/guard.h"
#include "http/metrics.h"
#include "http/request.h"
#include "http/server.h"
#include "http/upload_budget.h"

/* What each worker thread keeps between requests. */
typedef struct bd_worker {
    bd_store *store;
    bd_store *writer; /* opened on the first write a request on this thread makes */
    struct bd_store_pool *writes; /* where writer comes from (the server's write pool) */
    bd_buf body;
    bd_buf log_line;
    bd_breach_json *breach_json; /* NULL when it could not be allocated: no caching */
    struct bd_reply_cache *replies; /* NULL when it could not be allocated: no caching */
    struct bd_gzip *gzip;        /* NULL when it could not be allocated: no compression */
    bd_buf gzipped;              /* the compressed reply */
    struct bd_worker *next;
} bd_worker;

struct bd_server {
    bd_server_config cfg;
    char db[4097]; /* as long as a --db-file may hold (cli/args.c); longer is refused */
    char base[128];
    size_t base_len;
    bd_buf openapi; /* the OpenAPI document with this base path, served at /openapi.json */
    char hibp_base[128]; /* the HIBP API v3's base path */
    size_t hibp_base_len;
    uint8_t secret[BD_SECRET_LEN];
    uint8_t id_key[16]; /* keys the request-id hash: ids do not reveal request volume */
    struct MHD_Daemon *daemon;
    struct bd_listener *listener; /* the listening socket and its accept thread */
    /* set when the drain begins: every reply from then on closes its connection, so that
     * keep-alive clients leave at their next reply instead of holding the drain open */
    atomic_bool draining;
    bd_keyring *keys;
    bd_limiter *limiter;       /* per API key: its requests, its exact card lookups */
    bd_usage *usage;           /* per API key: requests per day and month, the quota */
    bd_ratelimit *auth_fails;  /* per client address, failed keys only; per process */
    bd_known_keys *known_keys; /* (address, key) pairs that authenticated */
    bd_guard *guard;           /* per-connection deadlines */
    bd_upload_budget uploads;  /* request-body bytes held at once, across connections */
    bd_metrics *metrics;
    bd_access_log *log;
    bd_cors cors;
    char *tls_cert, *tls_key; /* PEM text */
    pthread_mutex_t workers_lock;
    bd_worker *workers;
    struct bd_job_runner *runner; /* bulk jobs (job_runner.h); set by app/jobs.c, may be NULL */
    struct bd_lookup_log *lookups; /* identity searches (auth/lookup_log.h); NULL: not logged */
    struct bd_pg_batch *pg_batch;  /* the PostgreSQL lookup dispatcher; NULL: none */
};

/* The calling thread's worker, opened on its first request (worker.c). NULL when the store
 * cannot be opened (the request then gets a 503). */
bd_worker *bd_worker_of_thread(bd_server *srv);
/* Frees every worker's buffers and caches (their store connections are the pools'). */
void bd_workers_free(bd_server *srv);

/* Current time in Unix microseconds. */
int64_t bd_now_us(void);

/* The client's address (http/client_addr.h): the peer's, or with --trusted-proxy and a peer
 * that is one, the rightmost X-Forwarded-For address that is not a trusted proxy. */
void bd_client_resolve(const bd_server *srv, struct MHD_Connection *conn, bd_ip *out);
/* The same for a request, resolved once and kept in rq->client. */
const bd_ip *bd_req_client(const bd_server *srv, bd_req *rq);

/* Whether the request carries a key at all (hibp: in hibp-api-key or x-api-key). */
bool bd_key_presented(const bd_req *rq, bool hibp);

/* Checks the API key and its budget; on failure writes the 401/403/429 reply and returns
 * false. The v7 API takes the key in x-api-key and answers a bad key with 403; the HIBP
 * API v3 (hibp true) takes it in hibp-api-key or x-api-key and answers a bad key with 401,
 * as HIBP does. */
bool bd_authenticate(bd_server *srv, bd_req *rq, bool hibp);


/* Unix seconds as ISO 8601 UTC (2026-12-01T00:00:00Z) into out. */
void bd_utc_text(int64_t t, char out[21]);
/* A member whose value is t in that form, or null when t <= 0 (never, none). */
void bd_json_utc_member(bd_json *w, const char *key, int64_t t);

/* Sends rq's reply on conn (send.c): MHD_NO when libmicrohttpd could not queue it. */
enum MHD_Result bd_send_reply(const bd_server *srv, struct MHD_Connection *conn, bd_req *rq);

/* Routes a request whose head passed the guard and writes its reply into rq. */
void bd_dispatch(bd_server *srv, bd_req *rq, const char *url, const char *method);

/* Writes the access-log line of a finished request (never the key; the account only as a
 * keyed hash). */
void bd_log_request(bd_server *srv, bd_worker *w, const bd_req *rq, const char *method,
                    int64_t start_us, int64_t micros);

#endif
