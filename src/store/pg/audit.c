/* The audit trail and the lookup log (store.h). Not yet implemented: BD_ERR_UNSUPPORTED. */
#include "store/pg/pg_impl.h"

bd_result pg_audit_add(bd_store *s, const bd_audit_row *r, int64_t *id)
{
    (void)s; (void)r; (void)id;
    return BD_ERR_UNSUPPORTED;
}

bd_result pg_audit_list(bd_store *s, int64_t before, int limit, bd_audit_cb cb, void *ctx)
{
    (void)s; (void)before; (void)limit; (void)cb; (void)ctx;
    return BD_ERR_UNSUPPORTED;
}

bd_result pg_lookup_add(bd_store *s, const bd_lookup_row *rows, size_t n)
{
    (void)s; (void)rows; (void)n;
    return BD_ERR_UNSUPPORTED;
}

bd_result pg_lookup_find(bd_store *s, const uint8_t hash[32], int limit, bd_lookup_cb cb, void *ctx)
{
    (void)s; (void)hash; (void)limit; (void)cb; (void)ctx;
    return BD_ERR_UNSUPPORTED;
}

bd_result pg_lookup_expire(bd_store *s, int64_t before_at, int64_t *deleted)
{
    (void)s; (void)before_at; (void)deleted;
    return BD_ERR_UNSUPPORTED;
}
