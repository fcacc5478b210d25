/* breachd: the HTTP server. Parses flags into a configuration, has the composition root
 * (app/app.h) start everything, waits for a signal, and has it stop everything. */
#include <pthread.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "app/app.h"
#include "cli/args.h"
#include "cli/help.h"
#include "cli/settings.h"
#include "core/log.h"
#include "core/notify.h"
#include "http/cors.h"
#include "webhook/formats.h"
#include "webhook/policy.h"
#include "webhook/send.h"

/* the arguments parsed (settings from the file, the environment and the command line, in
 * that order: cli/settings.h), kept until exit */
static bd_settings settings;
static char origin_buf[4200];
/* Where argument i came from, for a message: "FILE:LINE: ", "BREACHD_X: " or "". */
#define ORIGIN(i) bd_settings_origin(&settings, (i), origin_buf, sizeof origin_buf)

int main(int argc, char **argv)
{
    umask(077); /* every file it makes (store index, access log) is its owner's alone */
    if (bd_help_asked(argc - 1, argv + 1)) {
        bd_help_print(stdout, &BD_HELP_BREACHD, &BD_HELP_BREACHD.cmds[0], NULL);
        return 0;
    }
    if (bd_version_asked(argc - 1, argv + 1)) {
        bd_help_version(stdout, "breachd");
        return 0;
    }
    char why[4400];
    if (!bd_settings_breachd(argc, argv, &settings, why, sizeof why)) {
        fprintf(stderr, "breachd: %s\n", why);
        return 2;
    }
    argc = settings.argc;
    argv = settings.argv;
    bd_server_config cfg = {
        .listen = "127.0.0.1:8080", .base_path = "/v7", .max_conns_per_ip = 128};
    const char *cors[BD_CORS_MAX_ORIGINS];
    cfg.cors_origins = cors;
    static bd_webhook_policy webhooks; /* read by the server's workers and the delivery thread */
    cfg.webhooks = &webhooks;
    static bd_trusted_proxies proxies; /* read by the server's workers */
    cfg.trusted_proxies = &proxies;
    int64_t alert_retention_days = 30;
    const char *console_url = NULL; /* --console-url */
    const char *smtp_url = NULL, *smtp_from = NULL, *smtp_credentials = NULL; /* --smtp-* */
    bool smtp_insecure = false;
    int64_t lookup_retention_days = 90; /* 0: no lookup log (auth/lookup_log.h) */
    const char *range_snapshot_dir = NULL; /* --range-snapshot-dir: /range/ reads the store */
    int pg_dispatch = BD_PG_DISPATCH_ON; /* --pg-dispatch: PostgreSQL email searches wait */
    bd_log_format log_format = BD_LOG_TEXT;
    bd_log_level log_level = BD_LOG_INFO;
    bd_uri_arg db = {&BD_OPT_DB, NULL, NULL}, limits = {&BD_OPT_SHARED_LIMITS, NULL, NULL};
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        int64_t n;
        int taken = bd_uri_arg_take(&db, "breachd", argc, argv, &i);
        if (!taken)
            taken = bd_uri_arg_take(&limits, "breachd", argc, argv, &i);
        if (taken < 0)
            return 2;
        if (taken)
            continue;
        int at = i; /* the argument's index, for its origin */
        if (bd_arg_value(argc, argv, &i, "--secret", &v)) {
            cfg.secret_path = v;
        } else if (bd_arg_value(argc, argv, &i, "--listen", &v)) {
            cfg.listen = v;
        } else if (bd_arg_value(argc, argv, &i, "--tls-cert", &v)) {
            cfg.tls_cert = v;
        } else if (bd_arg_value(argc, argv, &i, "--tls-key", &v)) {
            cfg.tls_key = v;
        } else if (bd_arg_value(argc, argv, &i, "--access-log", &v)) {
            cfg.access_log = v;
        } else if (bd_arg_value(argc, argv, &i, "--range-auth", &v) &&
                   (strcmp(v, "none") == 0 || strcmp(v, "key") == 0)) {
            cfg.range_open = strcmp(v, "none") == 0;
        } else if (bd_arg_value(argc, argv, &i, "--console", &v) && v &&
                   (strcmp(v, "on") == 0 || strcmp(v, "off") == 0)) {
            cfg.console_off = strcmp(v, "off") == 0;
        } else if (bd_arg_value(argc, argv, &i, "--console-logos", &v) && v && *v) {
            cfg.console_logos = v;
        } else if (bd_arg_value(argc, argv, &i, "--range-snapshot-dir", &v) && v && *v) {
            range_snapshot_dir = v;
        } else if (bd_arg_value(argc, argv, &i, "--pg-dispatch", &v) && v &&
                   (strcmp(v, "on") == 0 || strcmp(v, "off") == 0 ||
                    strcmp(v, "always") == 0)) {
            pg_dispatch = strcmp(v, "on") == 0    ? BD_PG_DISPATCH_ON
                          : strcmp(v, "off") == 0 ? BD_PG_DISPATCH_OFF
                                                  : BD_PG_DISPATCH_ALWAYS;
        } else if (bd_arg_value(argc, argv, &i, "--base-path", &v)) {
            cfg.base_path = v;
        } else if (bd_arg_value(argc, argv, &i, "--hibp-base-path", &v)) {
            cfg.hibp_base_path = v;
        } else if (bd_arg_value(argc, argv, &i, "--hibp-catalog-auth", &v) && v &&
                   (strcmp(v, "none") == 0 || strcmp(v, "key") == 0)) {
            cfg.hibp_catalog_open = strcmp(v, "none") == 0;
        } else if (bd_arg_value(argc, argv, &i, "--hibp-domain-max", &v) &&
                   bd_parse_i64(v, 1, 1000000, &n)) {
            cfg.hibp_domain_max = n;
        } else if (bd_arg_value(argc, argv, &i, "--threads", &v) && bd_parse_i64(v, 1, 256, &n)) {
            cfg.threads = (unsigned)n;
        } else if (bd_arg_value(argc, argv, &i, "--timeout", &v) && bd_parse_i64(v, 1, 3600, &n)) {
            cfg.conn_timeout = (unsigned)n;
        } else if (bd_arg_value(argc, argv, &i, "--header-timeout", &v) &&
                   bd_parse_i64(v, 1, 3600, &n)) {
            cfg.header_timeout = (unsigned)n;
        } else if (bd_arg_value(argc, argv, &i, "--max-connections", &v) &&
                   bd_parse_i64(v, 1, 1000000, &n)) {
            cfg.max_conns = (unsigned)n;
        } else if (bd_arg_value(argc, argv, &i, "--max-connections-per-ip", &v) &&
                   bd_parse_i64(v, 0, 1000000, &n)) {
            cfg.max_conns_per_ip = (unsigned)n;
        } else if (bd_arg_value(argc, argv, &i, "--max-upload-memory", &v) &&
                   bd_parse_i64(v, 16, 1 << 20, &n)) {
            cfg.max_upload_memory = (size_t)n << 20;
        } else if (bd_arg_value(argc, argv, &i, "--cors-origin", &v) && v &&
                   cfg.cors_origins_n < BD_CORS_MAX_ORIGINS) {
            cors[cfg.cors_origins_n++] = v;
        } else if (bd_arg_value(argc, argv, &i, "--webhook-allow", &v) && v) {
            if (!bd_webhook_allow(&webhooks, v)) {
                fprintf(stderr, "breachd: %s--webhook-allow takes a range like 10.0.0.0/8 or "
                                "fd00::/8 (at most %d)\n", ORIGIN(at), BD_WEBHOOK_ALLOW_MAX);
                return 2;
            }
        } else if (bd_arg_value(argc, argv, &i, "--trusted-proxy", &v) && v) {
            if (!bd_trusted_proxies_add(&proxies, v)) {
                fprintf(stderr, "breachd: %s--trusted-proxy takes a range like 10.0.0.0/8, "
                                "fd00::/8 or one address (at most %d)\n", ORIGIN(at),
                        BD_TRUSTED_PROXY_MAX);
                return 2;
            }
        } else if (bd_arg_value(argc, argv, &i, "--smtp-insecure", &v) && v &&
                   (strcmp(v, "on") == 0 || strcmp(v, "off") == 0)) {
            smtp_insecure = strcmp(v, "on") == 0;
        } else if (bd_arg_value(argc, argv, &i, "--smtp-url", &v)) {
            smtp_url = v;
        } else if (bd_arg_value(argc, argv, &i, "--smtp-from", &v)) {
            smtp_from = v;
        } else if (bd_arg_value(argc, argv, &i, "--smtp-credentials", &v)) {
            smtp_credentials = v;
        } else if (bd_arg_value(argc, argv, &i, "--console-url", &v) && v) {
            bd_webhook_url cu;
            const char *bad;
            if (bd_webhook_url_parse(bd_slice_from(v), &cu, &bad) != BD_OK) {
                fprintf(stderr, "breachd: %s--console-url: %s\n", ORIGIN(at), bad);
                return 2;
            }
            console_url = v;
        } else if (bd_arg_value(argc, argv, &i, "--alert-retention", &v) &&
                   bd_parse_i64(v, 0, 36500, &n)) {
            alert_retention_days = n;
        } else if (bd_arg_value(argc, argv, &i, "--lookup-retention", &v) &&
                   bd_parse_i64(v, 0, 36500, &n)) {
            lookup_retention_days = n;
        } else if (bd_arg_value(argc, argv, &i, "--empty-search-status", &v) &&
                   bd_parse_i64(v, 200, 404, &n) && (n == 200 || n == 404)) {
            cfg.empty_search_status = (int)n;
        } else if (bd_arg_value(argc, argv, &i, "--auth-fail-limit", &v) &&
                   bd_parse_rate(v, "/min", 1000000, &n)) {
            cfg.auth_fail_limit = (unsigned)n;
        } else if (bd_arg_value(argc, argv, &i, "--log-format", &v) &&
                   bd_log_parse_format(v, &log_format)) {
            /* both take effect once every option is read */
        } else if (bd_arg_value(argc, argv, &i, "--log-level", &v) &&
                   bd_log_parse_level(v, &log_level)) {
        } else {
            if (i != at) /* a known option with a value it does not take */
                fprintf(stderr, "breachd: %sbad value '%s' for %s (see breachd --help)\n",
                        ORIGIN(at), argv[i], argv[at]);
            else
                fprintf(stderr, "breachd: %sbad or unknown option '%s' (see breachd --help)\n",
                        ORIGIN(at), argv[i]);
            return 2;
        }
        if (!v) {
            fprintf(stderr, "breachd: %s needs a value (see breachd --help)\n", argv[i]);
            return 2;
        }
    }
    cfg.db = bd_uri_arg_done(&db);
    cfg.shared_limits = bd_uri_arg_done(&limits);
    if (!cfg.db) {
        fprintf(stderr, "breachd: --db (or --db-file, BREACHD_DB, or db in %s) is required "
                        "(see breachd --help)\n",
                settings.path ? settings.path : BD_CONFIG_DEFAULT_PATH);
        return 2;
    }
    /* email alerts: the SMTP server, checked now; the credentials read from a private file
     * now (user:password), kept in memory for the deliveries */
    static bd_smtp_config smtp;
    static char smtp_cred[1024];
    if (smtp_url || smtp_from || smtp_credentials || smtp_insecure) {
        const char *bad;
        bd_slice from_addr;
        char mailto[300];
        if (!smtp_url || !smtp_from) {
            fprintf(stderr, "breachd: email alerts need both --smtp-url and --smtp-from\n");
            return 2;
        }
        if (bd_smtp_parse(smtp_url, smtp_insecure, &smtp, &bad) != BD_OK) {
            fprintf(stderr, "breachd: --smtp-url: %s\n", bad);
            return 2;
        }
        snprintf(mailto, sizeof mailto, "mailto:%s", smtp_from);
        if (strlen(smtp_from) > 254 ||
            bd_watch_mailto_parse(bd_slice_from(mailto), &from_addr, &bad) != BD_OK) {
            fprintf(stderr, "breachd: --smtp-from is one address (name@example.com)\n");
            return 2;
        }
        smtp.from = smtp_from;
        if (smtp_credentials) {
            char cwhy[512];
            char *text = bd_private_file_read("--smtp-credentials", smtp_credentials,
                                              "SMTP credentials", cwhy, sizeof cwhy);
            char *colon = text ? strchr(text, ':') : NULL;
            if (!text || !colon || colon == text || strlen(text) >= sizeof smtp_cred) {
                fprintf(stderr, "breachd: %s\n",
                        text ? "--smtp-credentials: the file holds user:password" : cwhy);
                if (text) {
                    sodium_memzero(text, strlen(text));
                    free(text);
                }
                return 2;
            }
            memcpy(smtp_cred, text, strlen(text) + 1);
            sodium_memzero(text, strlen(text));
            free(text);
            colon = strchr(smtp_cred, ':');
            *colon = '\0';
            smtp.user = smtp_cred;
            smtp.password = colon + 1;
        }
    }
    bd_log_set_program("breachd"); /* the signature of every text line, as it always was */
    bd_log_set_format(log_format);
    bd_log_set_level(log_level);

    /* Signals are taken by sigwait in this thread; every thread started later inherits the
     * mask, so none of them is interrupted mid-request. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);

    /* tests only (docs/TESTING.md): slows the job runner so a test can stop it mid-job */
    const char *pause = getenv("BREACHD_TEST_JOB_PAUSE_MS");
    if (pause)
        cfg.job_pause_ms = strtoll(pause, NULL, 10);
    /* Under systemd's CacheDirectory= (the package's unit), the ranges' local copy goes there
     * unless --range-snapshot-dir says otherwise: a packaged PostgreSQL server serves /range/
     * from memory without a setting. */
    const char *cache_dir = getenv("CACHE_DIRECTORY");
    if (!range_snapshot_dir && cache_dir && *cache_dir && !strchr(cache_dir, ':'))
        range_snapshot_dir = cache_dir;
    /* requests in flight finish at stop; idle keep-alive connections get a few seconds */
    bd_app_config app_cfg = {
        .server = cfg,
        .alert_retention_s = alert_retention_days * 86400,
        .console_url = console_url,
        .smtp = smtp_url ? &smtp : NULL,
        .lookup_retention_s = lookup_retention_days * 86400,
        .range_snapshot_dir = range_snapshot_dir,
        .pg_dispatch = pg_dispatch,
        .drain_s = 5};
    bd_app *app;
    if (bd_app_start(&app_cfg, &app, why, sizeof why) != BD_OK) {
        bd_log(BD_LOG_ERROR, "app", "%s", why);
        return 2;
    }
    bd_log(BD_LOG_INFO, "app", "serving %s://%s -> port %u, base path %s, HIBP API v3 at %s",
           cfg.tls_cert ? "https" : "http", cfg.listen, bd_app_port(app), cfg.base_path,
           cfg.hibp_base_path ? cfg.hibp_base_path : "/api/v3");
    fflush(stderr);
    bd_notify("READY=1\nSTATUS=serving"); /* systemd's Type=notify: started */
    for (;;) {
        int sig = 0;
        if (sigwait(&set, &sig) != 0)
            continue;
        if (sig == SIGHUP) {
            bd_app_reopen_log(app);
            continue;
        }
        bd_log(BD_LOG_INFO, "app", "signal %d, finishing requests in flight", sig);
        bd_notify("STOPPING=1");
        break;
    }
    bd_app_stop(app);
    bd_log(BD_LOG_INFO, "app", "stopped");
    bd_settings_free(&settings);
    return 0;
}
