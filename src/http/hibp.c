/* The Have I Been Pwned API v3: routing under its base path, the breach model, and the
 * catalog endpoints (breaches, breach by Name, data classes, subscription status). */
#include "http/hibp.h"

#include <microhttpd.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "http/hibp_classes.h"
#include "http/server_impl.h"
#include "store/breach_name.h"

/* ---- the breach model ---------------------------------------------------------------- */

/* HIBP writes an absent text as "", never null. */
static void text(bd_json *w, const char *key, bd_slice v)
{
    bd_json_key(w, key);
    bd_json_string(w, v.ptr ? v : (bd_slice){"", 0});
}

/* Unix seconds as ISO 8601 UTC, like 2019-05-01T00:00:00Z. */
static void utc_time(bd_json *w, const char *key, int64_t t)
{
    char out[32] = "1970-01-01T00:00:00Z";
    time_t tt = (time_t)t;
    struct tm tm;
    if (gmtime_r(&tt, &tm))
        strftime(out, sizeof out, "%Y-%m-%dT%H:%M:%SZ", &tm);
    bd_json_key(w, key);
    bd_json_cstring(w, out);
}

static void flag(bd_json *w, const char *key, bool v)
{
    bd_json_key(w, key);
    bd_json_bool(w, v);
}

void bd_hibp_write_breach(bd_json *w, const bd_breach_row *b)
{
    char date[16];
    snprintf(date, sizeof date, "%04d-%02d-%02d", (int)(b->date_leaked / 10000),
             (int)(b->date_leaked / 100 % 100), (int)(b->date_leaked % 100));
    bd_hibp_classes classes;
    classes.n = 0;
    if (b->leaked_data_types.ptr)
        bd_hibp_classes_add(&classes, b->leaked_data_types);
    bd_json_object_begin(w);
    text(w, "Name", b->name);
    text(w, "Title", b->source_name);
    text(w, "Domain", b->site_domain);
    bd_json_key(w, "BreachDate");
    bd_json_cstring(w, date);
    utc_time(w, "AddedDate", b->added_at);
    utc_time(w, "ModifiedDate", b->modified_at);
    bd_json_key(w, "PwnCount");
    bd_json_int(w, b->pwned_count);
    text(w, "Description", b->description);
    text(w, "LogoPath", b->site_logo);
    bd_json_key(w, "DataClasses");
    bd_json_array_begin(w);
    for (size_t i = 0; i < classes.n; i++)
        bd_json_cstring(w, classes.name[i]);
    bd_json_array_end(w);
    flag(w, "IsVerified", !(b->flags & BD_BREACH_UNVERIFIED));
    flag(w, "IsFabricated", b->flags & BD_BREACH_FABRICATED);
    flag(w, "IsSensitive", b->flags & BD_BREACH_SENSITIVE);
    flag(w, "IsRetired", b->flags & BD_BREACH_RETIRED);
    flag(w, "IsSpamList", b->flags & BD_BREACH_SPAM_LIST);
    flag(w, "IsMalware", b->flags & BD_BREACH_MALWARE);
    flag(w, "IsStealerLog", b->flags & BD_BREACH_STEALER_LOG);
    flag(w, "IsSubscriptionFree", b->flags & BD_BREACH_SUBSCRIPTION_FREE);
    bd_json_object_end(w);
}

/* ---- shared helpers ------------------------------------------------------------------- */

bool bd_hibp_bool_param(bd_req *rq, const char *name, bool dflt, bool *out)
{
    bd_slice v;
    *out = dflt;
    if (!bd_param_get(rq, name, &v))
        return true;
    if (v.len == 4 && strncasecmp(v.ptr, "true", 4) == 0)
        *out = true;
    else if (v.len == 5 && strncasecmp(v.ptr, "false", 5) == 0)
        *out = false;
    else {
        bd_reply_error(rq, 400, "bad_request", "'%s' must be true or false", name);
        return false;
    }
    return true;
}

bool bd_hibp_domain_is(const bd_breach_row *b, bd_slice domain)
{
    return b->site_domain.ptr && b->site_domain.len == domain.len &&
           strncasecmp(b->site_domain.ptr, domain.ptr, domain.len) == 0;
}

void bd_hibp_not_found(bd_req *rq)
{
    bd_reply_begin(rq, 404); /* nothing written: an empty body */
}

/* ---- GET /breaches, GET /breach/{name} ----------------------------------------------- */

typedef struct {
    bd_req *rq;
    bd_slice domain; /* ptr NULL: any */
    int spam;        /* -1: any; else IsSpamList must equal it */
} catalog;

static int write_catalog_item(void *ctx, const bd_breach_row *b)
{
    catalog *c = ctx;
    if (c->domain.ptr && !bd_hibp_domain_is(b, c->domain))
        return 0;
    if (c->spam >= 0 && (bool)(b->flags & BD_BREACH_SPAM_LIST) != (bool)c->spam)
        return 0;
    bd_hibp_write_breach(&c->rq->json, b);
    c->rq->records++;
    return 0;
}

static void handle_breaches(bd_req *rq)
{
    static const char *const allowed[] = {"domain", "isSpamList", NULL};
    catalog c = {.rq = rq, .spam = -1};
    bool spam;
    if (!bd_params_check(rq, allowed, NULL) || !bd_hibp_bool_param(rq, "isSpamList", false, &spam))
        return;
    if (bd_param_get(rq, "isSpamList", &(bd_slice){0}))
        c.spam = spam;
    bd_param_get(rq, "domain", &c.domain);
    bd_reply_breach_list(rq, 0, write_catalog_item, &c);
}

static int write_one(void *ctx, const bd_breach_row *b)
{
    bd_hibp_write_breach(ctx, b);
    return 0;
}

static void handle_breach(bd_req *rq, bd_slice name)
{
    if (!bd_params_check(rq, NULL, NULL))
        return;
    if (!bd_breach_name_valid(name)) { /* no breach has such a Name: no need to ask */
        bd_hibp_not_found(rq);
        return;
    }
    bd_reply_begin(rq, 200);
    bd_result r = bd_store_read_begin(rq->store);
    if (r == BD_OK)
        r = bd_store_breach_by_name(rq->store, name, write_one, &rq->json);
    bd_store_read_end(rq->store);
    if (r == BD_ERR_NOT_FOUND)
        bd_hibp_not_found(rq);
    else if (r != BD_OK)
        bd_reply_store_error(rq, r);
    else
        bd_reply_finish(rq);
}

/* ---- GET /dataclasses ------------------------------------------------------------------ */

static int add_classes(void *ctx, const bd_breach_row *b)
{
    if (b->leaked_data_types.ptr)
        bd_hibp_classes_add(ctx, b->leaked_data_types);
    return 0;
}

static void handle_dataclasses(bd_req *rq)
{
    if (!bd_params_check(rq, NULL, NULL))
        return;
    bd_hibp_classes classes;
    classes.n = 0;
    bd_result r = bd_store_read_begin(rq->store);
    if (r == BD_OK)
        r = bd_store_breach_list(rq->store, 0, add_classes, &classes);
    bd_store_read_end(rq->store);
    if (r != BD_OK) {
        bd_reply_store_error(rq, r);
        return;
    }
    bd_reply_begin(rq, 200);
    bd_json_array_begin(&rq->json);
    for (size_t i = 0; i < classes.n; i++)
        bd_json_cstring(&rq->json, classes.name[i]);
    bd_json_array_end(&rq->json);
    bd_reply_finish(rq);
}

/* ---- GET /subscription/status ------------------------------------------------------- */

static void handle_subscription(bd_req *rq, int64_t domain_max)
{
    if (!bd_params_check(rq, NULL, NULL))
        return;
    const bd_key_info *k = &rq->key;
    bool enterprise = strcmp(k->plan, "enterprise") == 0;
    char description[160];
    snprintf(description, sizeof description,
             "breachd %s plan: %lld requests per hour%s", k->plan[0] ? k->plan : "custom",
             (long long)k->rate_per_hour, enterprise ? ", domain search" : "");
    bd_json *w = &rq->json;
    bd_reply_begin(rq, 200);
    bd_json_object_begin(w);
    bd_json_key(w, "SubscriptionName");
    bd_json_cstring(w, k->plan[0] ? k->plan : "custom");
    bd_json_key(w, "Description");
    bd_json_cstring(w, description);
    if (k->expires_at) {
        utc_time(w, "SubscribedUntil", k->expires_at);
    } else {
        bd_json_key(w, "SubscribedUntil");
        bd_json_null(w);
    }
    bd_json_key(w, "Rpm");
    bd_json_int(w, k->rate_per_hour / 60);
    bd_json_key(w, "DomainSearchMaxBreachedAccounts");
    bd_json_int(w, enterprise ? domain_max : 0);
    bd_json_object_end(w);
    bd_reply_finish(rq);
}

/* ---- routing ---------------------------------------------------------------------------- */

/* When path is prefix followed by one non-empty segment, that segment into *arg. */
static bool segment_after(bd_slice path, const char *prefix, bd_slice *arg)
{
    size_t pl = strlen(prefix);
    if (path.len <= pl || memcmp(path.ptr, prefix, pl) != 0)
        return false;
    *arg = (bd_slice){path.ptr + pl, path.len - pl};
    return true;
}

/* The route of a path below the v3 base; BD_ROUTE_OTHER when none. An account may hold a
 * '/' (decoded from %2F): everything after the resource name is its argument. */
static bd_route find_route(bd_slice path, bd_slice *arg)
{
    if (segment_after(path, "/breachedaccount/", arg))
        return BD_ROUTE_HIBP_ACCOUNT;
    if (segment_after(path, "/breach/", arg))
        return BD_ROUTE_HIBP_BREACH;
    if (segment_after(path, "/breacheddomain/", arg))
        return BD_ROUTE_HIBP_DOMAIN;
    if (bd_slice_eq(path, "/breaches"))
        return BD_ROUTE_HIBP_BREACHES;
    if (bd_slice_eq(path, "/dataclasses"))
        return BD_ROUTE_HIBP_DATACLASSES;
    if (bd_slice_eq(path, "/subscription/status"))
        return BD_ROUTE_HIBP_SUBSCRIPTION;
    return BD_ROUTE_OTHER;
}

/* The catalog paths, which HIBP serves to anyone: with --hibp-catalog-auth none a request
 * without a key is answered too (one with a key is checked and charged as always). */
static bool open_without_key(const bd_server *srv, const bd_req *rq)
{
    bool listing = rq->route == BD_ROUTE_HIBP_BREACHES || rq->route == BD_ROUTE_HIBP_BREACH ||
                   rq->route == BD_ROUTE_HIBP_DATACLASSES;
    return listing && srv->cfg.hibp_catalog_open && !bd_key_presented(rq, true);
}

void bd_hibp_dispatch(bd_server *srv, bd_req *rq, const char *url, const char *method)
{
    size_t ulen = strlen(url);
    rq->path = (bd_slice){url + srv->hibp_base_len, ulen - srv->hibp_base_len};
    bd_slice arg = {NULL, 0};
    rq->route = find_route(rq->path, &arg);
    if (!open_without_key(srv, rq) && !bd_authenticate(srv, rq, true))
        return;
    if (rq->route == BD_ROUTE_OTHER) {
        bd_reply_error(rq, 404, "not_found", "no such path in the HIBP API v3");
        return;
    }
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0) {
        rq->allow = "GET, HEAD";
        bd_reply_error(rq, 405, "method_not_allowed", "this API is read-only: use GET or HEAD");
        return;
    }
    if (rq->screening) /* never reached: only a write announces a body (router.c) */
        return;
    switch (rq->route) {
    case BD_ROUTE_HIBP_ACCOUNT:
        bd_hibp_breached_account(rq, arg);
        break;
    case BD_ROUTE_HIBP_BREACHES:
        handle_breaches(rq);
        break;
    case BD_ROUTE_HIBP_BREACH:
        handle_breach(rq, arg);
        break;
    case BD_ROUTE_HIBP_DATACLASSES:
        handle_dataclasses(rq);
        break;
    case BD_ROUTE_HIBP_DOMAIN:
        bd_hibp_breached_domain(rq, arg, srv->cfg.hibp_domain_max);
        break;
    case BD_ROUTE_HIBP_SUBSCRIPTION:
        handle_subscription(rq, srv->cfg.hibp_domain_max);
        break;
    default:
        break;
    }
}
