/* pg-batch: on a PostgreSQL store with --pg-dispatch on (the default), the lookup
 * dispatcher (store/pg_batch.h): an email search that a fixed statement answers, or a card
 * BIN page, waits for it with its connection suspended, and the searches of one kind waiting
 * at one moment go out as one statement (a search alone runs on its own thread, unless
 * --pg-dispatch always). Started before the listener, so the server knows it when it
 * listens; drained
 * after the listener's drain (its suspended requests are answered), stopped after the
 * listener stopped. On SQLite, or with --pg-dispatch off, it does nothing. */
#include <stdio.h>

#include "app/services.h"
#include "http/pg_dispatch.h"
#include "store/pg_batch.h"

static bd_result batch_start(void *envp, void **state, char *why, size_t whylen)
{
    bd_app_env *env = envp;
    *state = NULL;
    bd_store_caps caps;
    bd_store_kind_caps(env->cfg->server.db, &caps);
    if (env->cfg->pg_dispatch == BD_PG_DISPATCH_OFF || !caps.database_server)
        return BD_OK;
    bd_pg_batch *b = bd_pg_batch_start(env->cfg->server.db,
                                       env->cfg->pg_dispatch == BD_PG_DISPATCH_ALWAYS);
    if (!b) {
        snprintf(why, whylen, "cannot start the PostgreSQL lookup dispatcher");
        return BD_ERR_NOMEM;
    }
    bd_server_set_pg_batch(env->srv, b);
    *state = env;
    return BD_OK;
}

static void batch_drain(void *state)
{
    bd_app_env *env = state;
    if (env)
        bd_pg_batch_drain(bd_server_pg_batch(env->srv));
}

static void batch_stop(void *state)
{
    bd_app_env *env = state;
    if (!env)
        return;
    bd_pg_batch *b = bd_server_pg_batch(env->srv);
    bd_server_set_pg_batch(env->srv, NULL);
    bd_pg_batch_stop(b);
}

const bd_service bd_svc_pg_batch = {"pg-batch", batch_start, batch_drain, batch_stop};
