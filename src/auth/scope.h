/* What a key's scope lets it search (issue 33), as pure rules: whether an identity type is
 * among a key's types, and which domain an email or email_domain identity names and whether
 * it lies in a tenant's domain. The HTTP handlers apply them through http/scope.h; the job
 * runner applies them to a job's lines. */
#ifndef BD_AUTH_SCOPE_H
#define BD_AUTH_SCOPE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/slice.h"

/* Whether types (a resolved BD_KEY_TYPE mask, auth/keys.h) holds identity type t (a
 * bd_id_type). */
bool bd_scope_type_allowed(uint32_t types, int t);
/* The domain an identity of type t names, from its lookup key (the normalised value): an
 * email's part after its last '@', an email_domain itself. false for every other type (and
 * for an email without '@', which normalisation never gives). */
bool bd_scope_identity_domain(int t, bd_slice key, bd_slice *domain);
/* Whether domain is tenant_domain or lies under it ("mail.acme.example" under
 * "acme.example"; "notacme.example" is not), bytes compared as normalised (lower case). */
bool bd_scope_domain_under(bd_slice domain, bd_slice tenant_domain);

/* The tenant a search of type t by a key of tenant_id is limited to
 * (bd_record_query.scope_tenant, bd_store_record_ids): 0 for a key without a tenant and for
 * email and email_domain (judged in scope before, so every record they find is the tenant's);
 * the key's tenant for every other type. */
int64_t bd_scope_record_filter(int64_t tenant_id, int t);

#endif
