/* The HTTP server: libmicrohttpd with a pool of worker threads, each holding its own store
 * connection and response buffer. */
#ifndef BD_HTTP_SERVER_H
#define BD_HTTP_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/result.h"
#include "http/client_addr.h"
#include "webhook/policy.h"

typedef struct {
    const char *db;          /* store URI */
    const char *secret_path; /* NULL: "<db>.secret" */
    const char
        *listen; /* "host:port", "[v6]:port"; port 0 picks a free one; NULL: 127.0.0.1:8080 */
    const char *base_path;     /* NULL: "/v7" */
    const char *hibp_base_path; /* the HIBP API v3's; NULL: "/api/v3" */
    int64_t hibp_domain_max;    /* records a v3 domain search may read; 0: 10000 */
    bool hibp_catalog_open;     /* --hibp-catalog-auth none: v3 catalog paths need no key */
    unsigned threads;          /* worker threads; 0: one per core */
    unsigned conn_timeout;     /* idle seconds before a connection is closed; 0: 30 */
    unsigned header_timeout;   /* seconds for a whole request to arrive; 0: 10 */
    unsigned max_conns;        /* 0: 4096 (kept below the descriptor limit) */
    unsigned max_conns_per_ip; /* 0: unlimited */
    unsigned auth_fail_limit;  /* failed keys per minute from one address; 0: 60 */
    size_t max_upload_memory;  /* request-body bytes held at once; 0: 128 MiB; raised to 16 MiB */
    const char *tls_cert;      /* PEM files; both or neither */
    const char *tls_key;
    const char *access_log;          /* NULL: no access log */
    const char *shared_limits;       /* store URI keeping per-key budgets for every server; NULL:
                                      * budgets per process */
    int empty_search_status;         /* a breach search that matches nothing: 404 (0: 404) or 200 */
    const char *const *cors_origins; /* origins browsers may call from (http/cors.h) */
    size_t cors_origins_n;           /* 0: CORS off */
    bool range_open;                 /* /range/ answers without a key (--range-auth none) */
    bool console_off;                /* --console off: no /console/, no session cookies */
    const char *console_logos;       /* --console-logos DIR: /console/logos/ (NULL: none) */
    const bd_webhook_policy *webhooks; /* where watches may send (--webhook-allow); NULL:
                                        * public addresses only */
    const bd_trusted_proxies *trusted_proxies; /* --trusted-proxy: whose X-Forwarded-For is
                                                * believed (http/client_addr.h); NULL: none */
    int64_t job_pause_ms;            /* tests only: the job runner sleeps this long per chunk */
    /* The store connections, per thread, as the composition root's connection policy gives
     * them (store/pool.h; borrowed, freed after the server). reads (BD_STORE_READ) and
     * writes (BD_STORE_WRITE | BD_STORE_SMALL_WRITES) name db and are required: the request
     * workers, the key refresh and the start's checks take theirs from them. The shared
     * limits' and the usage counters' pools, NULL: opened from shared_limits (usage: else
     * db) by the server. */
    struct bd_store_pool *reads_pool;
    struct bd_store_pool *writes_pool;
    struct bd_store_pool *limits_pool;
    struct bd_store_pool *usage_pool;
} bd_server_config;

typedef struct bd_server bd_server;
struct bd_job_runner;
struct bd_limiter;
struct bd_usage;

/* The server's life is driven by the composition root (app/app.c), which opens it, starts
 * the background services that keep it (app/maintenance.c, app/jobs.c, ...), then listens;
 * and at stop quiesces it, stops the services, and frees it.
 *
 * bd_server_open loads the secret, checks it belongs to the store, loads the keys, and opens
 * the limiters, usage counters, access log and TLS files; nothing listens yet. On failure
 * why holds a sentence for the operator. */
bd_result bd_server_open(const bd_server_config *cfg, bd_server **out, char *why, size_t whylen);
/* Starts listening and serving on cfg->listen. */
bd_result bd_server_listen(bd_server *srv, char *why, size_t whylen);
/* The port actually bound. */
uint16_t bd_server_port(const bd_server *srv);
/* Reopens the access log (after log rotation). */
void bd_server_reopen_log(bd_server *srv);
/* Stops accepting and lets requests in flight finish, waiting up to drain_s seconds for the
 * open connections to close. */
void bd_server_quiesce(bd_server *srv, unsigned drain_s);
/* Closes the connections left and stops the worker threads. */
void bd_server_close_listener(bd_server *srv);
/* Closes what is still listening, then every store connection, and frees (the usage counted
 * in memory is written first). NULL is ignored. */
void bd_server_free(bd_server *srv);

/* What the background services work on. */
const char *bd_server_db(const bd_server *srv);
struct bd_limiter *bd_server_limiter(bd_server *srv);
struct bd_usage *bd_server_usage(bd_server *srv);
/* The job runner that a submitted job wakes (NULL: none; jobs wait for a runner). */
void bd_server_set_job_runner(bd_server *srv, struct bd_job_runner *runner);
/* The lookup log that identity searches are noted in (auth/lookup_log.h; NULL: none, the
 * default). Set before listening, cleared after the listener stopped. */
struct bd_lookup_log;
void bd_server_set_lookup_log(bd_server *srv, struct bd_lookup_log *log);
/* One round of the key refresh, on the calling thread's connection of the read pool (dropped
 * after a failure, so the next round opens a new one). */
void bd_server_refresh_keys(bd_server *srv);
/* Lets every worker's read view go, so that an idle worker does not hold back the store. */
void bd_server_release_idle_reads(bd_server *srv);

#endif
