/* Tenants, their domains, and key changes on PostgreSQL (store.h "tenants"). Every change
 * runs in a transaction (the caller's or one of its own) that also moves the key generation,
 * so servers reload keys and domains together when it lands. A domain's check against the
 * other tenants' and its insert are one transaction holding the domains table's lock against
 * other writers of it: two tenants cannot add overlapping domains at once. */
#include <string.h>

#include "store/pg/pg_impl.h"

static const pg_stmt KEY_BUMP_T = {PG_Q_KEY_BUMP,
                                   "UPDATE meta SET value = (value::bigint + 1)::text "
                                   "WHERE key = 'key_generation'"};

/* each field changes when its flag ($2, $4, ...) is 1 */
static const pg_stmt KEY_CHANGE = {
    PG_Q_KEY_CHANGE,
    "UPDATE api_keys SET "
    "name = CASE WHEN $2::int = 1 THEN $3 ELSE name END, "
    "plan = CASE WHEN $4::int = 1 THEN $5 ELSE plan END, "
    "rate_per_hour = CASE WHEN $6::int = 1 THEN $7::bigint ELSE rate_per_hour END, "
    "quota_per_month = CASE WHEN $8::int = 1 THEN $9::bigint ELSE quota_per_month END, "
    "types = CASE WHEN $10::int = 1 THEN $11::bigint ELSE types END, "
    "allow_ip = CASE WHEN $12::int = 1 THEN $13 ELSE allow_ip END, "
    "expires_at = CASE WHEN $14::int = 1 THEN $15::bigint ELSE expires_at END "
    "WHERE id = $1 AND revoked_at = 0"};
/* no row back when the name is taken */
static const pg_stmt TENANT_ADD = {PG_Q_TENANT_ADD,
                                   "INSERT INTO tenants(name, created_at) VALUES ($1, $2) "
                                   "ON CONFLICT (name) DO NOTHING RETURNING id"};
static const pg_stmt TENANT_LIST = {PG_Q_TENANT_LIST,
                                    "SELECT id, name, created_at FROM tenants ORDER BY id"};
static const pg_stmt TENANT_GET = {PG_Q_TENANT_GET,
                                   "SELECT id, name, created_at FROM tenants WHERE id = $1"};
/* the tenant's row (whether it exists) and whether another tenant holds the name */
static const pg_stmt TENANT_RENAME = {
    PG_Q_TENANT_RENAME,
    "WITH clash AS (SELECT 1 FROM tenants WHERE name = $2 AND id <> $1) "
    "UPDATE tenants SET name = $2 WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM clash) "
    "RETURNING id"};
/* removes the tenant and its domains unless an active key belongs to it: the first column
 * says whether it existed, the second how many active keys it has */
static const pg_stmt TENANT_REMOVE = {
    PG_Q_TENANT_REMOVE,
    "WITH keys AS (SELECT count(*) AS n FROM api_keys WHERE tenant_id = $1 AND revoked_at = 0), "
    "gone AS (DELETE FROM tenants WHERE id = $1 AND (SELECT n FROM keys) = 0 RETURNING id), "
    "domains AS (DELETE FROM tenant_domains WHERE tenant_id IN (SELECT id FROM gone)) "
    "SELECT EXISTS (SELECT 1 FROM tenants WHERE id = $1), (SELECT n FROM keys)"};
/* the domains equal to $1, a parent of it, or under it: whose they are, and whether equal */
static const pg_stmt DOMAIN_CLASH = {
    PG_Q_DOMAIN_CLASH,
    "SELECT tenant_id, domain = $1 FROM tenant_domains WHERE domain = $1 "
    "OR right($1, length(domain) + 1) = '.' || domain "
    "OR right(domain, length($1) + 1) = '.' || $1"};
static const pg_stmt DOMAIN_ADD = {PG_Q_DOMAIN_ADD,
                                   "INSERT INTO tenant_domains(domain, tenant_id) VALUES ($1, $2)"};
static const pg_stmt DOMAIN_REMOVE = {
    PG_Q_DOMAIN_REMOVE, "DELETE FROM tenant_domains WHERE domain = $1 AND tenant_id = $2"};
static const pg_stmt DOMAINS_OF = {PG_Q_DOMAINS_OF,
                                   "SELECT tenant_id, domain FROM tenant_domains "
                                   "WHERE tenant_id = $1 ORDER BY domain"};
static const pg_stmt DOMAINS_ALL = {
    PG_Q_DOMAINS_ALL, "SELECT tenant_id, domain FROM tenant_domains ORDER BY tenant_id, domain"};

static bd_slice or_empty(bool set, bd_slice v)
{
    return set && !v.ptr ? BD_SLICE_LIT("") : v;
}

/* Runs stmt in the open transaction: *rows gets the rows it returned or changed. */
static bd_result run_rows(pg_store *p, const pg_stmt *stmt, pg_params *pp, int64_t *rows)
{
    PGresult *res;
    bd_result r = pg_run(p, stmt, pp, &res);
    if (r != BD_OK)
        return r;
    *rows = PQntuples(res) > 0 ? PQntuples(res) : pg_changes(res);
    PQclear(res);
    return BD_OK;
}

bd_result pg_key_change(bd_store *s, int64_t id, const bd_key_change *c)
{
    pg_store *p = pg_of(s);
    bool own;
    bd_result r = pg_write_begin(p, &own);
    if (r != BD_OK)
        return r;
    pg_params pp = {0};
    pg_param_int(&pp, id);
    pg_param_int(&pp, c->set_name);
    pg_param_text(&pp, or_empty(c->set_name, c->name));
    pg_param_int(&pp, c->set_plan);
    pg_param_text(&pp, or_empty(c->set_plan, c->plan));
    pg_param_int(&pp, c->set_rate);
    pg_param_int(&pp, c->rate_per_hour);
    pg_param_int(&pp, c->set_quota);
    pg_param_int(&pp, c->quota_per_month);
    pg_param_int(&pp, c->set_types);
    pg_param_int(&pp, (int64_t)c->types);
    pg_param_int(&pp, c->set_allow_ip);
    pg_param_text(&pp, or_empty(c->set_allow_ip, c->allow_ip));
    pg_param_int(&pp, c->set_expires);
    pg_param_int(&pp, c->expires_at);
    int64_t n = 0;
    r = run_rows(p, &KEY_CHANGE, &pp, &n);
    if (r == BD_OK && n == 0)
        r = BD_ERR_NOT_FOUND;
    if (r == BD_OK)
        r = pg_run(p, &KEY_BUMP_T, NULL, NULL);
    return pg_write_end(p, own, r);
}

bd_result pg_tenant_add(bd_store *s, bd_slice name, int64_t now, int64_t *id)
{
    pg_store *p = pg_of(s);
    bool own;
    bd_result r = pg_write_begin(p, &own);
    if (r != BD_OK)
        return r;
    pg_params pp = {0};
    pg_param_text(&pp, name);
    pg_param_int(&pp, now);
    PGresult *res;
    r = pg_run(p, &TENANT_ADD, &pp, &res);
    if (r == BD_OK) {
        if (PQntuples(res) == 1)
            *id = pg_int(res, 0, 0);
        else
            r = BD_ERR_CONFLICT;
        PQclear(res);
    }
    if (r == BD_OK)
        r = pg_run(p, &KEY_BUMP_T, NULL, NULL);
    return pg_write_end(p, own, r);
}

bd_result pg_tenant_list(bd_store *s, bd_tenant_cb cb, void *ctx)
{
    PGresult *res;
    bd_result r = pg_run(pg_of(s), &TENANT_LIST, NULL, &res);
    if (r != BD_OK)
        return r;
    for (int i = 0, rows = PQntuples(res); i < rows; i++) {
        bd_tenant_row t = {pg_int(res, i, 0), pg_slice(res, i, 1), pg_int(res, i, 2)};
        if (cb(ctx, &t))
            break;
    }
    PQclear(res);
    return BD_OK;
}

bd_result pg_tenant_get(bd_store *s, int64_t id, bd_tenant_row *out)
{
    pg_store *p = pg_of(s);
    pg_params pp = {0};
    pg_param_int(&pp, id);
    PGresult *res;
    bd_result r = pg_run(p, &TENANT_GET, &pp, &res);
    if (r != BD_OK)
        return r;
    if (PQntuples(res) == 1) {
        out->id = pg_int(res, 0, 0);
        out->created_at = pg_int(res, 0, 2);
        /* the name outlives the result in the connection's scratch, until its next use */
        bd_buf_reset(&p->sql);
        r = bd_buf_append_slice(&p->sql, pg_slice(res, 0, 1));
        out->name = (bd_slice){p->sql.data ? p->sql.data : "", p->sql.len};
    } else {
        r = BD_ERR_NOT_FOUND;
    }
    PQclear(res);
    return r;
}

/* Whether tenant id exists: BD_OK or BD_ERR_NOT_FOUND. */
static bd_result tenant_exists(pg_store *p, int64_t id)
{
    pg_params pp = {0};
    pg_param_int(&pp, id);
    int64_t n = 0;
    bd_result r = run_rows(p, &TENANT_GET, &pp, &n);
    return r == BD_OK && n == 0 ? BD_ERR_NOT_FOUND : r;
}

bd_result pg_tenant_rename(bd_store *s, int64_t id, bd_slice name)
{
    pg_store *p = pg_of(s);
    bool own;
    bd_result r = pg_write_begin(p, &own);
    if (r != BD_OK)
        return r;
    r = tenant_exists(p, id);
    if (r == BD_OK) {
        pg_params pp = {0};
        pg_param_int(&pp, id);
        pg_param_text(&pp, name);
        int64_t n = 0;
        r = run_rows(p, &TENANT_RENAME, &pp, &n);
        if (r == BD_ERR_EXISTS || (r == BD_OK && n == 0))
            r = BD_ERR_CONFLICT; /* it exists: another tenant holds the name */
    }
    if (r == BD_OK)
        r = pg_run(p, &KEY_BUMP_T, NULL, NULL);
    return pg_write_end(p, own, r);
}

bd_result pg_tenant_remove(bd_store *s, int64_t id)
{
    pg_store *p = pg_of(s);
    bool own;
    bd_result r = pg_write_begin(p, &own);
    if (r != BD_OK)
        return r;
    pg_params pp = {0};
    pg_param_int(&pp, id);
    PGresult *res;
    r = pg_run(p, &TENANT_REMOVE, &pp, &res);
    if (r == BD_OK) {
        /* the snapshot of the statement's start: "existed" and its active keys */
        bool existed = PQntuples(res) == 1 && pg_slice(res, 0, 0).ptr &&
                       pg_slice(res, 0, 0).ptr[0] == 't';
        int64_t keys = PQntuples(res) == 1 ? pg_int(res, 0, 1) : 0;
        r = !existed ? BD_ERR_NOT_FOUND : keys > 0 ? BD_ERR_CONFLICT : BD_OK;
        PQclear(res);
    }
    if (r == BD_OK)
        r = pg_run(p, &KEY_BUMP_T, NULL, NULL);
    return pg_write_end(p, own, r);
}

bd_result pg_tenant_domain_add(bd_store *s, int64_t id, bd_slice domain)
{
    pg_store *p = pg_of(s);
    bool own;
    bd_result r = pg_write_begin(p, &own);
    if (r != BD_OK)
        return r;
    /* readers go on; a second writer of domains waits for this transaction's end */
    r = pg_exec(p, "LOCK TABLE tenant_domains IN SHARE ROW EXCLUSIVE MODE");
    if (r == BD_OK)
        r = tenant_exists(p, id);
    bool have = false;
    if (r == BD_OK) {
        pg_params pp = {0};
        pg_param_text(&pp, domain);
        PGresult *res;
        r = pg_run(p, &DOMAIN_CLASH, &pp, &res);
        if (r == BD_OK) {
            for (int i = 0, rows = PQntuples(res); i < rows; i++) {
                if (pg_int(res, i, 0) != id)
                    r = BD_ERR_CONFLICT; /* another tenant's: equal, above or under */
                else if (pg_slice(res, i, 1).ptr && pg_slice(res, i, 1).ptr[0] == 't')
                    have = true;
            }
            PQclear(res);
        }
    }
    if (r == BD_OK && !have) {
        pg_params pp = {0};
        pg_param_text(&pp, domain);
        pg_param_int(&pp, id);
        r = pg_run(p, &DOMAIN_ADD, &pp, NULL);
        if (r == BD_ERR_EXISTS)
            r = BD_ERR_CONFLICT;
        if (r == BD_OK)
            r = pg_run(p, &KEY_BUMP_T, NULL, NULL);
    }
    return pg_write_end(p, own, r);
}

bd_result pg_tenant_domain_remove(bd_store *s, int64_t id, bd_slice domain)
{
    pg_store *p = pg_of(s);
    bool own;
    bd_result r = pg_write_begin(p, &own);
    if (r != BD_OK)
        return r;
    pg_params pp = {0};
    pg_param_text(&pp, domain);
    pg_param_int(&pp, id);
    int64_t n = 0;
    r = run_rows(p, &DOMAIN_REMOVE, &pp, &n);
    if (r == BD_OK && n == 0)
        r = BD_ERR_NOT_FOUND;
    if (r == BD_OK)
        r = pg_run(p, &KEY_BUMP_T, NULL, NULL);
    return pg_write_end(p, own, r);
}

bd_result pg_tenant_domains(bd_store *s, int64_t id, bd_tenant_domain_cb cb, void *ctx)
{
    pg_params pp = {0};
    if (id)
        pg_param_int(&pp, id);
    PGresult *res;
    bd_result r = pg_run(pg_of(s), id ? &DOMAINS_OF : &DOMAINS_ALL, id ? &pp : NULL, &res);
    if (r != BD_OK)
        return r;
    for (int i = 0, rows = PQntuples(res); i < rows; i++) {
        if (cb(ctx, pg_int(res, i, 0), pg_slice(res, i, 1)))
            break;
    }
    PQclear(res);
    return BD_OK;
}
