/* The HTTP listener as a service, started last and stopped first: its drain stops accepting
 * and lets requests in flight finish (up to drain_s seconds), while every service they may
 * use still runs; its stop closes what connections are left. */
#include "app/services.h"

static bd_result start(void *envp, void **state, char *why, size_t whylen)
{
    bd_app_env *env = envp;
    *state = env;
    return bd_server_listen(env->srv, why, whylen);
}

static void drain(void *state)
{
    bd_app_env *env = state;
    bd_server_quiesce(env->srv, env->cfg->drain_s);
}

static void stop(void *state)
{
    bd_app_env *env = state;
    bd_server_close_listener(env->srv);
}

const bd_service bd_svc_http = {"http", start, drain, stop};
