/* The server object's assembly and teardown: the configuration's defaults and checks, the
 * secret and its store, the parts every request uses (limiters, metrics, guard, access log,
 * TLS files), and its free. What listens and serves is in server.c. */
#include "http/server.h"

#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/secret_check.h"
#include "core/log.h"
#include "http/openapi.h"
#include "http/routes.h"
#include "http/server_impl.h"
#include "ingest/cvv.h"
#include "store/pool.h"

#define UPLOAD_MEMORY_DEFAULT (128u << 20)

/* Reads a PEM file (certificate or key) into a NUL-terminated string. */
static bd_result read_pem(const char *path, char **out, char *why, size_t whylen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(why, whylen, "cannot read %s", path);
        return BD_ERR_IO;
    }
    bd_buf b;
    bd_buf_init(&b, 1 << 20);
    char chunk[4096];
    size_t n;
    bd_result r = BD_OK;
    while (r == BD_OK && (n = fread(chunk, 1, sizeof chunk, f)) > 0)
        r = bd_buf_append(&b, chunk, n);
    fclose(f);
    if (r != BD_OK || b.len == 0) {
        bd_buf_free(&b);
        snprintf(why, whylen, "%s is empty or larger than 1 MiB", path);
        return BD_ERR_INVALID;
    }
    *out = b.data;
    return BD_OK;
}

/* A base path without trailing slashes, into out (128 bytes); false when it is not a
 * path. */
static bool set_base(const char *base, char out[128], size_t *len)
{
    size_t bl = strlen(base);
    while (bl > 0 && base[bl - 1] == '/')
        bl--;
    if (bl == 0 || base[0] != '/' || bl >= 128)
        return false;
    memcpy(out, base, bl);
    out[bl] = '\0';
    *len = bl;
    return true;
}

/* Whether one base path lies within the other (the two APIs must not overlap). */
static bool bases_overlap(const bd_server *srv)
{
    size_t n = srv->base_len < srv->hibp_base_len ? srv->base_len : srv->hibp_base_len;
    const char *longer = srv->base_len > n ? srv->base : srv->hibp_base;
    return memcmp(srv->base, srv->hibp_base, n) == 0 &&
           (srv->base_len == srv->hibp_base_len || longer[n] == '/');
}

/* No --secret, and the store has no default secret file: says first what keeps the store
 * itself from opening (a kind of store this build does not support), else that --secret is
 * needed. */
static bd_result no_secret(bd_server *srv, char *why, size_t whylen)
{
    bd_store *s;
    bd_result r = bd_store_pool_open_once(srv->cfg.reads_pool, &s, why, whylen);
    if (r != BD_OK)
        return r;
    bd_store_close(s);
    snprintf(why, whylen, "--secret FILE is required with this store");
    return BD_ERR_INVALID;
}

/* Cards stored before CVVs were masked keep them in clear until a program holding the
 * secret opens the store (ingest/cvv.h): the server does that at start, on a connection of
 * its own that may write. A database server's standby cannot: its primary's breachctl or
 * breachd does it. Replies show every CVV masked either way (ingest/mask.h). */
static void finish_cvv_upgrade(const bd_server *srv)
{
    bd_store *w;
    char why[512];
    int64_t changed = 0;
    bd_result r = bd_store_pool_open_once(srv->cfg.writes_pool, &w, why, sizeof why);
    if (r == BD_OK) {
        r = bd_cvv_upgrade(w, srv->secret, &changed);
        bd_store_close(w);
    }
    if (r != BD_OK)
        bd_log(BD_LOG_WARN, "store",
               "the CVVs of cards stored by an older version may still be in clear in the "
               "store (%s); a breachctl command with its secret masks them",
               bd_result_str(r));
    else if (changed > 0)
        bd_log(BD_LOG_INFO, "store",
               "the CVVs of %lld cards stored by an older version are now masked and keyed",
               (long long)changed);
}

/* Loads the secret, checks it belongs to the store (so a wrong path or a foreign secret
 * fails at start), finishes an upgrade that needs the secret, and loads the keys. */
static bd_result open_store(bd_server *srv, char *why, size_t whylen)
{
    char secret_path[1100];
    if (srv->cfg.secret_path)
        snprintf(secret_path, sizeof secret_path, "%s", srv->cfg.secret_path);
    else if (!bd_store_default_secret_path(srv->db, secret_path, sizeof secret_path))
        return no_secret(srv, why, whylen);
    bd_result r = bd_secret_load(secret_path, srv->secret, why, whylen);
    if (r != BD_OK)
        return r;
    bd_store *s;
    r = bd_store_pool_open_once(srv->cfg.reads_pool, &s, why, whylen);
    if (r != BD_OK)
        return r;
    /* a standby beside its primary may lag; a failing store is said, not a wrong secret */
    r = bd_secret_check(s, srv->db, secret_path, srv->secret,
                        BD_SECRET_CHECK_WAIT | BD_SECRET_CHECK_STORE_APART, why, whylen);
    if (r != BD_OK) {
        bd_store_close(s);
        return r;
    }
    finish_cvv_upgrade(srv);
    srv->keys = bd_keyring_new();
    r = srv->keys ? bd_keyring_refresh(srv->keys, s) : BD_ERR_NOMEM;
    bd_store_close(s);
    if (r != BD_OK)
        snprintf(why, whylen, "cannot load API keys from the store");
    return r;
}

/* Limiters, metrics, the guard, the access log and the TLS files. */
static bd_result open_parts(bd_server *srv, char *why, size_t whylen)
{
    const bd_server_config *cfg = &srv->cfg;
    bd_result lr = cfg->limits_pool
                       ? bd_limiter_new_pooled(cfg->limits_pool, &srv->limiter, why, whylen)
                       : bd_limiter_new(cfg->shared_limits, &srv->limiter, why, whylen);
    if (lr != BD_OK)
        return lr;
    /* usage is written where shared limits are (the primary, when serving from a standby) */
    srv->usage = cfg->usage_pool ? bd_usage_new_pooled(cfg->usage_pool)
                                 : bd_usage_new(cfg->shared_limits ? cfg->shared_limits : srv->db);
    if (!srv->usage)
        return BD_ERR_NOMEM;
    srv->auth_fails = bd_ratelimit_new(1u << 14);
    srv->known_keys = bd_known_keys_new(1u << 16);
    srv->metrics = bd_metrics_new(bd_routes_n, bd_route_label_at);
    srv->guard = bd_guard_new(cfg->header_timeout);
    if (!srv->auth_fails || !srv->known_keys || !srv->metrics || !srv->guard)
        return BD_ERR_NOMEM;
    bd_result cr = bd_cors_init(&srv->cors, cfg->cors_origins, cfg->cors_origins_n, why, whylen);
    if (cr != BD_OK)
        return cr;
    randombytes_buf(srv->id_key, sizeof srv->id_key);
    if (cfg->access_log) {
        bd_result r = bd_access_log_open(cfg->access_log, &srv->log, why, whylen);
        if (r != BD_OK)
            return r;
    }
    if (!cfg->tls_cert != !cfg->tls_key) {
        snprintf(why, whylen, "--tls-cert and --tls-key go together");
        return BD_ERR_INVALID;
    }
    if (!cfg->tls_cert)
        return BD_OK;
    bd_result r = read_pem(cfg->tls_cert, &srv->tls_cert, why, whylen);
    return r == BD_OK ? read_pem(cfg->tls_key, &srv->tls_key, why, whylen) : r;
}

/* Fills in the documented defaults for zero fields. */
static void apply_defaults(bd_server_config *cfg)
{
    if (!cfg->listen)
        cfg->listen = "127.0.0.1:8080";
    if (!cfg->base_path)
        cfg->base_path = "/v7";
    if (!cfg->hibp_base_path)
        cfg->hibp_base_path = "/api/v3";
    if (!cfg->hibp_domain_max)
        cfg->hibp_domain_max = 10000;
    if (!cfg->conn_timeout)
        cfg->conn_timeout = 30;
    if (!cfg->header_timeout)
        cfg->header_timeout = 10;
    if (!cfg->max_conns)
        cfg->max_conns = 4096;
    if (!cfg->auth_fail_limit)
        cfg->auth_fail_limit = 60;
    if (!cfg->max_upload_memory)
        cfg->max_upload_memory = UPLOAD_MEMORY_DEFAULT;
    if (cfg->max_upload_memory < BD_UPLOAD_MAX) /* every body a resource takes must fit */
        cfg->max_upload_memory = BD_UPLOAD_MAX;
    if (cfg->empty_search_status != 200)
        cfg->empty_search_status = 404;
}

bd_result bd_server_open(const bd_server_config *cfg, bd_server **out, char *why, size_t whylen)
{
    *out = NULL;
    if (sodium_init() < 0)
        return BD_ERR_CRYPTO;
    bd_server *srv = calloc(1, sizeof *srv);
    if (!srv)
        return BD_ERR_NOMEM;
    srv->cfg = *cfg;
    apply_defaults(&srv->cfg);
    bd_upload_budget_init(&srv->uploads, srv->cfg.max_upload_memory);
    pthread_mutex_init(&srv->workers_lock, NULL);
    bd_result r = BD_ERR_INVALID;
    if (!cfg->reads_pool || !cfg->writes_pool) {
        snprintf(why, whylen, "the server was given no store connection pools");
        goto fail;
    }
    if (strlen(cfg->db) >= sizeof srv->db) {
        snprintf(why, whylen, "the store's name is longer than %zu bytes", sizeof srv->db - 1);
        goto fail;
    }
    snprintf(srv->db, sizeof srv->db, "%s", cfg->db);
    if (!set_base(srv->cfg.base_path, srv->base, &srv->base_len)) {
        snprintf(why, whylen, "--base-path must start with '/', like /v7");
        goto fail;
    }
    if (!set_base(srv->cfg.hibp_base_path, srv->hibp_base, &srv->hibp_base_len) ||
        bases_overlap(srv)) {
        snprintf(why, whylen,
                 "--hibp-base-path must start with '/', like /api/v3, and lie apart from "
                 "--base-path");
        goto fail;
    }
    if ((r = bd_openapi_for_base(srv->base, srv->hibp_base, &srv->openapi)) != BD_OK) {
        snprintf(why, whylen, "the built-in OpenAPI document has no base paths to set");
        goto fail;
    }
    if ((r = open_store(srv, why, whylen)) != BD_OK || (r = open_parts(srv, why, whylen)) != BD_OK)
        goto fail;
    *out = srv;
    return BD_OK;
fail:
    bd_server_free(srv);
    return r;
}

void bd_server_reopen_log(bd_server *srv)
{
    char why[256];
    if (srv->log && bd_access_log_reopen(srv->log, why, sizeof why) != BD_OK)
        bd_log(BD_LOG_ERROR, "http", "%s", why);
}

void bd_server_free(bd_server *srv)
{
    if (!srv)
        return;
    bd_server_close_listener(srv);
    bd_workers_free(srv);
    bd_keyring_free(srv->keys);
    bd_limiter_free(srv->limiter);
    bd_usage_free(srv->usage); /* writes what was counted in memory */
    bd_ratelimit_free(srv->auth_fails);
    bd_known_keys_free(srv->known_keys);
    bd_guard_free(srv->guard);
    bd_metrics_free(srv->metrics);
    bd_access_log_close(srv->log);
    bd_buf_free(&srv->openapi);
    free(srv->tls_cert);
    if (srv->tls_key)
        sodium_memzero(srv->tls_key, strlen(srv->tls_key));
    free(srv->tls_key);
    sodium_memzero(srv->secret, sizeof srv->secret);
    pthread_mutex_destroy(&srv->workers_lock);
    free(srv);
}
