/* The store front's forwards for who may search and what they did: API keys and their
 * changes, monthly usage and the shared rate counters, tenants and their domains, the
 * audit trail and the lookup log. Split from store.c (one concern per file); each checks
 * its arguments as store.h states and forwards through the backend's operations table
 * (store_impl.h). */
#include <string.h>

#include "store/store_impl.h"

bd_result bd_store_key_add(bd_store *s, const bd_key_row *k, int64_t *id)
{
    if (k->tenant_id < 0 || (k->role != BD_KEY_ROLE_USER && k->role != BD_KEY_ROLE_ADMIN) ||
        (k->role == BD_KEY_ROLE_ADMIN && k->tenant_id))
        return BD_ERR_INVALID;
    return s->ops->key_add(s, k, id);
}

bd_result bd_store_key_list(bd_store *s, bd_key_cb cb, void *ctx)
{
    return s->ops->key_list(s, cb, ctx);
}

bd_result bd_store_key_revoke(bd_store *s, int64_t id, int64_t now)
{
    return s->ops->key_revoke(s, id, now);
}

bd_result bd_store_key_generation(bd_store *s, int64_t *gen)
{
    return s->ops->key_generation(s, gen);
}

bd_result bd_store_key_set_quota(bd_store *s, int64_t id, int64_t quota_per_month)
{
    return s->ops->key_set_quota(s, id, quota_per_month);
}

bd_result bd_store_key_set_job_limits(bd_store *s, int64_t id, int64_t max_jobs,
                                      int64_t max_queued_identities, int64_t max_result_rows)
{
    return s->ops->key_set_job_limits(s, id, max_jobs, max_queued_identities, max_result_rows);
}

bd_result bd_store_key_get(bd_store *s, int64_t id, bd_key_row *out)
{
    memset(out, 0, sizeof *out);
    return s->ops->key_get(s, id, out);
}

bd_result bd_store_usage_add(bd_store *s, int64_t key_id, int32_t day, int64_t count,
                             int64_t quota, int64_t *added, int64_t *month_total)
{
    *added = 0;
    *month_total = 0;
    if (count < 1 || quota < 0)
        return BD_ERR_INVALID;
    return s->ops->usage_add(s, key_id, day, count, quota, added, month_total);
}

bd_result bd_store_usage_give_back(bd_store *s, int64_t key_id, int32_t day, int64_t count)
{
    if (count < 1)
        return BD_ERR_INVALID;
    return s->ops->usage_give_back(s, key_id, day, count);
}

bd_result bd_store_usage_get(bd_store *s, int64_t key_id, int32_t day, int64_t *day_total,
                             int64_t *month_total)
{
    *day_total = *month_total = 0;
    return s->ops->usage_get(s, key_id, day, day_total, month_total);
}

bd_result bd_store_rate_take(bd_store *s, int kind, int64_t id, int64_t now_us, int64_t share_us,
                             int64_t depth_us, int64_t want, int64_t *granted, int64_t *tat_us)
{
    return s->ops->rate_take(s, kind, id, now_us, share_us, depth_us, want, granted, tat_us);
}

bd_result bd_store_rate_give_back(bd_store *s, int kind, int64_t id, int64_t count,
                                  int64_t share_us)
{
    return s->ops->rate_give_back(s, kind, id, count, share_us);
}

bd_result bd_store_key_change(bd_store *s, int64_t id, const bd_key_change *c)
{
    return s->ops->key_change(s, id, c);
}

bd_result bd_store_tenant_add(bd_store *s, bd_slice name, int64_t now, int64_t *id)
{
    *id = 0;
    if (name.len == 0)
        return BD_ERR_INVALID;
    return s->ops->tenant_add(s, name, now, id);
}

bd_result bd_store_tenant_list(bd_store *s, bd_tenant_cb cb, void *ctx)
{
    return s->ops->tenant_list(s, cb, ctx);
}

bd_result bd_store_tenant_get(bd_store *s, int64_t id, bd_tenant_row *out)
{
    memset(out, 0, sizeof *out);
    return s->ops->tenant_get(s, id, out);
}

bd_result bd_store_tenant_rename(bd_store *s, int64_t id, bd_slice name)
{
    if (name.len == 0)
        return BD_ERR_INVALID;
    return s->ops->tenant_rename(s, id, name);
}

bd_result bd_store_tenant_remove(bd_store *s, int64_t id)
{
    return s->ops->tenant_remove(s, id);
}

bd_result bd_store_tenant_domain_add(bd_store *s, int64_t id, bd_slice domain)
{
    if (domain.len == 0)
        return BD_ERR_INVALID;
    return s->ops->tenant_domain_add(s, id, domain);
}

bd_result bd_store_tenant_domain_remove(bd_store *s, int64_t id, bd_slice domain)
{
    return s->ops->tenant_domain_remove(s, id, domain);
}

bd_result bd_store_tenant_domains(bd_store *s, int64_t id, bd_tenant_domain_cb cb, void *ctx)
{
    return s->ops->tenant_domains(s, id, cb, ctx);
}

bd_result bd_store_audit_add(bd_store *s, const bd_audit_row *r, int64_t *id)
{
    int64_t ignored;
    if (!id)
        id = &ignored;
    *id = 0;
    if (!r->address.ptr || !r->action.ptr || !r->target.ptr)
        return BD_ERR_INVALID;
    return s->ops->audit_add(s, r, id);
}

bd_result bd_store_audit_list(bd_store *s, int64_t before, int limit, bd_audit_cb cb, void *ctx)
{
    if (limit < 1 || before < 0)
        return BD_ERR_INVALID;
    return s->ops->audit_list(s, before, limit, cb, ctx);
}

bd_result bd_store_lookup_add(bd_store *s, const bd_lookup_row *rows, size_t n)
{
    return n ? s->ops->lookup_add(s, rows, n) : BD_OK;
}

bd_result bd_store_lookup_find(bd_store *s, const uint8_t hash[32], int limit, bd_lookup_cb cb,
                               void *ctx)
{
    if (limit < 1)
        return BD_ERR_INVALID;
    return s->ops->lookup_find(s, hash, limit, cb, ctx);
}

bd_result bd_store_lookup_expire(bd_store *s, int64_t before_at, int64_t *deleted)
{
    *deleted = 0;
    return s->ops->lookup_expire(s, before_at, deleted);
}
