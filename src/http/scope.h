/* A key's scope applied to a request (issue 33; the rules in auth/scope.h): an identity type
 * the key was not given is 403 type_not_allowed; for a tenant key an email or email_domain
 * outside its tenant's domains is 403 out_of_scope, answered before the store is asked; every
 * other type a tenant key was given is searched only among the records of its tenant's
 * domains (bd_record_query.scope_tenant). Each refusal is counted in
 * breachd_scope_refusals_total. A key without a tenant and with every type (the operator's)
 * passes every check in two compares. For the v7 and HIBP handlers. */
#ifndef BD_HTTP_SCOPE_H
#define BD_HTTP_SCOPE_H

#include <stdbool.h>
#include <stdint.h>

#include "auth/keys.h"
#include "core/slice.h"
#include "http/request.h"

struct bd_server;

typedef enum {
    BD_SCOPE_OK,
    BD_SCOPE_TYPE_NOT_ALLOWED, /* the key was not given the identity type */
    BD_SCOPE_OUT_OF_SCOPE,     /* an email or email_domain outside the tenant's domains */
} bd_scope_verdict;

/* The verdict on key k searching identity type t (a bd_id_type) for lookup key `key` (the
 * normalised value; for an email or email_domain the domain is read from it). */
bd_scope_verdict bd_scope_judge(struct bd_server *srv, const bd_key_info *k, int t, bd_slice key);
/* Writes the 403 of a refusal (type_not_allowed or out_of_scope; the same JSON body for the
 * v7 API and the HIBP door) and counts it. */
void bd_scope_refuse(struct bd_server *srv, bd_req *rq, bd_scope_verdict v);
/* Judges the request's key; true when the search may go on, else the 403 is written. */
bool bd_scope_check(struct bd_server *srv, bd_req *rq, int t, bd_slice key);
/* The tenant a search of type t by k is limited to (bd_record_query.scope_tenant): 0 for a
 * key without a tenant and for email and email_domain (judged in scope beforehand, so all
 * their records are the tenant's); the key's tenant for every other type. */
int64_t bd_scope_tenant_filter(const bd_key_info *k, int t);
/* Card searches need BD_KEY_TYPE_CARDS; false with 403 type_not_allowed written. */
bool bd_scope_check_cards(struct bd_server *srv, bd_req *rq);
/* Whether domain (normalised) is one of tenant_id's domains or under one, from the keyring. */
bool bd_scope_domain_of_tenant(struct bd_server *srv, int64_t tenant_id, bd_slice domain);

#endif
