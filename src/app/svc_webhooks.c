/* The webhook deliverer (webhook/deliver.h) as a service; its leasing thread takes its
 * connection from the write pool. */
#include "app/services.h"
#include "webhook/deliver.h"

static bd_result start(void *envp, void **state, char *why, size_t whylen)
{
    bd_app_env *env = envp;
    static const bd_webhook_policy public_only; /* no --webhook-allow */
    const bd_webhook_policy *p = env->cfg->server.webhooks ? env->cfg->server.webhooks
                                                           : &public_only;
    return bd_deliverer_start(env->pools.writes, p, env->cfg->console_url, env->cfg->smtp,
                              env->cfg->alert_retention_s,
                              (bd_deliverer **)state, why, whylen);
}

static void stop(void *state)
{
    bd_deliverer_stop(state);
}

const bd_service bd_svc_webhooks = {"webhooks", start, NULL, stop};
