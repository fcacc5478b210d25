/* The Have I Been Pwned API v3's searches: the breaches of one email address and the
 * breached aliases of one email domain. */
#include <string.h>

#include "hibp/hibp.h"
#include "http/scope.h"
#include "http/server_impl.h"
#include "ingest/normalize.h"

/* ---- GET /breachedaccount/{account} ------------------------------------------------- */

typedef struct {
    bd_req *rq;
    bool truncate;
    bool include_unverified;
    bd_slice domain; /* ptr NULL: any */
} account_search;

static int write_account_breach(void *ctx, const bd_breach_row *b)
{
    account_search *a = ctx;
    if (!a->include_unverified && (b->flags & BD_BREACH_UNVERIFIED))
        return 0;
    if (a->domain.ptr && !bd_hibp_domain_is(b, a->domain))
        return 0;
    bd_json *w = &a->rq->json;
    if (a->truncate) {
        bd_json_object_begin(w);
        bd_json_key(w, "Name");
        bd_json_string(w, b->name);
        bd_json_object_end(w);
    } else {
        bd_hibp_write_breach(w, b);
    }
    a->rq->records++;
    return 0;
}

/* The account's query parameters into *a; false when the reply has been written. */
static bool account_params(bd_req *rq, account_search *a)
{
    static const char *const allowed[] = {"truncateResponse", "domain", "includeUnverified", NULL};
    if (!bd_params_check(rq, allowed, NULL) ||
        !bd_hibp_bool_param(rq, "truncateResponse", true, &a->truncate) ||
        !bd_hibp_bool_param(rq, "includeUnverified", true, &a->include_unverified))
        return false;
    if (bd_param_get(rq, "domain", &a->domain) && a->domain.len == 0) {
        bd_reply_error(rq, 400, "bad_request", "'domain' must name a domain, like adobe.com");
        return false;
    }
    return true;
}

bool bd_hibp_email_account(struct bd_server *srv, bd_req *rq, bd_slice account,
                           char email[BD_NORM_MAX + 1], bd_slice *key)
{
    size_t n;
    const char *why = NULL;
    if (bd_normalize(BD_ID_EMAIL, account, email, &n, &why) != BD_OK) {
        bd_reply_error(rq, 400, "bad_request", "the account must be an email address: %s",
                       why ? why : "not a valid value");
        return false;
    }
    *key = (bd_slice){email, n};
    if (!bd_scope_check(srv, rq, BD_ID_EMAIL, *key)) /* 403 out_of_scope, type_not_allowed */
        return false;
    bd_note_account(rq, BD_ID_EMAIL, *key);
    return true;
}

void bd_hibp_breached_account(bd_server *srv, bd_req *rq, bd_slice account)
{
    account_search a = {.rq = rq};
    if (!account_params(rq, &a))
        return;
    char email[BD_NORM_MAX + 1];
    bd_slice key;
    if (!bd_hibp_email_account(srv, rq, account, email, &key))
        return;
    rq->records = 0;
    bd_reply_begin(rq, 200);
    bd_json_array_begin(&rq->json);
    bd_result r = bd_store_read_begin(rq->store);
    if (r == BD_OK)
        r = bd_store_breaches_of_email(rq->store, key, write_account_breach, &a);
    bd_store_read_end(rq->store);
    if (r != BD_OK) {
        bd_reply_store_error(rq, r);
        return;
    }
    if (rq->records == 0) {
        bd_hibp_not_found(rq);
        return;
    }
    bd_json_array_end(&rq->json);
    bd_reply_finish(rq);
}

/* ---- GET /breacheddomain/{domain} --------------------------------------------------- */

typedef struct {
    bd_json *w;
    bd_slice domain;
    bd_slice last_email; /* the alias whose array is open; ptr NULL: none yet */
    char last[BD_NORM_MAX + 1];
    int64_t aliases;
} domain_search;

/* The alias of an email of the domain: the email without its "@domain". */
static bd_slice alias_of(bd_slice email, bd_slice domain)
{
    size_t tail = domain.len + 1;
    if (email.len > tail && email.ptr[email.len - tail] == '@' &&
        memcmp(email.ptr + email.len - domain.len, domain.ptr, domain.len) == 0)
        return (bd_slice){email.ptr, email.len - tail};
    return email;
}

static int write_pair(void *ctx, const bd_domain_row *row)
{
    domain_search *d = ctx;
    bool same = d->last_email.ptr && row->email.len == d->last_email.len &&
                memcmp(row->email.ptr, d->last, row->email.len) == 0;
    if (!same) {
        if (d->last_email.ptr)
            bd_json_array_end(d->w);
        bd_slice alias = alias_of(row->email, d->domain);
        char key[BD_NORM_MAX + 1];
        size_t kl = alias.len < BD_NORM_MAX ? alias.len : BD_NORM_MAX;
        memcpy(key, alias.ptr, kl);
        key[kl] = '\0';
        bd_json_key(d->w, key);
        bd_json_array_begin(d->w);
        kl = row->email.len < BD_NORM_MAX ? row->email.len : BD_NORM_MAX;
        memcpy(d->last, row->email.ptr, kl);
        d->last_email = (bd_slice){d->last, kl};
        d->aliases++;
    }
    bd_json_string(d->w, row->breach_name);
    return 0;
}

void bd_hibp_breached_domain(bd_server *srv, bd_req *rq, bd_slice domain)
{
    int64_t max_records = srv->cfg.hibp_domain_max;
    if (!bd_params_check(rq, NULL, NULL))
        return;
    /* A tenant key: its tenant's domains (and their subdomains) whatever its plan, as HIBP
     * answers only for verified domains; any other domain 403 out_of_scope. Keys without a
     * tenant: the enterprise plan. */
    if (rq->key.tenant_id == 0 && strcmp(rq->key.plan, "enterprise") != 0) {
        bd_reply_error(rq, 403, "forbidden", "domain search needs a key of the enterprise plan");
        return;
    }
    char norm[BD_NORM_MAX + 1];
    size_t n;
    const char *why = NULL;
    if (bd_normalize(BD_ID_EMAIL_DOMAIN, domain, norm, &n, &why) != BD_OK) {
        bd_reply_error(rq, 400, "bad_request", "the domain is not valid: %s",
                       why ? why : "not a host name");
        return;
    }
    if (!bd_scope_check(srv, rq, BD_ID_EMAIL_DOMAIN, (bd_slice){norm, n}))
        return;
    domain_search d = {.w = &rq->json, .domain = {norm, n}};
    bd_note_account(rq, BD_ID_EMAIL_DOMAIN, d.domain);
    int64_t records = 0;
    bd_reply_begin(rq, 200);
    bd_json_object_begin(&rq->json);
    bd_result r = bd_store_read_begin(rq->store);
    if (r == BD_OK)
        r = bd_store_domain_breaches(rq->store, d.domain, max_records, write_pair, &d, &records);
    bd_store_read_end(rq->store);
    if (r == BD_ERR_LIMIT) {
        bd_reply_error(rq, 403, "domain_too_large",
                       "the domain has %lld breach records, more than the %lld a domain search "
                       "reads (DomainSearchMaxBreachedAccounts)",
                       (long long)records, (long long)max_records);
        return;
    }
    if (r != BD_OK) {
        bd_reply_store_error(rq, r);
        return;
    }
    rq->records = d.aliases;
    if (d.aliases == 0) {
        bd_hibp_not_found(rq);
        return;
    }
    bd_json_array_end(&rq->json);
    bd_json_object_end(&rq->json);
    bd_reply_finish(rq);
}
