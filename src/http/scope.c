/* A key's scope applied to a request (scope.h). */
#include "http/scope.h"

#include "auth/scope.h"
#include "http/server_impl.h"
#include "ingest/normalize.h"

bool bd_scope_domain_of_tenant(bd_server *srv, int64_t tenant_id, bd_slice domain)
{
    return tenant_id != 0 && bd_keyring_domain_in_scope(srv->keys, tenant_id, domain);
}

bd_scope_verdict bd_scope_judge(bd_server *srv, const bd_key_info *k, int t, bd_slice key)
{
    if (!bd_scope_type_allowed(k->types, t))
        return BD_SCOPE_TYPE_NOT_ALLOWED;
    if (k->tenant_id == 0)
        return BD_SCOPE_OK;
    bd_slice domain;
    if (!bd_scope_identity_domain(t, key, &domain))
        return BD_SCOPE_OK; /* searched with scope_tenant instead */
    return bd_scope_domain_of_tenant(srv, k->tenant_id, domain) ? BD_SCOPE_OK
                                                                : BD_SCOPE_OUT_OF_SCOPE;
}

void bd_scope_refuse(bd_server *srv, bd_req *rq, bd_scope_verdict v)
{
    if (v == BD_SCOPE_TYPE_NOT_ALLOWED) {
        bd_metrics_scope_refused(srv->metrics, BD_SCOPE_REFUSED_TYPE);
        bd_reply_error(rq, 403, "type_not_allowed",
                       "this key may not search this identity type; the operator gives a key "
                       "its types (breachctl keys create --types)");
    } else {
        bd_metrics_scope_refused(srv->metrics, BD_SCOPE_REFUSED_DOMAIN);
        bd_reply_error(rq, 403, "out_of_scope",
                       "this key may search only the email addresses and domains of its "
                       "tenant's domains; this one is not among them");
    }
}

bool bd_scope_check(bd_server *srv, bd_req *rq, int t, bd_slice key)
{
    bd_scope_verdict v = bd_scope_judge(srv, &rq->key, t, key);
    if (v == BD_SCOPE_OK)
        return true;
    bd_scope_refuse(srv, rq, v);
    return false;
}

int64_t bd_scope_tenant_filter(const bd_key_info *k, int t)
{
    return bd_scope_record_filter(k->tenant_id, t);
}

bool bd_scope_check_cards(bd_server *srv, bd_req *rq)
{
    if (rq->key.types & BD_KEY_TYPE_CARDS)
        return true;
    bd_metrics_scope_refused(srv->metrics, BD_SCOPE_REFUSED_TYPE);
    bd_reply_error(rq, 403, "type_not_allowed",
                   "this key may not search cards; the operator gives a key card searches "
                   "(breachctl keys create --types ...,cards)");
    return false;
}
