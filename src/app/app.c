/* The composition root: the one place a running breachd is put together and taken apart.
 *
 * Start order (each needs the ones before it):
 *   1. stores       the secret and its check, the keys, limiters, usage counters, access
 *                   log and TLS files (the server, not yet listening)
 *   2. key-refresh, read-views, limits, usage-flush   the maintenance threads
 *   3. jobs         the bulk job runner
 *   4. webhooks     the alert deliverer
 *   4b. lookups     the lookup log's buffer and its writer (who searched for whom)
 *   4c. range-snapshot   PostgreSQL: the local copy of the password ranges /range/ reads
 *   4d. pg-batch    PostgreSQL: the lookup dispatcher email searches wait for, suspended
 *   5. http         the listener: requests arrive only once everything they use runs
 * Stop, in reverse: the listener stops accepting and drains the requests in flight (every
 * service still running), then each service stops, the listener's connections first and the
 * stores last (the usage counted in memory is written as they close).
 *
 * A new service is a file defining a bd_service (app/service.h), declared in
 * app/services.h, and one line in SERVICES below. */
#include "app/app.h"

#include <stdlib.h>

#include "app/service.h"
#include "app/services.h"

static const bd_service *const SERVICES[] = {
    &bd_svc_stores,      &bd_svc_key_refresh, &bd_svc_read_views, &bd_svc_limits,
    &bd_svc_usage_flush, &bd_svc_jobs,        &bd_svc_webhooks,   &bd_svc_lookups,
    &bd_svc_range_snapshot, &bd_svc_pg_batch, &bd_svc_http,
};

struct bd_app {
    bd_app_config cfg;
    bd_app_env env;
    bd_services running;
};

bd_result bd_app_start(const bd_app_config *cfg, bd_app **out, char *why, size_t whylen)
{
    *out = NULL;
    bd_app *app = calloc(1, sizeof *app);
    if (!app)
        return BD_ERR_NOMEM;
    app->cfg = *cfg;
    app->env.cfg = &app->cfg;
    bd_result r = bd_services_start(&app->running, SERVICES, sizeof SERVICES / sizeof *SERVICES,
                                    &app->env, why, whylen);
    if (r != BD_OK) {
        free(app);
        return r;
    }
    *out = app;
    return BD_OK;
}

uint16_t bd_app_port(const bd_app *app)
{
    return bd_server_port(app->env.srv);
}

void bd_app_reopen_log(bd_app *app)
{
    bd_server_reopen_log(app->env.srv);
}

void bd_app_stop(bd_app *app)
{
    if (!app)
        return;
    bd_services_stop(&app->running);
    free(app);
}
