/* The key of a bulk job: its limits, quota and tenant scope (job_key.h). */
#include "jobs/job_key.h"

#include <string.h>
#include <time.h>

#include "auth/keys.h"
#include "auth/scope.h"
#include "auth/usage.h"

static int take_domain(void *ctx, int64_t tenant_id, bd_slice domain)
{
    (void)tenant_id;
    bd_buf *b = ctx;
    return bd_buf_append(b, domain.ptr, domain.len) != BD_OK ||
           bd_buf_append_char(b, '\0') != BD_OK;
}

void bd_job_key_load(bd_store *s, int64_t key_id, bd_job_key *out)
{
    bd_key_row k;
    bd_job_limits lim;
    if (bd_store_key_get(s, key_id, &k) != BD_OK)
        memset(&k, 0, sizeof k); /* gone: the defaults, no quota */
    bd_key_job_limits(&k, &lim);
    out->key_id = key_id;
    out->max_rows = lim.max_rows;
    out->quota = k.quota_per_month;
    out->tenant_id = k.tenant_id;
    bd_buf_init(&out->domains, 1u << 20);
    out->scope_failed =
        k.tenant_id != 0 &&
        bd_store_tenant_domains(s, k.tenant_id, take_domain, &out->domains) != BD_OK;
}

void bd_job_key_free(bd_job_key *key)
{
    bd_buf_free(&key->domains);
}

/* Whether a job line of type t with lookup key `key` is in the key's scope (auth/scope.h):
 * for a tenant key, an email or email_domain within its tenant's domains. */
bool bd_job_key_in_scope(const bd_job_key *key, int t, bd_slice k)
{
    bd_slice domain;
    if (key->tenant_id == 0 || !bd_scope_identity_domain(t, k, &domain))
        return true;
    if (key->scope_failed)
        return false;
    for (size_t at = 0; at < key->domains.len;) {
        size_t len = strlen(key->domains.data + at);
        if (bd_scope_domain_under(domain, (bd_slice){key->domains.data + at, len}))
            return true;
        at += len + 1;
    }
    return false;
}

/* How many of `want` rows past the identities' first (extra rows) the key's limit on rows
 * leaves room for beside its rows stored and its identities not yet looked up (this chunk's
 * among them), into *room. */
bd_result bd_job_key_rows_room(bd_store *s, const bd_job_key *key, int64_t want, int64_t *room)
{
    bd_job_usage u;
    bd_result r = bd_store_job_usage(s, key->key_id, &u);
    int64_t left = key->max_rows - u.rows - u.identities;
    *room = r != BD_OK || left <= 0 ? 0 : want < left ? want : left;
    return r;
}

/* Counts *n extra rows against the key's usage and quota (a result row is a request:
 * docs/API.md), all of them or, when the quota is nearer, what it leaves; *n gets how many
 * were counted. */
bd_result bd_job_key_count_rows(bd_store *s, const bd_job_key *key, int64_t *n)
{
    int32_t day = bd_usage_day((int64_t)time(NULL));
    for (int tries = 0; *n > 0 && tries < 2; tries++) {
        int64_t added, month;
        bd_result r = bd_store_usage_add(s, key->key_id, day, *n, key->quota, &added, &month);
        if (r != BD_OK || added == *n)
            return r;
        *n = key->quota > month ? key->quota - month : 0; /* what the quota leaves */
    }
    *n = 0;
    return BD_OK;
}
