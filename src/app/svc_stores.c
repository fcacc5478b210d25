/* The stores service, first to start and last to stop: the server's secret, its stores'
 * check, keys, limiters, usage counters, access log and TLS files (http/server.h,
 * bd_server_open). Its stop closes every store connection the server's threads opened. */
#include "app/services.h"

static bd_result start(void *envp, void **state, char *why, size_t whylen)
{
    bd_app_env *env = envp;
    *state = env;
    return bd_server_open(&env->cfg->server, &env->srv, why, whylen);
}

static void stop(void *state)
{
    bd_app_env *env = state;
    bd_server_free(env->srv); /* writes the usage still counted in memory */
    env->srv = NULL;
}

const bd_service bd_svc_stores = {"stores", start, NULL, stop};
