/* The composition root: assembles a running breachd from its configuration and takes it
 * apart again, in one place and one documented order (app/app.c). */
#ifndef BD_APP_APP_H
#define BD_APP_APP_H

#include <stddef.h>
#include <stdint.h>

#include "core/result.h"
#include "http/server.h"
#include "webhook/send.h"

typedef struct {
    bd_server_config server;
    int64_t alert_retention_s; /* alerts delivered or given up are kept this long (0: for ever) */
    const char *console_url;   /* the console's address linked from chat alerts; NULL: none */
    const bd_smtp_config *smtp; /* where email alerts go (breachd --smtp-url); NULL: none */
    int64_t lookup_retention_s; /* lookup log rows are kept this long; 0: no lookup log */
    unsigned drain_s;          /* at stop, seconds for open connections to finish */
    /* PostgreSQL: where the local snapshot of the password ranges is kept and served from
     * (app/svc_range_snapshot.c); NULL: /range/ reads the store */
    const char *range_snapshot_dir;
    /* PostgreSQL: email searches wait for the lookup dispatcher (app/svc_pg_batch.c), which
     * batches them, instead of holding a worker through their statement: unless alone (ON),
     * always (ALWAYS), or never (OFF) */
    enum { BD_PG_DISPATCH_ON, BD_PG_DISPATCH_OFF, BD_PG_DISPATCH_ALWAYS } pg_dispatch;
} bd_app_config;

typedef struct bd_app bd_app;

/* Opens the stores, starts every background service, then listens. On failure what was
 * started is stopped again and why holds a sentence for the operator. The configuration's
 * strings are borrowed and must outlive the app. Signals are the caller's: every thread
 * started here inherits the calling thread's signal mask. */
bd_result bd_app_start(const bd_app_config *cfg, bd_app **out, char *why, size_t whylen);
/* The HTTP port actually bound. */
uint16_t bd_app_port(const bd_app *app);
/* Reopens the access log (SIGHUP, after log rotation). */
void bd_app_reopen_log(bd_app *app);
/* Stops accepting, lets requests in flight finish (up to drain_s), stops the services in
 * reverse order, closes the stores, and frees. NULL is ignored. */
void bd_app_stop(bd_app *app);

#endif
