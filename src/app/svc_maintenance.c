/* The server's maintenance, each a thread of its own so that one waiting on an unreachable
 * store (a connect timeout) does not hold up another:
 *   key-refresh   reads the API keys again every second (a revoked key stops working);
 *   read-views    lets idle workers' read views go every second;
 *   limits        with --shared-limits only: gives back leases unused for a second, and
 *                 retries an unreachable store of limits (auth/limiter.h);
 *   usage-flush   writes the usage counted in memory every second (auth/usage.h). */
#include <stdio.h>
#include <time.h>

#include "app/services.h"
#include "app/ticker.h"
#include "auth/limiter.h"
#include "auth/usage.h"

#define KEY_REFRESH_MS 1000
#define READ_VIEWS_MS 1000
#define LIMITS_TICK_MS 1000 /* leases unused this long go back (auth/limiter.h) */
#define USAGE_FLUSH_MS 1000 /* usage counted in memory is written this often */

static int64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Starts a ticker or says which thread could not start. */
static bd_result start_ticker(bd_ticker **out, long ms, bool first_now, void (*tick)(void *),
                              void *arg, const char *what, char *why, size_t whylen)
{
    *out = bd_ticker_start(ms, first_now, tick, arg);
    if (*out)
        return BD_OK;
    snprintf(why, whylen, "cannot start the %s thread", what);
    return BD_ERR_NOMEM;
}

/* key-refresh: its thread's connection is the read pool's */
static void refresh_tick(void *arg)
{
    bd_server_refresh_keys(arg);
}

static bd_result refresh_start(void *envp, void **state, char *why, size_t whylen)
{
    bd_app_env *env = envp;
    return start_ticker((bd_ticker **)state, KEY_REFRESH_MS, true, refresh_tick, env->srv,
                        "key refresh", why, whylen);
}

static void ticker_stop(void *state)
{
    bd_ticker_stop(state);
}

const bd_service bd_svc_key_refresh = {"key-refresh", refresh_start, NULL, ticker_stop};

/* read-views */
static void views_tick(void *arg)
{
    bd_server_release_idle_reads(arg);
}

static bd_result views_start(void *envp, void **state, char *why, size_t whylen)
{
    bd_app_env *env = envp;
    return start_ticker((bd_ticker **)state, READ_VIEWS_MS, true, views_tick, env->srv,
                        "read view release", why, whylen);
}

const bd_service bd_svc_read_views = {"read-views", views_start, NULL, ticker_stop};

/* limits: a thread only when the budgets are shared */
static void limits_tick(void *arg)
{
    bd_limiter_tick(arg, now_us());
}

static bd_result limits_start(void *envp, void **state, char *why, size_t whylen)
{
    bd_app_env *env = envp;
    bd_limiter *l = bd_server_limiter(env->srv);
    bd_limiter_health h;
    bd_limiter_health_get(l, &h);
    *state = NULL;
    if (!h.shared)
        return BD_OK;
    return start_ticker((bd_ticker **)state, LIMITS_TICK_MS, true, limits_tick, l,
                        "shared limits", why, whylen);
}

const bd_service bd_svc_limits = {"limits", limits_start, NULL, ticker_stop};

/* usage-flush: the last flush is bd_usage_free's, when the stores close */
static void usage_tick(void *arg)
{
    bd_usage_flush(arg, now_us());
}

static bd_result usage_start(void *envp, void **state, char *why, size_t whylen)
{
    bd_app_env *env = envp;
    return start_ticker((bd_ticker **)state, USAGE_FLUSH_MS, false, usage_tick,
                        bd_server_usage(env->srv), "usage counters", why, whylen);
}

const bd_service bd_svc_usage_flush = {"usage-flush", usage_start, NULL, ticker_stop};
