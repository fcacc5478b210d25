/* The stores service, first to start and last to stop: the server's secret, its stores'
 * check, keys, limiters, usage counters, access log and TLS files (http/server.h,
 * bd_server_open). Its stop closes every store connection the server's threads opened.
 *
 * The connection policy starts here: the pools of per-thread connections (store/pool.h)
 * are made here, with their flags, and handed to the parts that use them:
 *   reads    --db, BD_STORE_READ: the request workers' searches (one per worker thread),
 *            the key refresh, the job runner's lookups, the start's checks
 *   writes   --db, BD_STORE_WRITE | BD_STORE_SMALL_WRITES: the request workers' writes
 *            (watches, jobs), the job runner's claims and results, the webhook deliverer's
 *            leases, the start's CVV upgrade (SMALL_WRITES: a plain WRITE open of a SQLite
 *            file drops the POSIX locks the server's other connections hold on it)
 *   limits   --shared-limits, BD_STORE_WRITE: the shared limits (a bucket is a write)
 *   usage    --shared-limits, else --db, BD_STORE_WRITE | BD_STORE_SMALL_WRITES: the usage
 *            counters (written where the shared limits are: the primary, when serving from
 *            a standby)
 * and closed after the server, once no thread can use them. */
#include <stdlib.h>

#include "app/services.h"

static void stop(void *state)
{
    bd_app_env *env = state;
    bd_server_free(env->srv); /* writes the usage still counted in memory */
    env->srv = NULL;
    bd_store_pool_free(env->pools.usage);
    bd_store_pool_free(env->pools.limits);
    bd_store_pool_free(env->pools.writes);
    bd_store_pool_free(env->pools.reads);
    env->pools = (bd_app_pools){NULL, NULL, NULL, NULL};
}

static bd_result start(void *envp, void **state, char *why, size_t whylen)
{
    bd_app_env *env = envp;
    bd_server_config cfg = env->cfg->server;
    bd_app_pools *p = &env->pools;
    *state = env;
    p->reads = bd_store_pool_new(cfg.db, BD_STORE_READ);
    p->writes = bd_store_pool_new(cfg.db, BD_STORE_WRITE | BD_STORE_SMALL_WRITES);
    p->usage = bd_store_pool_new(cfg.shared_limits ? cfg.shared_limits : cfg.db,
                                 BD_STORE_WRITE | BD_STORE_SMALL_WRITES);
    if (cfg.shared_limits)
        p->limits = bd_store_pool_new(cfg.shared_limits, BD_STORE_WRITE);
    bd_result r = BD_ERR_NOMEM;
    if (p->reads && p->writes && p->usage && (p->limits || !cfg.shared_limits)) {
        cfg.reads_pool = p->reads;
        cfg.writes_pool = p->writes;
        cfg.limits_pool = p->limits;
        cfg.usage_pool = p->usage;
        r = bd_server_open(&cfg, &env->srv, why, whylen);
    }
    if (r != BD_OK)
        stop(env);
    return r;
}

const bd_service bd_svc_stores = {"stores", start, NULL, stop};
