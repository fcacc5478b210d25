/* The HTTP server: libmicrohttpd with a pool of worker threads, each holding its own store
 * connection and response buffer. */
#ifndef BD_HTTP_SERVER_H
#define BD_HTTP_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/result.h"
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
    const bd_webhook_policy *webhooks; /* where watches may send (--webhook-allow); NULL:
                                        * public addresses only */
    int64_t job_pause_ms;            /* tests only: the job runner sleeps this long per chunk */
} bd_server_config;

typedef struct bd_server bd_server;

/* Starts serving. On failure why holds a sentence for the operator. */
bd_result bd_server_start(const bd_server_config *cfg, bd_server **out, char *why, size_t whylen);
/* The port actually bound. */
uint16_t bd_server_port(const bd_server *srv);
/* Reopens the access log (after log rotation). */
void bd_server_reopen_log(bd_server *srv);
/* Stops accepting, lets requests in flight finish (up to drain_s seconds for connections
 * to close), then releases everything. */
void bd_server_stop(bd_server *srv, unsigned drain_s);

#endif
