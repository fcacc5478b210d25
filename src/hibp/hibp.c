/* The Have I Been Pwned API v3: the breach model, and the catalog endpoints (breaches,
 * breach by Name, data classes, subscription status). Their routes are in routes.c. */
#include "hibp/hibp.h"

#include <microhttpd.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "hibp/hibp_classes.h"
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

void bd_hibp_breaches(bd_server *srv, bd_req *rq, bd_slice arg)
{
    (void)srv;
    (void)arg;
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

void bd_hibp_breach(bd_server *srv, bd_req *rq, bd_slice name)
{
    (void)srv;
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

void bd_hibp_dataclasses(bd_server *srv, bd_req *rq, bd_slice arg)
{
    (void)srv;
    (void)arg;
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

void bd_hibp_subscription(bd_server *srv, bd_req *rq, bd_slice arg)
{
    (void)arg;
    int64_t domain_max = srv->cfg.hibp_domain_max;
    if (!bd_params_check(rq, NULL, NULL))
        return;
    const bd_key_info *k = &rq->key;
    /* a tenant key searches its tenant's domains whatever its plan (hibp_account.c) */
    bool enterprise = strcmp(k->plan, "enterprise") == 0 || k->tenant_id != 0;
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
    /* HIBP's limit on a subscription's domains: a tenant's domains are the administrator's
     * to set (v7/admin), none is counted against the key */
    bd_json_key(w, "MaxBreachedDomains");
    bd_json_null(w);
    /* the feature flags say what breachd answers this key: the stealer log calls and the
     * k-anonymity account range answer the keys a domain search does (hibp_stealer.c,
     * hibp_range.c); bulk domain adding and customer domains do not exist here; a tenant
     * key's scope takes its domains' subdomains without their own verification (docs/API.md,
     * tenants) */
    flag(w, "IncludesStealerLogs", enterprise);
    flag(w, "IncludesBulkDomainAdd", false);
    flag(w, "IncludesAutoSubdomainVerification", k->tenant_id != 0);
    flag(w, "IncludesCustomerDomains", false);
    flag(w, "IncludesKAnon", enterprise);
    bd_json_object_end(w);
    bd_reply_finish(rq);
}

/* ---- GET /subscribeddomains --------------------------------------------------------- */

typedef struct {
    bd_json *w;
    int64_t renewal; /* the key's expiry; 0: never */
    int64_t domains;
} subscribed;

static int write_subscribed(void *ctx, int64_t tenant_id, bd_slice domain)
{
    (void)tenant_id;
    subscribed *sd = ctx;
    bd_json *w = sd->w;
    bd_json_object_begin(w);
    bd_json_key(w, "DomainName");
    bd_json_string(w, domain);
    /* HIBP's counts of its last search of the domain: breachd keeps none (null, as HIBP
     * answers for a domain never searched); a domain search is always answered live */
    bd_json_key(w, "PwnCount");
    bd_json_null(w);
    bd_json_key(w, "PwnCountExcludingSpamLists");
    bd_json_null(w);
    bd_json_key(w, "PwnCountExcludingSpamListsAtLastSubscriptionRenewal");
    bd_json_null(w);
    if (sd->renewal) {
        utc_time(w, "NextSubscriptionRenewal", sd->renewal);
    } else {
        bd_json_key(w, "NextSubscriptionRenewal");
        bd_json_null(w);
    }
    bd_json_object_end(w);
    sd->domains++;
    return 0;
}

void bd_hibp_subscribed_domains(bd_server *srv, bd_req *rq, bd_slice arg)
{
    (void)arg;
    if (!bd_params_check(rq, NULL, NULL))
        return;
    subscribed sd = {.w = &rq->json, .renewal = rq->key.expires_at};
    bd_reply_begin(rq, 200);
    bd_json_array_begin(sd.w);
    if (rq->key.tenant_id != 0) /* a key without a tenant has no domains of its own: [] */
        bd_keyring_tenant_domains(srv->keys, rq->key.tenant_id, write_subscribed, &sd);
    bd_json_array_end(sd.w);
    rq->records = sd.domains;
    bd_reply_finish(rq);
}
