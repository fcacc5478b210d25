/* Tenants, their domains, and key changes (store.h "tenants"). Not yet implemented: BD_ERR_UNSUPPORTED. */
#include "store/pg/pg_impl.h"

bd_result pg_key_change(bd_store *s, int64_t id, const bd_key_change *c)
{
    (void)s; (void)id; (void)c;
    return BD_ERR_UNSUPPORTED;
}

bd_result pg_tenant_add(bd_store *s, bd_slice name, int64_t now, int64_t *id)
{
    (void)s; (void)name; (void)now; (void)id;
    return BD_ERR_UNSUPPORTED;
}

bd_result pg_tenant_list(bd_store *s, bd_tenant_cb cb, void *ctx)
{
    (void)s; (void)cb; (void)ctx;
    return BD_ERR_UNSUPPORTED;
}

bd_result pg_tenant_get(bd_store *s, int64_t id, bd_tenant_row *out)
{
    (void)s; (void)id; (void)out;
    return BD_ERR_UNSUPPORTED;
}

bd_result pg_tenant_rename(bd_store *s, int64_t id, bd_slice name)
{
    (void)s; (void)id; (void)name;
    return BD_ERR_UNSUPPORTED;
}

bd_result pg_tenant_remove(bd_store *s, int64_t id)
{
    (void)s; (void)id;
    return BD_ERR_UNSUPPORTED;
}

bd_result pg_tenant_domain_add(bd_store *s, int64_t id, bd_slice domain)
{
    (void)s; (void)id; (void)domain;
    return BD_ERR_UNSUPPORTED;
}

bd_result pg_tenant_domain_remove(bd_store *s, int64_t id, bd_slice domain)
{
    (void)s; (void)id; (void)domain;
    return BD_ERR_UNSUPPORTED;
}

bd_result pg_tenant_domains(bd_store *s, int64_t id, bd_tenant_domain_cb cb, void *ctx)
{
    (void)s; (void)id; (void)cb; (void)ctx;
    return BD_ERR_UNSUPPORTED;
}
