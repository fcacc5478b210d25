/* The services the composition root starts (app/app.c keeps their order), and what each
 * one's start receives. One file per service, or per family of small ones. */
#ifndef BD_APP_SERVICES_H
#define BD_APP_SERVICES_H

#include "app/app.h"
#include "app/service.h"
#include "http/server.h"

typedef struct {
    const bd_app_config *cfg;
    bd_server *srv; /* set by the stores service, which starts first */
} bd_app_env;

extern const bd_service bd_svc_stores;      /* svc_stores.c: the server's stores and parts */
extern const bd_service bd_svc_key_refresh; /* svc_maintenance.c */
extern const bd_service bd_svc_read_views;  /* svc_maintenance.c */
extern const bd_service bd_svc_limits;      /* svc_maintenance.c */
extern const bd_service bd_svc_usage_flush; /* svc_maintenance.c */
extern const bd_service bd_svc_jobs;        /* svc_jobs.c: bulk jobs */
extern const bd_service bd_svc_webhooks;    /* svc_webhooks.c: alert delivery */
extern const bd_service bd_svc_http;        /* svc_http.c: the listener */

#endif
