/* A key's scope as pure rules (scope.h). */
#include "auth/scope.h"

#include <string.h>

#include "auth/keys.h"
#include "ingest/normalize.h"

bool bd_scope_type_allowed(uint32_t types, int t)
{
    return t >= 0 && t < BD_ID_COUNT && (types & bd_key_type_bit(t)) != 0;
}

bool bd_scope_identity_domain(int t, bd_slice key, bd_slice *domain)
{
    if (t == BD_ID_EMAIL_DOMAIN) {
        *domain = key;
        return true;
    }
    if (t != BD_ID_EMAIL)
        return false;
    for (size_t i = key.len; i-- > 0;)
        if (key.ptr[i] == '@') {
            *domain = (bd_slice){key.ptr + i + 1, key.len - i - 1};
            return true;
        }
    return false;
}

bool bd_scope_domain_under(bd_slice domain, bd_slice tenant_domain)
{
    if (tenant_domain.len == 0 || domain.len < tenant_domain.len ||
        memcmp(domain.ptr + domain.len - tenant_domain.len, tenant_domain.ptr,
               tenant_domain.len) != 0)
        return false;
    return domain.len == tenant_domain.len ||
           domain.ptr[domain.len - tenant_domain.len - 1] == '.';
}

int64_t bd_scope_record_filter(int64_t tenant_id, int t)
{
    return t == BD_ID_EMAIL || t == BD_ID_EMAIL_DOMAIN ? 0 : tenant_id;
}
