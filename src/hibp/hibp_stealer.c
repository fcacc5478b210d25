/* The Have I Been Pwned API v3's stealer log calls, over the website host kept with each
 * record that has one (records.website_domain: stealer logs, combo lines with a URL, a
 * mapped website column; store/pastes.h):
 *   GET /stealerlogsbyemail/{email}           the hosts an address's credentials were for;
 *   GET /stealerlogsbywebsitedomain/{domain}  the addresses captured on a website;
 *   GET /stealerlogsbyemaildomain/{domain}    each alias of an email domain to its hosts.
 * Each answer sorted, 404 with an empty body when empty. Keys of the enterprise plan or a
 * tenant key (HIBP sells them with its top plans), scoped like the other searches: a tenant
 * key's emails and email domains, and a website host among its tenant's domains. A domain
 * or host with more than --hibp-domain-max records is refused (403 domain_too_large), as a
 * domain search is. Their routes are in routes.c. */
#include <string.h>

#include "auth/scope.h"
#include "hibp/hibp.h"
#include "http/scope.h"
#include "http/server_impl.h"
#include "ingest/normalize.h"
#include "store/pastes.h"

typedef struct {
    bd_req *rq;
    bd_slice domain;     /* by email domain: the domain, to cut the aliases */
    char last[BD_NORM_MAX + 1];
    size_t last_len;
    bool open;           /* by email domain: an alias's array is open */
    int64_t n;
} stealer;

static int write_one(void *ctx, bd_slice a, bd_slice b)
{
    (void)b;
    stealer *st = ctx;
    bd_json_string(&st->rq->json, a);
    st->n++;
    return 0;
}

/* email (an alias of st->domain) and host: a new key when the email changes */
static int write_pair(void *ctx, bd_slice email, bd_slice host)
{
    stealer *st = ctx;
    bd_json *w = &st->rq->json;
    if (!st->open || email.len != st->last_len || memcmp(email.ptr, st->last, email.len) != 0) {
        if (st->open)
            bd_json_array_end(w);
        size_t tail = st->domain.len + 1;
        size_t alias = email.len > tail && email.ptr[email.len - tail] == '@' ? email.len - tail
                                                                               : email.len;
        char key[BD_NORM_MAX + 1];
        size_t kl = alias < BD_NORM_MAX ? alias : BD_NORM_MAX;
        memcpy(key, email.ptr, kl);
        key[kl] = '\0';
        bd_json_key(w, key);
        bd_json_array_begin(w);
        st->last_len = email.len < BD_NORM_MAX ? email.len : BD_NORM_MAX;
        memcpy(st->last, email.ptr, st->last_len);
        st->open = true;
        st->n++;
    }
    bd_json_string(w, host);
    return 0;
}

/* The plan check every stealer log call makes; false with the 403 written. */
static bool may_read_stealer_logs(bd_req *rq)
{
    if (rq->key.tenant_id != 0 || strcmp(rq->key.plan, "enterprise") == 0)
        return true;
    bd_reply_error(rq, 403, "forbidden", "stealer logs need a key of the enterprise plan");
    return false;
}

static void answer(bd_server *srv, bd_req *rq, bd_stealer_by by, int t, bd_slice value)
{
    if (!bd_params_check(rq, NULL, NULL) || !may_read_stealer_logs(rq))
        return;
    char norm[BD_NORM_MAX + 1];
    size_t n;
    const char *why = NULL;
    if (bd_normalize(t, value, norm, &n, &why) != BD_OK) {
        bd_reply_error(rq, 400, "bad_request", "%s: %s",
                       t == BD_ID_EMAIL ? "the account must be an email address"
                                        : "the domain is not valid",
                       why ? why : "not a valid value");
        return;
    }
    bd_slice key = {norm, n};
    if (t == BD_ID_WEBSITE_DOMAIN) {
        /* a website host: the key's type, and for a tenant key one of its own domains */
        if (!bd_scope_type_allowed(rq->key.types, t)) {
            bd_scope_refuse(srv, rq, BD_SCOPE_TYPE_NOT_ALLOWED);
            return;
        }
        if (rq->key.tenant_id != 0 && !bd_scope_domain_of_tenant(srv, rq->key.tenant_id, key)) {
            bd_scope_refuse(srv, rq, BD_SCOPE_OUT_OF_SCOPE);
            return;
        }
    } else if (!bd_scope_check(srv, rq, t, key)) {
        return;
    }
    bd_note_account(rq, t, key);
    int64_t max = srv->cfg.hibp_domain_max;
    stealer st = {.rq = rq, .domain = key};
    bool pairs = by == BD_STEALER_BY_EMAIL_DOMAIN;
    bd_reply_begin(rq, 200);
    if (pairs)
        bd_json_object_begin(&rq->json);
    else
        bd_json_array_begin(&rq->json);
    bd_result r = bd_store_read_begin(rq->store);
    if (r == BD_OK)
        r = bd_store_stealer_logs(rq->store, by, key, max, pairs ? write_pair : write_one, &st);
    bd_store_read_end(rq->store);
    if (r == BD_ERR_LIMIT) {
        bd_reply_error(rq, 403, "domain_too_large",
                       "the %s has more than the %lld records a domain search reads "
                       "(DomainSearchMaxBreachedAccounts)",
                       pairs ? "domain" : "website", (long long)max);
        return;
    }
    if (r != BD_OK) {
        bd_reply_store_error(rq, r);
        return;
    }
    rq->records = st.n;
    if (st.n == 0) {
        bd_hibp_not_found(rq);
        return;
    }
    if (pairs) {
        bd_json_array_end(&rq->json);
        bd_json_object_end(&rq->json);
    } else {
        bd_json_array_end(&rq->json);
    }
    bd_reply_finish(rq);
}

void bd_hibp_stealer_by_email(bd_server *srv, bd_req *rq, bd_slice email)
{
    answer(srv, rq, BD_STEALER_BY_EMAIL, BD_ID_EMAIL, email);
}

void bd_hibp_stealer_by_website(bd_server *srv, bd_req *rq, bd_slice domain)
{
    answer(srv, rq, BD_STEALER_BY_WEBSITE, BD_ID_WEBSITE_DOMAIN, domain);
}

void bd_hibp_stealer_by_email_domain(bd_server *srv, bd_req *rq, bd_slice domain)
{
    answer(srv, rq, BD_STEALER_BY_EMAIL_DOMAIN, BD_ID_EMAIL_DOMAIN, domain);
}
