/* API key generation and the in-memory keyring (sorted by hash, read under a rwlock). */
#include "auth/keys.h"

#include <pthread.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "auth/key_types.h"
#include "core/log.h"
#include "core/sha256.h"

bd_result bd_key_generate(char text[BD_KEY_TEXT_LEN + 1], uint8_t hash[32])
{
    if (sodium_init() < 0)
        return BD_ERR_CRYPTO;
    uint8_t raw[32];
    randombytes_buf(raw, sizeof raw);
    memcpy(text, "bd_", 3);
    sodium_bin2base64(text + 3, BD_KEY_TEXT_LEN + 1 - 3, raw, sizeof raw,
                      sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    sodium_memzero(raw, sizeof raw);
    bd_key_hash(bd_slice_from(text), hash);
    return BD_OK;
}

void bd_key_hash(bd_slice key, uint8_t out[32])
{
    bd_sha256(key.ptr, key.len, out);
}

bool bd_plan_rate(const char *plan, int64_t *per_hour)
{
    if (strcmp(plan, "standard") == 0)
        *per_hour = 1000;
    else if (strcmp(plan, "enterprise") == 0)
        *per_hour = 10000;
    else
        return false;
    return true;
}

typedef struct {
    uint8_t hash[32];
    bd_key_info info;
} entry;

/* A tenant's domain; the keyring's array is sorted by (tenant, domain). */
typedef struct {
    int64_t tenant;
    char *domain; /* NUL-terminated, owned */
    size_t len;
} tdomain;

struct bd_keyring {
    pthread_rwlock_t lock;
    entry *entries;
    size_t n;
    tdomain *domains;
    size_t ndomains;
    int64_t generation; /* -1 before the first load */
};

static void free_domains(tdomain *d, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(d[i].domain);
    free(d);
}

bd_keyring *bd_keyring_new(void)
{
    bd_keyring *kr = calloc(1, sizeof *kr);
    if (!kr)
        return NULL;
    pthread_rwlock_init(&kr->lock, NULL);
    kr->generation = -1;
    return kr;
}

void bd_keyring_free(bd_keyring *kr)
{
    if (!kr)
        return;
    pthread_rwlock_destroy(&kr->lock);
    free(kr->entries);
    free_domains(kr->domains, kr->ndomains);
    free(kr);
}

typedef struct {
    entry *items;
    size_t n, cap;
    bool nomem;
} collect;

static int collect_key(void *ctx, const bd_key_row *k)
{
    collect *c = ctx;
    if (k->revoked_at)
        return 0;
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 64;
        entry *p = realloc(c->items, cap * sizeof *p);
        if (!p) {
            c->nomem = true;
            return 1;
        }
        c->items = p;
        c->cap = cap;
    }
    entry *e = &c->items[c->n++];
    memset(e, 0, sizeof *e);
    memcpy(e->hash, k->hash, 32);
    e->info.id = k->id;
    e->info.rate_per_hour = k->rate_per_hour;
    e->info.exact_per_day = k->exact_per_day;
    e->info.expires_at = k->expires_at;
    e->info.quota_per_month = k->quota_per_month;
    bd_key_job_limits(k, &e->info.jobs);
    size_t nl = k->name.len < BD_KEY_NAME_MAX ? k->name.len : BD_KEY_NAME_MAX;
    memcpy(e->info.name, k->name.ptr, nl);
    size_t pl = k->plan.len < BD_KEY_PLAN_MAX ? k->plan.len : BD_KEY_PLAN_MAX;
    memcpy(e->info.plan, k->plan.ptr, pl);
    e->info.tenant_id = k->tenant_id;
    e->info.types = bd_key_types_resolve(k->types, k->tenant_id);
    e->info.role = k->role;
    /* The allow list as stored (canonical text, written by breachctl or the admin API). A
     * list that does not parse denies every address rather than allowing any: its key then
     * gets 403 ip_not_allowed everywhere, and the log says why. */
    const char *p = k->allow_ip.ptr, *end = p ? p + k->allow_ip.len : NULL;
    while (p && p < end) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *stop = comma ? comma : end;
        bd_cidr block;
        if (e->info.n_allow == BD_KEY_ALLOW_MAX ||
            !bd_cidr_parse((bd_slice){p, (size_t)(stop - p)}, &block)) {
            bd_log(BD_LOG_ERROR, "keys", "key %lld: its allowed addresses do not parse; it is "
                   "refused from everywhere", (long long)k->id);
            memset(&e->info.allow[0], 0, sizeof e->info.allow[0]); /* family 0: no address */
            e->info.n_allow = 1;
            break;
        }
        e->info.allow[e->info.n_allow++] = block;
        p = comma ? comma + 1 : end;
    }
    return 0;
}

typedef struct {
    tdomain *items;
    size_t n, cap;
    bool nomem;
} collect_domains;

static int collect_domain(void *ctx, int64_t tenant_id, bd_slice domain)
{
    collect_domains *c = ctx;
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 16;
        tdomain *p = realloc(c->items, cap * sizeof *p);
        if (!p) {
            c->nomem = true;
            return 1;
        }
        c->items = p;
        c->cap = cap;
    }
    char *d = malloc(domain.len + 1);
    if (!d) {
        c->nomem = true;
        return 1;
    }
    memcpy(d, domain.ptr, domain.len);
    d[domain.len] = '\0';
    c->items[c->n++] = (tdomain){tenant_id, d, domain.len};
    return 0;
}

static int domain_cmp(int64_t ta, const char *a, size_t al, int64_t tb, const char *b, size_t bl)
{
    if (ta != tb)
        return ta < tb ? -1 : 1;
    size_t n = al < bl ? al : bl;
    int c = memcmp(a, b, n);
    if (c)
        return c;
    return al < bl ? -1 : al > bl;
}

static int by_tenant_domain(const void *x, const void *y)
{
    const tdomain *a = x, *b = y;
    return domain_cmp(a->tenant, a->domain, a->len, b->tenant, b->domain, b->len);
}

static int by_hash(const void *a, const void *b)
{
    return memcmp(((const entry *)a)->hash, ((const entry *)b)->hash, 32);
}

bd_result bd_keyring_refresh(bd_keyring *kr, bd_store *s)
{
    int64_t gen;
    bd_result r = bd_store_key_generation(s, &gen);
    if (r != BD_OK)
        return r;
    pthread_rwlock_rdlock(&kr->lock);
    bool same = gen == kr->generation;
    pthread_rwlock_unlock(&kr->lock);
    if (same)
        return BD_OK;
    collect c = {0};
    collect_domains d = {0};
    r = bd_store_key_list(s, collect_key, &c);
    if (r == BD_OK && c.nomem)
        r = BD_ERR_NOMEM;
    if (r == BD_OK)
        r = bd_store_tenant_domains(s, 0, collect_domain, &d);
    if (r == BD_OK && d.nomem)
        r = BD_ERR_NOMEM;
    if (r != BD_OK) {
        free(c.items);
        free_domains(d.items, d.n);
        return r;
    }
    if (c.n > 1) /* a store without keys has no array at all: qsort(NULL, ...) is undefined */
        qsort(c.items, c.n, sizeof *c.items, by_hash);
    if (d.n > 1)
        qsort(d.items, d.n, sizeof *d.items, by_tenant_domain);
    pthread_rwlock_wrlock(&kr->lock);
    entry *old = kr->entries;
    tdomain *old_domains = kr->domains;
    size_t old_ndomains = kr->ndomains;
    kr->entries = c.items;
    kr->n = c.n;
    kr->domains = d.items;
    kr->ndomains = d.n;
    kr->generation = gen;
    pthread_rwlock_unlock(&kr->lock);
    free(old);
    free_domains(old_domains, old_ndomains);
    return BD_OK;
}

bd_key_status bd_keyring_lookup(bd_keyring *kr, bd_slice key, int64_t now, bd_key_info *out)
{
    entry probe;
    bd_key_hash(key, probe.hash);
    bd_key_status status = BD_KEY_UNKNOWN;
    pthread_rwlock_rdlock(&kr->lock);
    const entry *e = kr->n ? bsearch(&probe, kr->entries, kr->n, sizeof probe, by_hash) : NULL;
    if (e) {
        if (e->info.expires_at && e->info.expires_at <= now) {
            status = BD_KEY_EXPIRED;
        } else {
            status = BD_KEY_VALID;
            *out = e->info;
        }
    }
    pthread_rwlock_unlock(&kr->lock);
    return status;
}

/* The index of the first domain of tenant >= (tenant, d) in the sorted array. */
static size_t lower_bound(const tdomain *a, size_t n, int64_t tenant, const char *d, size_t len)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (domain_cmp(a[mid].tenant, a[mid].domain, a[mid].len, tenant, d, len) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

bool bd_keyring_domain_in_scope(bd_keyring *kr, int64_t tenant_id, bd_slice domain)
{
    if (tenant_id == 0 || domain.len == 0 || !domain.ptr)
        return false;
    bool in = false;
    pthread_rwlock_rdlock(&kr->lock);
    /* domain itself, then each parent: "a.b.example", "b.example", "example" */
    const char *p = domain.ptr;
    size_t len = domain.len;
    while (!in && len) {
        size_t i = lower_bound(kr->domains, kr->ndomains, tenant_id, p, len);
        in = i < kr->ndomains && kr->domains[i].tenant == tenant_id && kr->domains[i].len == len &&
             memcmp(kr->domains[i].domain, p, len) == 0;
        const char *dot = memchr(p, '.', len);
        if (!dot)
            break;
        len -= (size_t)(dot + 1 - p);
        p = dot + 1;
    }
    pthread_rwlock_unlock(&kr->lock);
    return in;
}

void bd_keyring_tenant_domains(bd_keyring *kr, int64_t tenant_id, bd_tenant_domain_cb cb,
                               void *ctx)
{
    if (tenant_id == 0)
        return;
    pthread_rwlock_rdlock(&kr->lock);
    size_t i = lower_bound(kr->domains, kr->ndomains, tenant_id, "", 0);
    for (; i < kr->ndomains && kr->domains[i].tenant == tenant_id; i++) {
        if (cb(ctx, tenant_id, (bd_slice){kr->domains[i].domain, kr->domains[i].len}))
            break;
    }
    pthread_rwlock_unlock(&kr->lock);
}

void bd_key_job_limits(const bd_key_row *k, bd_job_limits *out)
{
    out->max_jobs = k->max_jobs > 0 ? k->max_jobs : BD_KEY_MAX_JOBS;
    out->max_identities =
        k->max_queued_identities > 0 ? k->max_queued_identities : BD_KEY_MAX_QUEUED_IDENTITIES;
    out->max_rows = k->max_result_rows > 0 ? k->max_result_rows : BD_KEY_MAX_RESULT_ROWS;
}

/* The n digits at s as a number from 1 to max, into *out; false for anything else (no
 * digits, a sign, more than 13 digits). */
static bool whole_number(const char *s, size_t n, int64_t max, int64_t *out)
{
    if (n == 0 || n > 13)
        return false;
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (s[i] - '0');
    }
    if (v < 1 || v > max)
        return false;
    *out = v;
    return true;
}

bool bd_job_limit_parse(const char *s, int64_t *limit)
{
    return s && whole_number(s, strlen(s), BD_KEY_JOB_LIMIT_MAX, limit);
}

bool bd_quota_parse(const char *s, int64_t *per_month)
{
    if (!s)
        return false;
    size_t n = strcspn(s, "/");
    if (s[n] && strcmp(s + n, "/month") != 0)
        return false;
    return whole_number(s, n, BD_KEY_QUOTA_MAX, per_month);
}
