/* The services the composition root starts (app/app.c keeps their order), and what each
 * one's start receives. One file per service, or per family of small ones. */
#ifndef BD_APP_SERVICES_H
#define BD_APP_SERVICES_H

#include "app/app.h"
#include "app/service.h"
#include "store/pool.h"
#include "http/server.h"

/* The connection policy: the pools of per-thread store connections, each with its flags,
 * made by the stores service and closed when it stops, after every service that uses them
 * (app/svc_stores.c says who gets which). */
typedef struct {
    bd_store_pool *reads;  /* --db, BD_STORE_READ */
    bd_store_pool *writes; /* --db, BD_STORE_WRITE | BD_STORE_SMALL_WRITES */
    bd_store_pool *limits; /* --shared-limits, BD_STORE_WRITE; NULL without it */
    bd_store_pool *usage;  /* --shared-limits, else --db: BD_STORE_WRITE | SMALL_WRITES */
} bd_app_pools;

typedef struct {
    const bd_app_config *cfg;
    bd_server *srv;     /* set by the stores service, which starts first */
    bd_app_pools pools; /* the same */
} bd_app_env;

extern const bd_service bd_svc_stores;      /* svc_stores.c: the server's stores and parts */
extern const bd_service bd_svc_key_refresh; /* svc_maintenance.c */
extern const bd_service bd_svc_read_views;  /* svc_maintenance.c */
extern const bd_service bd_svc_limits;      /* svc_maintenance.c */
extern const bd_service bd_svc_usage_flush; /* svc_maintenance.c */
extern const bd_service bd_svc_jobs;        /* svc_jobs.c: bulk jobs */
extern const bd_service bd_svc_webhooks;    /* svc_webhooks.c: alert delivery */
extern const bd_service bd_svc_lookups;     /* svc_lookups.c: the lookup log */
extern const bd_service bd_svc_range_snapshot; /* svc_range_snapshot.c: /range/'s copy */
extern const bd_service bd_svc_pg_batch;    /* svc_pg_batch.c: the PostgreSQL lookup dispatcher */
extern const bd_service bd_svc_http;        /* svc_http.c: the listener */

#endif
