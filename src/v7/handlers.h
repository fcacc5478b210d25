/* The v7 API's resource handlers, one per route of the table in http/routes.c, which calls
 * them once the key is checked: arg is the path's {placeholder}, {NULL, 0} when it has none.
 * Each writes its whole reply into rq (http/request.h). */
#ifndef BD_V7_HANDLERS_H
#define BD_V7_HANDLERS_H

#include "core/slice.h"
#include "http/request.h"

struct bd_server;

/* The breach catalog and one breach (breaches.c). */
void bd_handle_breach_list(struct bd_server *srv, bd_req *rq, bd_slice arg);
void bd_handle_breach_get(struct bd_server *srv, bd_req *rq, bd_slice uuid);
/* GET {base}/breach-search, JSON or CSV (search.c). */
void bd_handle_breach_search(struct bd_server *srv, bd_req *rq, bd_slice arg);
/* GET {base}/credit-card-search (cards.c). */
void bd_handle_card_search(struct bd_server *srv, bd_req *rq, bd_slice arg);
/* GET {base}/status and GET {base}/changes (changes.c). */
void bd_handle_status(struct bd_server *srv, bd_req *rq, bd_slice arg);
void bd_handle_changes(struct bd_server *srv, bd_req *rq, bd_slice arg);
/* GET {base}/usage: the calling key's usage (usage.c). */
void bd_handle_usage(struct bd_server *srv, bd_req *rq, bd_slice arg);
/* POST and GET {base}/watches, DELETE {base}/watches/{id}, GET {base}/alerts (watches.c). */
void bd_handle_watches(struct bd_server *srv, bd_req *rq, bd_slice arg);
void bd_handle_watch(struct bd_server *srv, bd_req *rq, bd_slice id);
void bd_handle_alerts(struct bd_server *srv, bd_req *rq, bd_slice arg);
/* PATCH /alerts/{event_id}: an alert's triage (alert_triage.c) */
void bd_handle_alert_triage(struct bd_server *srv, bd_req *rq, bd_slice event_id);
/* GET and PUT {base}/console/seen: the key's console change-feed cursor (console_seen.c). */
void bd_handle_console_seen(struct bd_server *srv, bd_req *rq, bd_slice arg);
/* Bulk jobs (jobs.c): POST {base}/jobs, GET {base}/jobs/{id}, GET {base}/jobs/{id}/results. */
void bd_handle_job_submit(struct bd_server *srv, bd_req *rq, bd_slice arg);
void bd_handle_job_get(struct bd_server *srv, bd_req *rq, bd_slice id);
void bd_handle_job_results(struct bd_server *srv, bd_req *rq, bd_slice id);

/* The admin API (admin keys only, routes.h BD_ACCESS_ADMIN): tenants and their usage
 * (admin_tenants.c), keys (admin_keys.c), the audit trail (admin_audit.c) and the lookup
 * log (admin_lookups.c). */
void bd_handle_admin_tenants(struct bd_server *srv, bd_req *rq, bd_slice arg);
void bd_handle_admin_tenant(struct bd_server *srv, bd_req *rq, bd_slice id);
void bd_handle_admin_tenant_usage(struct bd_server *srv, bd_req *rq, bd_slice id);
void bd_handle_admin_keys(struct bd_server *srv, bd_req *rq, bd_slice arg);
void bd_handle_admin_key(struct bd_server *srv, bd_req *rq, bd_slice id);
void bd_handle_admin_audit(struct bd_server *srv, bd_req *rq, bd_slice arg);
void bd_handle_admin_lookups(struct bd_server *srv, bd_req *rq, bd_slice arg);

#endif
