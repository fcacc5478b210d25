/* The route table (routes.h), and what is derived from it. */
#include "http/routes.h"

#include <pthread.h>
#include <string.h>

#include "hibp/hibp.h"
#include "hibp/ranges.h"
#include "v7/admin.h"
#include "v7/handlers.h"
#include "http/console.h"
#include "http/operations.h"
#include "http/server_impl.h"
#include "http/upload.h"

/* A watch is four short members (a URL of 2 KiB, a secret of 256 bytes at most). */
#define WATCH_BODY_MAX (64u << 10)

#define READ BD_METHODS_READ
#define GET BD_METHOD_GET
#define POST BD_METHOD_POST
#define DELETE BD_METHOD_DELETE
#define PATCH BD_METHOD_PATCH
#define ADMIN BD_ACCESS_ADMIN

/* In the order of the metrics' lines (breachd_requests_total), which dashboards may rely on:
 * a new row goes at the end. */
const bd_route_row bd_routes[] = {
    /* methods, API, path, argument, access, handler, label, body, flags */
    {READ, BD_API_V7, "/breaches", BD_ARG_SEGMENT, BD_ACCESS_KEY, bd_handle_breach_list,
     "breaches", 0, BD_ROUTE_ETAG},
    {READ, BD_API_V7, "/breaches/{uuid}", BD_ARG_SEGMENT, BD_ACCESS_KEY, bd_handle_breach_get,
     "breach", 0, BD_ROUTE_ETAG},
    {READ, BD_API_V7, "/breach-search", BD_ARG_SEGMENT, BD_ACCESS_KEY, bd_handle_breach_search,
     "breach-search", 0, BD_ROUTE_CSV},
    {READ, BD_API_V7, "/credit-card-search", BD_ARG_SEGMENT, BD_ACCESS_KEY,
     bd_handle_card_search, "credit-card-search", 0, BD_ROUTE_CSV},
    {READ, BD_API_HIBP, "/breachedaccount/{account}", BD_ARG_REST, BD_ACCESS_KEY,
     bd_hibp_breached_account, "v3-breachedaccount", 0, 0},
    {READ, BD_API_HIBP, "/breaches", BD_ARG_SEGMENT, BD_ACCESS_KEY_UNLESS_CATALOG_OPEN,
     bd_hibp_breaches, "v3-breaches", 0, BD_ROUTE_ETAG},
    {READ, BD_API_HIBP, "/breach/{name}", BD_ARG_REST, BD_ACCESS_KEY_UNLESS_CATALOG_OPEN,
     bd_hibp_breach, "v3-breach", 0, BD_ROUTE_ETAG},
    {READ, BD_API_HIBP, "/dataclasses", BD_ARG_SEGMENT, BD_ACCESS_KEY_UNLESS_CATALOG_OPEN,
     bd_hibp_dataclasses, "v3-dataclasses", 0, BD_ROUTE_ETAG},
    {READ, BD_API_HIBP, "/breacheddomain/{domain}", BD_ARG_REST, BD_ACCESS_KEY,
     bd_hibp_breached_domain, "v3-breacheddomain", 0, 0},
    {READ, BD_API_HIBP, "/subscription/status", BD_ARG_SEGMENT, BD_ACCESS_KEY,
     bd_hibp_subscription, "v3-subscription-status", 0, 0},
    {READ, BD_API_PASSWORDS, "/range/{prefix}", BD_ARG_ANY, BD_ACCESS_KEY_UNLESS_RANGE_OPEN,
     bd_handle_range, "range", 0, 0},
    {READ, BD_API_OPERATIONS, "/healthz", BD_ARG_SEGMENT, BD_ACCESS_NONE, bd_handle_health,
     "healthz", 0, 0},
    {READ, BD_API_OPERATIONS, "/metrics", BD_ARG_SEGMENT, BD_ACCESS_NONE, bd_handle_metrics,
     "metrics", 0, 0},
    {READ, BD_API_OPERATIONS, "/openapi.json", BD_ARG_SEGMENT, BD_ACCESS_NONE, bd_handle_openapi,
     "openapi", 0, 0},
    {READ, BD_API_V7, "/usage", BD_ARG_SEGMENT, BD_ACCESS_KEY, bd_handle_usage, "usage", 0,
     BD_ROUTE_NO_QUOTA},
    {READ, BD_API_V7, "/status", BD_ARG_SEGMENT, BD_ACCESS_KEY, bd_handle_status, "status", 0,
     BD_ROUTE_ETAG},
    {READ, BD_API_V7, "/changes", BD_ARG_SEGMENT, BD_ACCESS_KEY, bd_handle_changes, "changes", 0,
     0},
    {READ | POST, BD_API_V7, "/watches", BD_ARG_SEGMENT, BD_ACCESS_KEY, bd_handle_watches,
     "watches", WATCH_BODY_MAX, 0},
    {DELETE, BD_API_V7, "/watches/{id}", BD_ARG_SEGMENT, BD_ACCESS_KEY, bd_handle_watch, "watch",
     0, 0},
    {READ, BD_API_V7, "/alerts", BD_ARG_SEGMENT, BD_ACCESS_KEY, bd_handle_alerts, "alerts", 0, 0},
    {POST, BD_API_V7, "/jobs", BD_ARG_SEGMENT, BD_ACCESS_KEY, bd_handle_job_submit, "jobs",
     BD_UPLOAD_MAX, 0},
    {READ, BD_API_V7, "/jobs/{id}", BD_ARG_SEGMENT, BD_ACCESS_KEY, bd_handle_job_get, "job", 0,
     0},
    {GET, BD_API_V7, "/jobs/{id}/results", BD_ARG_SEGMENT, BD_ACCESS_KEY, bd_handle_job_results,
     "job-results", 0, 0},
    {READ, BD_API_HIBP, "/subscribeddomains", BD_ARG_SEGMENT, BD_ACCESS_KEY,
     bd_hibp_subscribed_domains, "v3-subscribeddomains", 0, 0},
    /* the admin API (v7/admin_*.c): admin keys only */
    {READ | POST, BD_API_V7, "/admin/tenants", BD_ARG_SEGMENT, ADMIN, bd_handle_admin_tenants,
     "admin-tenants", BD_ADMIN_BODY_MAX, 0},
    {READ | PATCH | DELETE, BD_API_V7, "/admin/tenants/{id}", BD_ARG_SEGMENT, ADMIN,
     bd_handle_admin_tenant, "admin-tenant", BD_ADMIN_BODY_MAX, 0},
    {READ, BD_API_V7, "/admin/tenants/{id}/usage", BD_ARG_SEGMENT, ADMIN,
     bd_handle_admin_tenant_usage, "admin-tenant-usage", 0, 0},
    {READ | POST, BD_API_V7, "/admin/keys", BD_ARG_SEGMENT, ADMIN, bd_handle_admin_keys,
     "admin-keys", BD_ADMIN_BODY_MAX, 0},
    {READ | PATCH | DELETE, BD_API_V7, "/admin/keys/{id}", BD_ARG_SEGMENT, ADMIN,
     bd_handle_admin_key, "admin-key", BD_ADMIN_BODY_MAX, 0},
    {READ, BD_API_V7, "/admin/audit", BD_ARG_SEGMENT, ADMIN, bd_handle_admin_audit,
     "admin-audit", 0, 0},
    {POST, BD_API_V7, "/admin/lookups", BD_ARG_SEGMENT, ADMIN, bd_handle_admin_lookups,
     "admin-lookups", BD_ADMIN_BODY_MAX, 0},
    /* the web console (http/console.c, issue 34): its page, its session, then its files,
     * which take every other name under /console/ */
    {READ | POST | DELETE, BD_API_OPERATIONS, "/console/session", BD_ARG_SEGMENT, BD_ACCESS_NONE,
     bd_handle_console_session, "console-session", 0, 0},
    {READ, BD_API_OPERATIONS, "/console/", BD_ARG_SEGMENT, BD_ACCESS_NONE, bd_handle_console,
     "console-page", 0, BD_ROUTE_ETAG},
    {READ, BD_API_OPERATIONS, "/console/{file}", BD_ARG_SEGMENT, BD_ACCESS_NONE,
     bd_handle_console, "console", 0, BD_ROUTE_ETAG},
    {PATCH, BD_API_V7, "/alerts/{id}", BD_ARG_SEGMENT, BD_ACCESS_KEY, bd_handle_alert_triage,
     "alert", 4096, 0},
    /* the rest of HIBP v3 (issue 35): the latest breach is catalog, served like it */
    {READ, BD_API_HIBP, "/latestbreach", BD_ARG_SEGMENT, BD_ACCESS_KEY_UNLESS_CATALOG_OPEN,
     bd_hibp_latest_breach, "v3-latestbreach", 0, BD_ROUTE_ETAG},
    /* the console's change-feed cursor (issue 34), kept per key in the store */
    {READ | BD_METHOD_PUT, BD_API_V7, "/console/seen", BD_ARG_SEGMENT, BD_ACCESS_KEY,
     bd_handle_console_seen, "console-seen", 4096, 0},
    /* breach logos the operator placed (breachd --console-logos DIR), for the console */
    {READ, BD_API_OPERATIONS, "/console/logos/{name}", BD_ARG_SEGMENT, BD_ACCESS_NONE,
     bd_handle_console_logo, "console-logo", 0, BD_ROUTE_ETAG},
    /* the rest of HIBP v3 (issue 35), continued */
    {READ, BD_API_HIBP, "/pasteaccount/{account}", BD_ARG_REST, BD_ACCESS_KEY,
     bd_hibp_paste_account, "v3-pasteaccount", 0, 0},
    /* matched before /breachedaccount/{account}, which takes the rest of the path (router.c) */
    {READ, BD_API_HIBP, "/breachedaccount/range/{prefix}", BD_ARG_SEGMENT, BD_ACCESS_KEY,
     bd_hibp_breached_account_range, "v3-breachedaccount-range", 0, 0},
    {READ, BD_API_HIBP, "/stealerlogsbyemail/{email}", BD_ARG_REST, BD_ACCESS_KEY,
     bd_hibp_stealer_by_email, "v3-stealerlogsbyemail", 0, 0},
    {READ, BD_API_HIBP, "/stealerlogsbywebsitedomain/{domain}", BD_ARG_REST, BD_ACCESS_KEY,
     bd_hibp_stealer_by_website, "v3-stealerlogsbywebsitedomain", 0, 0},
    {READ, BD_API_HIBP, "/stealerlogsbyemaildomain/{domain}", BD_ARG_REST, BD_ACCESS_KEY,
     bd_hibp_stealer_by_email_domain, "v3-stealerlogsbyemaildomain", 0, 0},
};

const size_t bd_routes_n = sizeof bd_routes / sizeof bd_routes[0];

const char *bd_route_label(const bd_route_row *r)
{
    return r ? r->label : "other";
}

const char *bd_route_label_at(size_t i)
{
    return bd_route_label(i < bd_routes_n ? &bd_routes[i] : NULL);
}

size_t bd_route_index(const bd_route_row *r)
{
    return r ? (size_t)(r - bd_routes) : bd_routes_n;
}

static const char *const METHOD_NAMES[] = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"};
#define NMETHODS (sizeof METHOD_NAMES / sizeof METHOD_NAMES[0])

unsigned bd_method_bit(const char *m)
{
    switch (m[0]) { /* the first letter picks the one name to compare */
    case 'G':
        return strcmp(m, "GET") == 0 ? BD_METHOD_GET : 0;
    case 'H':
        return strcmp(m, "HEAD") == 0 ? BD_METHOD_HEAD : 0;
    case 'P':
        return strcmp(m, "POST") == 0    ? BD_METHOD_POST
               : strcmp(m, "PUT") == 0   ? BD_METHOD_PUT
               : strcmp(m, "PATCH") == 0 ? BD_METHOD_PATCH
                                         : 0;
    case 'D':
        return strcmp(m, "DELETE") == 0 ? BD_METHOD_DELETE : 0;
    default:
        return 0;
    }
}

/* Every set of methods as text, and the preflight's list, written once. */
#define METHODS_TEXT_MAX 48 /* "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS" and its NUL */
static char methods_text[1u << NMETHODS][METHODS_TEXT_MAX];
static char preflight_text[METHODS_TEXT_MAX];
static pthread_once_t texts_once = PTHREAD_ONCE_INIT;

static void write_text(char *out, unsigned methods, bool options)
{
    size_t n = 0;
    for (size_t i = 0; i <= NMETHODS; i++) {
        const char *name = i < NMETHODS ? METHOD_NAMES[i] : "OPTIONS";
        if (i < NMETHODS ? !(methods & (1u << i)) : !options)
            continue;
        size_t l = strlen(name);
        if (n) {
            memcpy(out + n, ", ", 2);
            n += 2;
        }
        memcpy(out + n, name, l);
        n += l;
    }
    out[n] = '\0';
}

static void write_texts(void)
{
    unsigned all = 0;
    for (unsigned m = 0; m < 1u << NMETHODS; m++)
        write_text(methods_text[m], m, false);
    for (size_t i = 0; i < bd_routes_n; i++)
        all |= bd_routes[i].methods;
    write_text(preflight_text, all, true);
}

const char *bd_methods_text(unsigned methods)
{
    pthread_once(&texts_once, write_texts);
    return methods_text[methods & ((1u << NMETHODS) - 1)];
}

const char *bd_routes_preflight_methods(void)
{
    pthread_once(&texts_once, write_texts);
    return preflight_text;
}
