/* Tenants and scoped keys on every backend (store.h "tenants", "audit trail", "lookup log",
 * bd_record_query.scope_tenant, bd_store_record_ids' scope) and the keyring over them
 * (auth/keys.h: the key's scope fields, the tenants' domains). store_fixture.h runs each test
 * on SQLite and, when BREACHD_TEST_PG_URI names a server, on PostgreSQL. */
#include "auth/keys.h"
#include "record_fixture.h"

#define NOV26 1795651200LL /* 2026-11-26T00:00:00Z */

static int64_t generation(bd_store *s)
{
    int64_t g = -1;
    CHECK_INT(bd_store_key_generation(s, &g), BD_OK);
    return g;
}

static int64_t add_tenant(bd_store *s, const char *name)
{
    int64_t id = 0;
    CHECK_INT(bd_store_tenant_add(s, bd_slice_from(name), NOV26, &id), BD_OK);
    CHECK(id > 0);
    return id;
}

static char listed[1024];

static void add_text(const char *fmt, long long a, bd_slice b)
{
    size_t n = strlen(listed);
    snprintf(listed + n, sizeof listed - n, fmt, n ? "," : "", a, (int)b.len,
             b.ptr ? b.ptr : "");
}

static int take_tenant(void *ctx, const bd_tenant_row *t)
{
    (void)ctx;
    add_text("%s%lld:%.*s", (long long)t->id, t->name);
    CHECK_INT(t->created_at, NOV26);
    return 0;
}

static const char *tenants(bd_store *s)
{
    listed[0] = '\0';
    CHECK_INT(bd_store_tenant_list(s, take_tenant, NULL), BD_OK);
    return listed;
}

static int take_domain(void *ctx, int64_t tenant, bd_slice domain)
{
    (void)ctx;
    add_text("%s%lld:%.*s", (long long)tenant, domain);
    return 0;
}

static const char *domains(bd_store *s, int64_t id)
{
    listed[0] = '\0';
    CHECK_INT(bd_store_tenant_domains(s, id, take_domain, NULL), BD_OK);
    return listed;
}

static int64_t add_scoped_key(bd_store *s, const char *name, int64_t tenant, uint32_t types,
                       const char *allow, int role)
{
    bd_key_row k = {.name = bd_slice_from(name),
                    .plan = BD_SLICE_LIT("standard"),
                    .rate_per_hour = 1000,
                    .created_at = NOV26,
                    .tenant_id = tenant,
                    .types = types,
                    .allow_ip = bd_slice_from(allow),
                    .role = role};
    bd_key_hash(bd_slice_from(name), k.hash);
    int64_t id = 0;
    CHECK_INT(bd_store_key_add(s, &k, &id), BD_OK);
    return id;
}

TEST(test_tenants_are_added_listed_renamed_and_removed)
{
    bd_store *s = fresh();
    CHECK_STR(tenants(s), "");
    int64_t g0 = generation(s);
    int64_t a = add_tenant(s, "Acme"), b = add_tenant(s, "Beta");
    CHECK_INT(generation(s), g0 + 2); /* keyrings hold the tenants' domains: they reload */
    CHECK_STR(tenants(s), "1:Acme,2:Beta");
    int64_t dup = -1;
    CHECK_INT(bd_store_tenant_add(s, BD_SLICE_LIT("Acme"), NOV26, &dup), BD_ERR_CONFLICT);
    CHECK_INT(dup, 0);
    CHECK_INT(bd_store_tenant_add(s, BD_SLICE_LIT(""), NOV26, &dup), BD_ERR_INVALID);
    bd_tenant_row t;
    CHECK_INT(bd_store_tenant_get(s, b, &t), BD_OK);
    CHECK_INT(t.id, b);
    CHECK_INT(t.created_at, NOV26);
    CHECK(t.name.len == 4 && memcmp(t.name.ptr, "Beta", 4) == 0);
    CHECK_INT(bd_store_tenant_get(s, 99, &t), BD_ERR_NOT_FOUND);
    CHECK_INT(bd_store_tenant_rename(s, b, BD_SLICE_LIT("Acme")), BD_ERR_CONFLICT);
    CHECK_INT(bd_store_tenant_rename(s, 99, BD_SLICE_LIT("Gamma")), BD_ERR_NOT_FOUND);
    CHECK_INT(bd_store_tenant_rename(s, b, BD_SLICE_LIT("Beta")), BD_OK); /* its own name */
    CHECK_INT(bd_store_tenant_rename(s, b, BD_SLICE_LIT("Gamma")), BD_OK);
    CHECK_STR(tenants(s), "1:Acme,2:Gamma");
    int64_t g1 = generation(s);
    CHECK_INT(bd_store_tenant_remove(s, a), BD_OK);
    CHECK_INT(generation(s), g1 + 1);
    CHECK_INT(bd_store_tenant_remove(s, a), BD_ERR_NOT_FOUND);
    CHECK_STR(tenants(s), "2:Gamma");
    /* a removed tenant's id is never given again, the last one's neither: revoked keys
     * still name it */
    CHECK_INT(bd_store_tenant_remove(s, b), BD_OK);
    CHECK_STR(tenants(s), "");
    CHECK(add_tenant(s, "Delta") > b); /* PostgreSQL's sequence may skip a number */
}

TEST(test_a_domain_is_one_tenants_and_scopes_never_overlap)
{
    bd_store *s = fresh();
    int64_t a = add_tenant(s, "Acme"), b = add_tenant(s, "Beta");
    int64_t g0 = generation(s);
    CHECK_INT(bd_store_tenant_domain_add(s, a, BD_SLICE_LIT("acme.example")), BD_OK);
    CHECK_INT(generation(s), g0 + 1);
    CHECK_INT(bd_store_tenant_domain_add(s, a, BD_SLICE_LIT("acme.example")), BD_OK); /* has it */
    CHECK_INT(generation(s), g0 + 1);
    CHECK_INT(bd_store_tenant_domain_add(s, a, BD_SLICE_LIT("mail.acme.example")), BD_OK);
    CHECK_INT(bd_store_tenant_domain_add(s, a, BD_SLICE_LIT("acme.test")), BD_OK);
    /* another tenant: the same domain, one under it, one above it */
    CHECK_INT(bd_store_tenant_domain_add(s, b, BD_SLICE_LIT("acme.example")), BD_ERR_CONFLICT);
    CHECK_INT(bd_store_tenant_domain_add(s, b, BD_SLICE_LIT("x.mail.acme.example")),
              BD_ERR_CONFLICT);
    CHECK_INT(bd_store_tenant_domain_add(s, b, BD_SLICE_LIT("example")), BD_ERR_CONFLICT);
    /* a name that merely ends alike is another domain */
    CHECK_INT(bd_store_tenant_domain_add(s, b, BD_SLICE_LIT("notacme.example")), BD_OK);
    CHECK_INT(bd_store_tenant_domain_add(s, 99, BD_SLICE_LIT("c.example")), BD_ERR_NOT_FOUND);
    CHECK_STR(domains(s, a), "1:acme.example,1:acme.test,1:mail.acme.example");
    CHECK_STR(domains(s, b), "2:notacme.example");
    CHECK_STR(domains(s, 0),
              "1:acme.example,1:acme.test,1:mail.acme.example,2:notacme.example");
    int64_t g1 = generation(s);
    CHECK_INT(bd_store_tenant_domain_remove(s, b, BD_SLICE_LIT("acme.test")), BD_ERR_NOT_FOUND);
    CHECK_INT(bd_store_tenant_domain_remove(s, a, BD_SLICE_LIT("acme.test")), BD_OK);
    CHECK_INT(generation(s), g1 + 1);
    CHECK_STR(domains(s, a), "1:acme.example,1:mail.acme.example");
    /* removing a tenant takes its domains along: another may have them then */
    CHECK_INT(bd_store_tenant_remove(s, a), BD_OK);
    CHECK_STR(domains(s, 0), "2:notacme.example");
    CHECK_INT(bd_store_tenant_domain_add(s, b, BD_SLICE_LIT("acme.example")), BD_OK);
}

static int take_key(void *ctx, const bd_key_row *k)
{
    (void)ctx;
    size_t n = strlen(listed);
    snprintf(listed + n, sizeof listed - n, "%s%lld:%.*s t%lld m%u [%.*s] r%d", n ? "," : "",
             (long long)k->id, (int)k->name.len, k->name.ptr, (long long)k->tenant_id,
             (unsigned)k->types, (int)k->allow_ip.len, k->allow_ip.ptr ? k->allow_ip.ptr : "",
             k->role);
    return 0;
}

static const char *keys(bd_store *s)
{
    listed[0] = '\0';
    CHECK_INT(bd_store_key_list(s, take_key, NULL), BD_OK);
    return listed;
}

TEST(test_keys_keep_their_tenant_types_addresses_and_role)
{
    bd_store *s = fresh();
    int64_t a = add_tenant(s, "Acme");
    add_scoped_key(s, "ops", 0, 0, "", BD_KEY_ROLE_USER);
    add_scoped_key(s, "acme", a, (1u << BD_ID_EMAIL) | BD_KEY_TYPE_CARDS, "192.0.2.0/24,2001:db8::/32",
            BD_KEY_ROLE_USER);
    add_scoped_key(s, "root", 0, 0, "", BD_KEY_ROLE_ADMIN);
    CHECK_STR(keys(s), "1:ops t0 m0 [] r0,2:acme t1 m513 [192.0.2.0/24,2001:db8::/32] r0,"
                       "3:root t0 m0 [] r1");
    bd_key_row k = {.name = BD_SLICE_LIT("x"), .plan = BD_SLICE_LIT("standard"),
                    .tenant_id = 99};
    k.hash[0] = 'x';
    int64_t id = -1;
    CHECK_INT(bd_store_key_add(s, &k, &id), BD_ERR_NOT_FOUND); /* no such tenant */
    k.tenant_id = a;
    k.role = BD_KEY_ROLE_ADMIN;
    CHECK_INT(bd_store_key_add(s, &k, &id), BD_ERR_INVALID); /* an admin key has no tenant */
    CHECK_STR(keys(s), "1:ops t0 m0 [] r0,2:acme t1 m513 [192.0.2.0/24,2001:db8::/32] r0,"
                       "3:root t0 m0 [] r1");
    bd_key_row got;
    CHECK_INT(bd_store_key_get(s, 2, &got), BD_OK);
    CHECK_INT(got.tenant_id, a);
    CHECK_INT(got.types, 513);
    CHECK_INT(got.role, BD_KEY_ROLE_USER);
    /* a tenant holding an active key stays; once the key is revoked it may go */
    CHECK_INT(bd_store_tenant_remove(s, a), BD_ERR_CONFLICT);
    CHECK_STR(tenants(s), "1:Acme");
    CHECK_INT(bd_store_key_revoke(s, 2, NOV26), BD_OK);
    CHECK_INT(bd_store_tenant_remove(s, a), BD_OK);
}

TEST(test_key_change_sets_each_field_flagged_and_moves_the_generation)
{
    bd_store *s = fresh();
    int64_t id = add_scoped_key(s, "k", 0, 0, "", BD_KEY_ROLE_USER);
    int64_t g0 = generation(s);
    bd_key_change c = {.set_types = true, .types = 1u << BD_ID_USERNAME, .set_allow_ip = true,
                       .allow_ip = BD_SLICE_LIT("10.0.0.0/8")};
    CHECK_INT(bd_store_key_change(s, id, &c), BD_OK);
    CHECK_INT(generation(s), g0 + 1);
    CHECK_STR(keys(s), "1:k t0 m8 [10.0.0.0/8] r0");
    bd_key_change d = {.set_name = true, .name = BD_SLICE_LIT("renamed"), .set_plan = true,
                       .plan = BD_SLICE_LIT("enterprise"), .set_rate = true,
                       .rate_per_hour = 10000, .set_quota = true, .quota_per_month = 500,
                       .set_expires = true, .expires_at = NOV26 + 86400, .set_allow_ip = true};
    CHECK_INT(bd_store_key_change(s, id, &d), BD_OK);
    CHECK_STR(keys(s), "1:renamed t0 m8 [] r0"); /* allow_ip set to nothing: anywhere */
    bd_key_row got;
    CHECK_INT(bd_store_key_get(s, id, &got), BD_OK);
    CHECK_INT(got.rate_per_hour, 10000);
    CHECK_INT(got.quota_per_month, 500);
    CHECK_INT(got.expires_at, NOV26 + 86400);
    CHECK_INT(got.types, 8); /* not flagged: as it was */
    bd_key_change none = {0};
    CHECK_INT(bd_store_key_change(s, 99, &none), BD_ERR_NOT_FOUND);
    CHECK_INT(bd_store_key_revoke(s, id, NOV26), BD_OK);
    CHECK_INT(bd_store_key_change(s, id, &c), BD_ERR_NOT_FOUND); /* revoked: left alone */
}

static int take_audit(void *ctx, const bd_audit_row *a)
{
    (void)ctx;
    size_t n = strlen(listed);
    snprintf(listed + n, sizeof listed - n, "%s%lld@%lld k%lld %.*s %.*s %.*s %.*s>%.*s",
             n ? "," : "", (long long)a->id, (long long)a->at, (long long)a->key_id,
             (int)a->address.len, a->address.ptr, (int)a->action.len, a->action.ptr,
             (int)a->target.len, a->target.ptr, a->before.ptr ? (int)a->before.len : 1,
             a->before.ptr ? a->before.ptr : "~", a->after.ptr ? (int)a->after.len : 1,
             a->after.ptr ? a->after.ptr : "~");
    return 0;
}

static const char *audit(bd_store *s, int64_t before, int limit)
{
    listed[0] = '\0';
    CHECK_INT(bd_store_audit_list(s, before, limit, take_audit, NULL), BD_OK);
    return listed;
}

TEST(test_audit_rows_are_appended_and_paged_newest_first)
{
    bd_store *s = fresh();
    CHECK_STR(audit(s, 0, 10), "");
    const char *actions[] = {"tenant.add", "key.create", "tenant.remove"};
    for (int i = 0; i < 3; i++) {
        bd_audit_row a = {.at = NOV26 + i, .key_id = i, .address = BD_SLICE_LIT("breachctl"),
                          .action = bd_slice_from(actions[i]), .target = BD_SLICE_LIT("tenant/1")};
        if (i > 0)
            a.before = BD_SLICE_LIT("{\"name\":\"Acme\"}");
        if (i < 2)
            a.after = BD_SLICE_LIT("{}");
        int64_t id = 0;
        CHECK_INT(bd_store_audit_add(s, &a, &id), BD_OK);
        CHECK_INT(id, i + 1);
    }
    CHECK_STR(audit(s, 0, 2), "3@1795651202 k2 breachctl tenant.remove tenant/1 "
                              "{\"name\":\"Acme\"}>~,2@1795651201 k1 breachctl key.create "
                              "tenant/1 {\"name\":\"Acme\"}>{}");
    CHECK_STR(audit(s, 2, 10), "1@1795651200 k0 breachctl tenant.add tenant/1 ~>{}");
    CHECK_STR(audit(s, 1, 10), "");
    bd_audit_row bad = {.address = BD_SLICE_LIT("x"), .action = BD_SLICE_LIT("y")};
    CHECK_INT(bd_store_audit_add(s, &bad, NULL), BD_ERR_INVALID); /* no target */
    CHECK_INT(bd_store_audit_list(s, 0, 0, take_audit, NULL), BD_ERR_INVALID);
}

static int take_lookup(void *ctx, const bd_lookup_row *l)
{
    (void)ctx;
    size_t n = strlen(listed);
    snprintf(listed + n, sizeof listed - n, "%s%lld:k%lld:t%d:%02x%02x", n ? "," : "",
             (long long)l->at, (long long)l->key_id, l->type, l->hash[0], l->hash[31]);
    return 0;
}

static const char *lookups(bd_store *s, uint8_t first, int limit)
{
    uint8_t h[32];
    memset(h, first, sizeof h);
    listed[0] = '\0';
    CHECK_INT(bd_store_lookup_find(s, h, limit, take_lookup, NULL), BD_OK);
    return listed;
}

TEST(test_lookups_are_found_by_hash_newest_first_and_expire_by_time)
{
    bd_store *s = fresh();
    bd_lookup_row rows[4];
    for (int i = 0; i < 4; i++) {
        rows[i] = (bd_lookup_row){.at = NOV26 + i * 10, .key_id = 7 + i % 2, .type = i};
        memset(rows[i].hash, i == 2 ? 0xbb : 0xaa, sizeof rows[i].hash);
    }
    CHECK_INT(bd_store_lookup_add(s, rows, 4), BD_OK);
    CHECK_STR(lookups(s, 0xaa, 10),
              "1795651230:k8:t3:aaaa,1795651210:k8:t1:aaaa,1795651200:k7:t0:aaaa");
    CHECK_STR(lookups(s, 0xaa, 1), "1795651230:k8:t3:aaaa");
    CHECK_STR(lookups(s, 0xbb, 10), "1795651220:k7:t2:bbbb");
    CHECK_STR(lookups(s, 0xcc, 10), "");
    int64_t gone = -1;
    CHECK_INT(bd_store_lookup_expire(s, NOV26 + 20, &gone), BD_OK);
    CHECK_INT(gone, 2);
    CHECK_STR(lookups(s, 0xaa, 10), "1795651230:k8:t3:aaaa");
    CHECK_STR(lookups(s, 0xbb, 10), "1795651220:k7:t2:bbbb");
}

/* Records with one username in domains of tenant Acme (acme.example and what is under it),
 * of Beta, a look-alike and none at all: a tenant's search sees only its own. */
static void scoped_corpus(bd_store *s, int64_t *acme, int64_t *beta)
{
    breaches(s);
    *acme = add_tenant(s, "Acme");
    *beta = add_tenant(s, "Beta");
    CHECK_INT(bd_store_tenant_domain_add(s, *acme, BD_SLICE_LIT("acme.example")), BD_OK);
    CHECK_INT(bd_store_tenant_domain_add(s, *beta, BD_SLICE_LIT("beta.example")), BD_OK);
    const char *emails[] = {"a1@acme.example",   "b1@beta.example",      "a2@mail.acme.example",
                            "x@notacme.example", "a3@acme.example",      "b2@beta.example",
                            NULL,                "a4@deep.mail.acme.example"};
    const char *when[] = {OLD, OLD, MID, MID, NEW, NEW, NEW, OLD};
    for (int i = 0; i < 8; i++) {
        bd_record_in r = record(when[i], emails[i], i + 1);
        r.user_name = r.user_name_key = BD_SLICE_LIT("shared");
        CHECK(put(s, &r));
    }
}

TEST(test_a_scoped_search_pages_and_counts_only_the_tenants_records)
{
    bd_store *s = fresh();
    int64_t acme, beta;
    scoped_corpus(s, &acme, &beta);
    bd_record_query q = by(BD_FIELD_USERNAME, "shared");
    CHECK_STR(counted(s, q), "~,b2@beta.example,a3@acme.example,x@notacme.example,"
                             "a2@mail.acme.example,a4@deep.mail.acme.example,b1@beta.example,"
                             "a1@acme.example /8");
    q.scope_tenant = acme;
    CHECK_STR(counted(s, q), "a3@acme.example,a2@mail.acme.example,a4@deep.mail.acme.example,"
                             "a1@acme.example /4");
    q.scope_tenant = beta;
    CHECK_STR(counted(s, q), "b2@beta.example,b1@beta.example /2");
    /* pages of one: the count is the scoped one, the keyset walks the scoped records */
    q.scope_tenant = acme;
    q.limit = 1;
    CHECK_STR(counted(s, q), "a3@acme.example /4");
    q.has_after = true;
    q.after_date = seen.last_date;
    q.after_id = seen.last_id;
    CHECK_STR(page(s, q), "a2@mail.acme.example");
    /* with a filter as well */
    bd_record_query f = by(BD_FIELD_USERNAME, "shared");
    f.scope_tenant = acme;
    f.filter[BD_FIELD_EMAIL].mode = BD_FILTER_EQUALS;
    f.filter[BD_FIELD_EMAIL].key = BD_SLICE_LIT("b1@beta.example");
    CHECK_STR(counted(s, f), " /0");
    f.filter[BD_FIELD_EMAIL].key = BD_SLICE_LIT("a1@acme.example");
    CHECK_STR(counted(s, f), "a1@acme.example /1");
    /* a tenant without domains sees nothing */
    int64_t empty = add_tenant(s, "Empty");
    q = by(BD_FIELD_USERNAME, "shared");
    q.scope_tenant = empty;
    CHECK_STR(counted(s, q), " /0");
}

TEST(test_a_scoped_domain_search_is_counted_without_the_domain_shortcut)
{
    bd_store *s = fresh();
    int64_t acme, beta;
    scoped_corpus(s, &acme, &beta);
    bd_record_query q = by(BD_FIELD_EMAIL_DOMAIN, "beta.example");
    CHECK(bd_record_query_whole_domain(&q));
    CHECK_INT(found(s, q), 2);
    q.scope_tenant = acme;
    CHECK(!bd_record_query_whole_domain(&q));
    CHECK_INT(found(s, q), 0); /* not 2: the per-domain count is not the tenant's */
    CHECK_STR(counted(s, q), " /0");
    q.scope_tenant = beta;
    CHECK_INT(found(s, q), 2);
    q = by(BD_FIELD_EMAIL_DOMAIN, "mail.acme.example");
    q.scope_tenant = acme;
    q.limit = 1;
    CHECK_STR(counted(s, q), "a2@mail.acme.example /1");
}

static char ids_seen[256];

static int take_id(void *ctx, size_t key, int64_t id)
{
    (void)ctx;
    size_t n = strlen(ids_seen);
    snprintf(ids_seen + n, sizeof ids_seen - n, "%s%zu:%lld", n ? "," : "", key, (long long)id);
    return 0;
}

TEST(test_scoped_bulk_lookups_keep_only_the_tenants_records)
{
    bd_store *s = fresh();
    int64_t acme, beta;
    scoped_corpus(s, &acme, &beta);
    bd_slice k[3] = {BD_SLICE_LIT("shared"), BD_SLICE_LIT("nobody"), BD_SLICE_LIT("shared")};
    /* record ids: the puts' order (1..8); search order is newest breach first, id down */
    CHECK_INT(bd_store_read_begin(s), BD_OK);
    ids_seen[0] = '\0';
    CHECK_INT(bd_store_record_ids(s, BD_FIELD_USERNAME, k, 3, 3, take_id, NULL, 0), BD_OK);
    CHECK_STR(ids_seen, "0:7,0:6,0:5,2:7,2:6,2:5");
    ids_seen[0] = '\0';
    CHECK_INT(bd_store_record_ids(s, BD_FIELD_USERNAME, k, 3, 3, take_id, NULL, acme), BD_OK);
    CHECK_STR(ids_seen, "0:5,0:3,0:8,2:5,2:3,2:8");
    ids_seen[0] = '\0';
    CHECK_INT(bd_store_record_ids(s, BD_FIELD_USERNAME, k, 3, 5, take_id, NULL, beta), BD_OK);
    CHECK_STR(ids_seen, "0:6,0:2,2:6,2:2");
    bd_store_read_end(s);
}

static int take_kr_domain(void *ctx, int64_t tenant, bd_slice domain)
{
    (void)ctx;
    add_text("%s%lld:%.*s", (long long)tenant, domain);
    return 0;
}

TEST(test_the_keyring_holds_each_keys_scope_and_the_tenants_domains)
{
    bd_store *s = fresh();
    int64_t a = add_tenant(s, "Acme"), b = add_tenant(s, "Beta");
    CHECK_INT(bd_store_tenant_domain_add(s, a, BD_SLICE_LIT("acme.example")), BD_OK);
    CHECK_INT(bd_store_tenant_domain_add(s, a, BD_SLICE_LIT("acme.test")), BD_OK);
    CHECK_INT(bd_store_tenant_domain_add(s, b, BD_SLICE_LIT("beta.example")), BD_OK);
    add_scoped_key(s, "ops", 0, 0, "", BD_KEY_ROLE_USER);
    add_scoped_key(s, "acme", a, 0, "192.0.2.0/24,2001:db8::/32", BD_KEY_ROLE_USER);
    add_scoped_key(s, "beta", b, (1u << BD_ID_USERNAME), "", BD_KEY_ROLE_USER);
    add_scoped_key(s, "root", 0, 0, "", BD_KEY_ROLE_ADMIN);
    bd_keyring *kr = bd_keyring_new();
    CHECK(kr != NULL);
    CHECK_INT(bd_keyring_refresh(kr, s), BD_OK);
    bd_key_info info;
    CHECK_INT(bd_keyring_lookup(kr, BD_SLICE_LIT("ops"), NOV26, &info), BD_KEY_VALID);
    CHECK_INT(info.tenant_id, 0);
    CHECK_INT(info.types, BD_KEY_TYPES_ALL);
    CHECK_INT(info.n_allow, 0);
    CHECK_INT(bd_keyring_lookup(kr, BD_SLICE_LIT("acme"), NOV26, &info), BD_KEY_VALID);
    CHECK_INT(info.tenant_id, a);
    CHECK_INT(info.types, BD_KEY_TYPES_TENANT_DEFAULT);
    CHECK_INT(info.role, BD_KEY_ROLE_USER);
    CHECK_INT(info.n_allow, 2);
    char cidr[64];
    bd_cidr_format(&info.allow[0], cidr);
    CHECK_STR(cidr, "192.0.2.0/24");
    bd_cidr_format(&info.allow[1], cidr);
    CHECK_STR(cidr, "2001:db8::/32");
    CHECK_INT(bd_keyring_lookup(kr, BD_SLICE_LIT("beta"), NOV26, &info), BD_KEY_VALID);
    CHECK_INT(info.types, 1u << BD_ID_USERNAME);
    CHECK_INT(bd_keyring_lookup(kr, BD_SLICE_LIT("root"), NOV26, &info), BD_KEY_VALID);
    CHECK_INT(info.role, BD_KEY_ROLE_ADMIN);
    CHECK(bd_keyring_domain_in_scope(kr, a, BD_SLICE_LIT("acme.example")));
    CHECK(bd_keyring_domain_in_scope(kr, a, BD_SLICE_LIT("mail.acme.example")));
    CHECK(bd_keyring_domain_in_scope(kr, a, BD_SLICE_LIT("a.b.acme.test")));
    CHECK(!bd_keyring_domain_in_scope(kr, a, BD_SLICE_LIT("notacme.example")));
    CHECK(!bd_keyring_domain_in_scope(kr, a, BD_SLICE_LIT("example")));
    CHECK(!bd_keyring_domain_in_scope(kr, a, BD_SLICE_LIT("beta.example")));
    CHECK(!bd_keyring_domain_in_scope(kr, b, BD_SLICE_LIT("acme.example")));
    CHECK(!bd_keyring_domain_in_scope(kr, 0, BD_SLICE_LIT("acme.example")));
    CHECK(!bd_keyring_domain_in_scope(kr, 99, BD_SLICE_LIT("acme.example")));
    listed[0] = '\0';
    bd_keyring_tenant_domains(kr, a, take_kr_domain, NULL);
    CHECK_STR(listed, "1:acme.example,1:acme.test");
    listed[0] = '\0';
    bd_keyring_tenant_domains(kr, 0, take_kr_domain, NULL);
    CHECK_STR(listed, "");
    /* a domain change reloads the domains with the keys */
    CHECK_INT(bd_store_tenant_domain_remove(s, a, BD_SLICE_LIT("acme.test")), BD_OK);
    CHECK_INT(bd_store_tenant_domain_add(s, b, BD_SLICE_LIT("acme.test")), BD_OK);
    CHECK_INT(bd_keyring_refresh(kr, s), BD_OK);
    CHECK(!bd_keyring_domain_in_scope(kr, a, BD_SLICE_LIT("x.acme.test")));
    CHECK(bd_keyring_domain_in_scope(kr, b, BD_SLICE_LIT("x.acme.test")));
    listed[0] = '\0';
    bd_keyring_tenant_domains(kr, b, take_kr_domain, NULL);
    CHECK_STR(listed, "2:acme.test,2:beta.example");
    bd_keyring_free(kr);
}

static void suite(void)
{
    RUN_CONTRACT(test_tenants_are_added_listed_renamed_and_removed);
    RUN_CONTRACT(test_a_domain_is_one_tenants_and_scopes_never_overlap);
    RUN_CONTRACT(test_keys_keep_their_tenant_types_addresses_and_role);
    RUN_CONTRACT(test_key_change_sets_each_field_flagged_and_moves_the_generation);
    RUN_CONTRACT(test_audit_rows_are_appended_and_paged_newest_first);
    RUN_CONTRACT(test_lookups_are_found_by_hash_newest_first_and_expire_by_time);
    RUN_CONTRACT(test_a_scoped_search_pages_and_counts_only_the_tenants_records);
    RUN_CONTRACT(test_a_scoped_domain_search_is_counted_without_the_domain_shortcut);
    RUN_CONTRACT(test_scoped_bulk_lookups_keep_only_the_tenants_records);
    RUN_CONTRACT(test_the_keyring_holds_each_keys_scope_and_the_tenants_domains);
}

int main(void)
{
    return fx_main(suite);
}
