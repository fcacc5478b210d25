/* The stores service, first to start and last to stop: the server's secret, its stores'
 * check, keys, limiters, usage counters, access log and TLS files (http/server.h,
 * bd_server_open). Its stop closes every store connection the server's threads opened.
 *
 * The connection policy starts here: the pools of per-thread connections (app/store_pool.h)
 * are made here, with their flags, and handed to the parts that use them:
 *   shared limits   --shared-limits, BD_STORE_WRITE (a bucket is a write)
 *   usage counters  --shared-limits, else --db, BD_STORE_WRITE | BD_STORE_SMALL_WRITES
 * and closed after the server, once no thread can use them. */
#include <stdlib.h>

#include "app/services.h"
#include "app/store_pool.h"

typedef struct {
    bd_app_env *env;
    bd_store_pool *limits; /* NULL: budgets per process */
    bd_store_pool *usage;
} stores;

static void stop(void *state)
{
    stores *s = state;
    bd_server_free(s->env->srv); /* writes the usage still counted in memory */
    s->env->srv = NULL;
    bd_store_pool_free(s->usage);
    bd_store_pool_free(s->limits);
    free(s);
}

static bd_result start(void *envp, void **state, char *why, size_t whylen)
{
    bd_app_env *env = envp;
    bd_server_config cfg = env->cfg->server;
    stores *s = calloc(1, sizeof *s);
    if (!s)
        return BD_ERR_NOMEM;
    s->env = env;
    /* usage is written where shared limits are (the primary, when serving from a standby) */
    s->usage = bd_store_pool_new(cfg.shared_limits ? cfg.shared_limits : cfg.db,
                                 BD_STORE_WRITE | BD_STORE_SMALL_WRITES);
    if (cfg.shared_limits)
        s->limits = bd_store_pool_new(cfg.shared_limits, BD_STORE_WRITE);
    bd_result r = BD_ERR_NOMEM;
    if (s->usage && (s->limits || !cfg.shared_limits)) {
        cfg.limits_pool = s->limits;
        cfg.usage_pool = s->usage;
        r = bd_server_open(&cfg, &env->srv, why, whylen);
    }
    if (r != BD_OK) {
        stop(s);
        return r;
    }
    *state = s;
    return BD_OK;
}

const bd_service bd_svc_stores = {"stores", start, NULL, stop};
