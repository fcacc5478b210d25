/* The per-thread workers: each libmicrohttpd thread's store connections, reply buffers and
 * caches, made on its first request and kept until the server is freed, and the write
 * connection a request opens through its worker. */
#include <pthread.h>
#include <stdlib.h>

#include "core/log.h"
#include "http/gzip.h"
#include "http/reply_cache.h"
#include "http/server_impl.h"
#include "store/pool.h"

#define BODY_MAX (64u << 20) /* a full page of 1000 records with long attributes fits */
/* Requests on one thread that start within this many microseconds share a read view (see
 * bd_store_share_reads): a search sees every import committed 2 ms before it arrived. */
#define READ_SHARE_US 2000
#define LOG_LINE_MAX 4096

static _Thread_local bd_worker *tls_worker;

bd_worker *bd_worker_of_thread(bd_server *srv)
{
    if (tls_worker)
        return tls_worker;
    bd_worker *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    char why[256];
    if (bd_store_pool_get(srv->cfg.reads_pool, &w->store, why, sizeof why) != BD_OK) {
        bd_log(BD_LOG_ERROR, "http", "%s", why);
        free(w);
        return NULL;
    }
    bd_store_share_reads(w->store, READ_SHARE_US);
    w->writes = srv->cfg.writes_pool;
    bd_buf_init(&w->body, BODY_MAX);
    bd_buf_init(&w->log_line, LOG_LINE_MAX);
    w->breach_json = bd_breach_json_new();
    w->replies = bd_reply_cache_new();
    w->gzip = bd_gzip_new(); /* NULL: replies go out uncompressed */
    bd_buf_init(&w->gzipped, BODY_MAX);
    pthread_mutex_lock(&srv->workers_lock);
    w->next = srv->workers;
    srv->workers = w;
    pthread_mutex_unlock(&srv->workers_lock);
    tls_worker = w;
    return w;
}

bd_store *bd_req_writer(bd_req *rq)
{
    bd_worker *w = rq->worker;
    char why[256];
    /* the write pool's SMALL_WRITES: a plain WRITE open of a SQLite file fixes its mode by
     * opening and closing it, which drops every POSIX lock the server's other connections
     * hold on it */
    if (!w->writer && bd_store_pool_get(w->writes, &w->writer, why, sizeof why) != BD_OK) {
        bd_log(BD_LOG_ERROR, "http", "opening the store for writes: %s", why);
        w->writer = NULL;
        rq->store_failed = true;
        rq->retry_after = 1;
        bd_reply_error(rq, 503, "unavailable", "the store cannot take writes now");
        return NULL;
    }
    return w->writer;
}

void bd_workers_free(bd_server *srv)
{
    for (bd_worker *w = srv->workers, *next; w; w = next) {
        next = w->next;
        /* w->store and w->writer are the pools', closed after the server */
        bd_gzip_free(w->gzip);
        bd_buf_free(&w->gzipped);
        bd_buf_free(&w->body);
        bd_buf_free(&w->log_line);
        bd_breach_json_free(w->breach_json);
        bd_reply_cache_free(w->replies);
        free(w);
    }
    srv->workers = NULL;
}
