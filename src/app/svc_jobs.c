/* The bulk job runner (jobs/runner.h) as a service: the server's job submissions wake
 * it; at stop a job in progress keeps its stored chunks and is taken over later. Its threads
 * take their connections from the write and read pools. */
#include <stdio.h>

#include "app/services.h"
#include "jobs/runner.h"

static bd_result start(void *envp, void **state, char *why, size_t whylen)
{
    bd_app_env *env = envp;
    bd_job_runner *r = bd_job_runner_start(env->pools.writes, env->pools.reads,
                                           env->cfg->server.job_pause_ms);
    *state = r;
    if (!r) {
        snprintf(why, whylen, "cannot start the job runner thread");
        return BD_ERR_NOMEM;
    }
    bd_server_set_job_runner(env->srv, r);
    return BD_OK;
}

static void stop(void *state)
{
    bd_job_runner_stop(state);
}

/* The listener stops before this (services stop in reverse), so no request pokes the
 * runner once it is gone; the server's pointer is left to the stores service's free. */
const bd_service bd_svc_jobs = {"jobs", start, NULL, stop};
