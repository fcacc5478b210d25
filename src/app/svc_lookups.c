/* The lookup log (auth/lookup_log.h) as a service: its buffer, given to the server before it
 * listens, and a thread that writes the buffer to the store about once a second (sooner when
 * it is half full) and deletes the rows older than --lookup-retention once a day (at start,
 * then every 24 hours: each instance does, and deleting twice changes nothing). Its thread
 * takes its connection from the write pool. With --lookup-retention 0 nothing is logged and
 * what an earlier run logged is deleted at start. At stop (after the listener: no request
 * notes any more) what is left in the buffer is written. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "app/services.h"
#include "auth/lookup_log.h"
#include "core/log.h"

#define FLUSH_MS 1000
#define EXPIRE_EVERY_S 86400

typedef struct {
    bd_server *srv;
    bd_store_pool *writes;
    bd_lookup_log *log; /* NULL: retention 0, no log */
    int64_t retention_s;
    pthread_t thread;
    bool started;
    atomic_bool stopping;
    int64_t last_expire; /* Unix seconds; 0: not yet */
    bool said_flush, said_expire;
} lookups;

static int64_t now_s(void)
{
    return (int64_t)time(NULL);
}

static bd_store *writer(lookups *lk)
{
    bd_store *s = NULL;
    char why[256];
    if (bd_store_pool_get(lk->writes, &s, why, sizeof why) != BD_OK)
        return NULL;
    return s;
}

static void flush(lookups *lk)
{
    int64_t dropped = bd_lookup_log_take_dropped(lk->log);
    if (dropped)
        bd_log(BD_LOG_WARN, "lookups",
               "the lookup log's buffer was full: %lld searches were not logged",
               (long long)dropped);
    bd_store *s = writer(lk);
    bd_result r = s ? bd_lookup_log_flush(lk->log, s, NULL) : BD_ERR_STORE;
    if (r != BD_OK) {
        if (!lk->said_flush)
            bd_log(BD_LOG_WARN, "lookups",
                   "cannot write the lookup log to the store (%s); its rows are kept and "
                   "written when it can",
                   bd_result_str(r));
        lk->said_flush = true;
        if (s)
            bd_store_pool_drop(lk->writes);
        return;
    }
    if (lk->said_flush)
        bd_log(BD_LOG_INFO, "lookups", "the lookup log is written to the store again");
    lk->said_flush = false;
}

/* Deletes the rows past the retention (every row with retention 0). */
static void expire(lookups *lk)
{
    int64_t now = now_s(), deleted = 0;
    bd_store *s = writer(lk);
    int64_t before = lk->retention_s ? now - lk->retention_s : INT64_MAX;
    bd_result r = s ? bd_store_lookup_expire(s, before, &deleted) : BD_ERR_STORE;
    if (r != BD_OK) {
        if (!lk->said_expire)
            bd_log(BD_LOG_WARN, "lookups", "cannot delete the lookup log's expired rows (%s)",
                   bd_result_str(r));
        lk->said_expire = true;
        if (s)
            bd_store_pool_drop(lk->writes);
        return; /* tried again at the next round */
    }
    lk->said_expire = false;
    lk->last_expire = now;
    if (deleted)
        bd_log(BD_LOG_INFO, "lookups", "deleted %lld lookup log rows older than %lld days",
               (long long)deleted, (long long)(lk->retention_s / 86400));
}

static void *run(void *arg)
{
    lookups *lk = arg;
    while (!atomic_load(&lk->stopping)) {
        bd_lookup_log_wait(lk->log, FLUSH_MS);
        bd_lookup_log_tick(lk->log, now_s());
        flush(lk);
        if (now_s() - lk->last_expire >= EXPIRE_EVERY_S)
            expire(lk);
    }
    flush(lk); /* the last rows: the listener stopped before this service */
    return NULL;
}

static bd_result start(void *envp, void **state, char *why, size_t whylen)
{
    bd_app_env *env = envp;
    lookups *lk = calloc(1, sizeof *lk);
    *state = lk;
    if (!lk) {
        snprintf(why, whylen, "out of memory for the lookup log");
        return BD_ERR_NOMEM;
    }
    lk->srv = env->srv;
    lk->writes = env->pools.writes;
    lk->retention_s = env->cfg->lookup_retention_s;
    atomic_init(&lk->stopping, false);
    expire(lk); /* at start, on this thread: retention 0 empties the log here */
    if (lk->retention_s == 0)
        return BD_OK;
    lk->log = bd_lookup_log_new();
    if (!lk->log || pthread_create(&lk->thread, NULL, run, lk) != 0) {
        snprintf(why, whylen, "cannot start the lookup log (out of memory or threads)");
        bd_lookup_log_free(lk->log);
        free(lk);
        *state = NULL;
        return BD_ERR_NOMEM;
    }
    lk->started = true;
    bd_server_set_lookup_log(lk->srv, lk->log);
    return BD_OK;
}

/* A service that failed to start is not stopped (app/service.h): start frees its own. */
static void stop(void *state)
{
    lookups *lk = state;
    if (!lk)
        return;
    if (lk->srv)
        bd_server_set_lookup_log(lk->srv, NULL);
    if (lk->started) {
        atomic_store(&lk->stopping, true);
        bd_lookup_log_wake(lk->log);
        pthread_join(lk->thread, NULL);
    }
    bd_lookup_log_free(lk->log);
    free(lk);
}

const bd_service bd_svc_lookups = {"lookups", start, NULL, stop};
