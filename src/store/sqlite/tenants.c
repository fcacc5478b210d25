/* The SQLite backend's tenants, their domains, and key changes (store.h "tenants"). Every
 * change runs in a write transaction (the open one, or one of its own) that also moves the
 * key generation: servers reload keys and domains together. */
#include <string.h>

#include "store/sqlite/sqlite_impl.h"
#include "store/sqlite/statements.h"

/* A transaction for one change: the open one, or one of its own (own_end commits it, or
 * rolls it back on failure). */
static bool own_begin(sqlite_store *s, bd_result *r)
{
    bool own = sqlite3_get_autocommit(s->db) != 0;
    *r = own ? sq_run_fixed(s, Q_BEGIN) : BD_OK;
    return own;
}

static bd_result own_end(sqlite_store *s, bool own, bd_result r)
{
    if (!own)
        return r;
    if (r == BD_OK)
        r = sq_run_fixed(s, Q_COMMIT);
    if (r != BD_OK && !sqlite3_get_autocommit(s->db))
        sq_run_fixed(s, Q_ROLLBACK);
    return r;
}

/* Steps st (no rows back): BD_ERR_NOT_FOUND when it changed none, a clash of a unique
 * column BD_ERR_CONFLICT. */
static bd_result step_change(sqlite_store *s, sqlite3_stmt *st)
{
    bd_result r = sq_step_done(s, st);
    if (r == BD_ERR_EXISTS)
        return BD_ERR_CONFLICT;
    if (r == BD_OK && sqlite3_changes(s->db) == 0)
        return BD_ERR_NOT_FOUND;
    return r;
}

bd_result sq_key_change(bd_store *base, int64_t id, const bd_key_change *c)
{
    sqlite_store *s = S(base);
    bd_result r;
    bool own = own_begin(s, &r);
    if (r != BD_OK)
        return r;
    sqlite3_stmt *st = sq_fixed(s, Q_KEY_CHANGE);
    if (!st)
        return own_end(s, own, BD_ERR_STORE);
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int(st, 2, c->set_name);
    sq_bind_slice(st, 3, c->set_name && !c->name.ptr ? BD_SLICE_LIT("") : c->name);
    sqlite3_bind_int(st, 4, c->set_plan);
    sq_bind_slice(st, 5, c->set_plan && !c->plan.ptr ? BD_SLICE_LIT("") : c->plan);
    sqlite3_bind_int(st, 6, c->set_rate);
    sqlite3_bind_int64(st, 7, c->rate_per_hour);
    sqlite3_bind_int(st, 8, c->set_quota);
    sqlite3_bind_int64(st, 9, c->quota_per_month);
    sqlite3_bind_int(st, 10, c->set_types);
    sqlite3_bind_int64(st, 11, (int64_t)c->types);
    sqlite3_bind_int(st, 12, c->set_allow_ip);
    sq_bind_slice(st, 13, c->set_allow_ip && !c->allow_ip.ptr ? BD_SLICE_LIT("") : c->allow_ip);
    sqlite3_bind_int(st, 14, c->set_expires);
    sqlite3_bind_int64(st, 15, c->expires_at);
    r = step_change(s, st);
    if (r == BD_OK)
        r = sq_run_fixed(s, Q_KEY_BUMP);
    return own_end(s, own, r);
}

bd_result sq_tenant_add(bd_store *base, bd_slice name, int64_t now, int64_t *id)
{
    sqlite_store *s = S(base);
    bd_result r;
    bool own = own_begin(s, &r);
    if (r != BD_OK)
        return r;
    sqlite3_stmt *st = sq_fixed(s, Q_TENANT_ADD);
    if (!st)
        return own_end(s, own, BD_ERR_STORE);
    sq_bind_slice(st, 1, name);
    sqlite3_bind_int64(st, 2, now);
    r = step_change(s, st);
    if (r == BD_ERR_NOT_FOUND)
        r = BD_ERR_CONFLICT; /* nothing went in: the name is taken */
    if (r == BD_OK) {
        *id = sqlite3_last_insert_rowid(s->db);
        r = sq_run_fixed(s, Q_KEY_BUMP);
    }
    return own_end(s, own, r);
}

static void read_tenant(sqlite3_stmt *st, bd_tenant_row *t)
{
    t->id = sqlite3_column_int64(st, 0);
    t->name = sq_col_slice(st, 1);
    t->created_at = sqlite3_column_int64(st, 2);
}

bd_result sq_tenant_list(bd_store *base, bd_tenant_cb cb, void *ctx)
{
    sqlite3_stmt *st = sq_fixed(S(base), Q_TENANT_LIST);
    if (!st)
        return BD_ERR_STORE;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        bd_tenant_row t;
        read_tenant(st, &t);
        if (cb(ctx, &t))
            break;
    }
    bd_result r = rc == SQLITE_ROW || rc == SQLITE_DONE ? BD_OK : sq_map_rc(rc);
    sq_done(st);
    return r;
}

bd_result sq_tenant_get(bd_store *base, int64_t id, bd_tenant_row *out)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st = sq_fixed(s, Q_TENANT_GET);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_int64(st, 1, id);
    int rc = sqlite3_step(st);
    bd_result r = rc == SQLITE_ROW ? BD_OK : rc == SQLITE_DONE ? BD_ERR_NOT_FOUND : sq_map_rc(rc);
    if (rc == SQLITE_ROW) {
        read_tenant(st, out);
        /* the name outlives the statement in the connection's scratch, until its next use */
        bd_buf_reset(&s->sql);
        r = bd_buf_append_slice(&s->sql, out->name);
        out->name = (bd_slice){s->sql.data ? (const char *)s->sql.data : "", s->sql.len};
    }
    sq_done(st);
    return r;
}

/* Whether tenant id exists: BD_OK, or BD_ERR_NOT_FOUND. */
static bd_result tenant_exists(sqlite_store *s, int64_t id)
{
    sqlite3_stmt *st = sq_fixed(s, Q_TENANT_GET);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_int64(st, 1, id);
    int rc = sqlite3_step(st);
    bd_result r = rc == SQLITE_ROW ? BD_OK : rc == SQLITE_DONE ? BD_ERR_NOT_FOUND : sq_map_rc(rc);
    sq_done(st);
    return r;
}

bd_result sq_tenant_rename(bd_store *base, int64_t id, bd_slice name)
{
    sqlite_store *s = S(base);
    bd_result r;
    bool own = own_begin(s, &r);
    if (r != BD_OK)
        return r;
    r = tenant_exists(s, id);
    sqlite3_stmt *st = r == BD_OK ? sq_fixed(s, Q_TENANT_RENAME) : NULL;
    if (r == BD_OK && !st)
        r = BD_ERR_STORE;
    if (r != BD_OK)
        return own_end(s, own, r);
    sqlite3_bind_int64(st, 1, id);
    sq_bind_slice(st, 2, name);
    r = step_change(s, st);
    if (r == BD_ERR_NOT_FOUND)
        r = BD_ERR_CONFLICT; /* it exists: the update was ignored for the name's clash */
    if (r == BD_OK)
        r = sq_run_fixed(s, Q_KEY_BUMP);
    return own_end(s, own, r);
}

bd_result sq_tenant_remove(bd_store *base, int64_t id)
{
    sqlite_store *s = S(base);
    bd_result r;
    bool own = own_begin(s, &r);
    if (r != BD_OK)
        return r;
    sqlite3_stmt *st = sq_fixed(s, Q_TENANT_KEYS);
    int64_t keys = 0;
    if (!st)
        r = BD_ERR_STORE;
    if (r == BD_OK) {
        sqlite3_bind_int64(st, 1, id);
        r = sq_step_count(st, &keys);
    }
    if (r == BD_OK && keys > 0)
        r = BD_ERR_CONFLICT;
    if (r == BD_OK) {
        st = sq_fixed(s, Q_TENANT_REMOVE);
        if (!st)
            r = BD_ERR_STORE;
        else {
            sqlite3_bind_int64(st, 1, id);
            r = step_change(s, st);
        }
    }
    if (r == BD_OK) {
        st = sq_fixed(s, Q_TENANT_DOMAINS_DROP);
        if (!st)
            r = BD_ERR_STORE;
        else {
            sqlite3_bind_int64(st, 1, id);
            r = sq_step_done(s, st);
        }
    }
    if (r == BD_OK)
        r = sq_run_fixed(s, Q_KEY_BUMP);
    return own_end(s, own, r);
}

bd_result sq_tenant_domain_add(bd_store *base, int64_t id, bd_slice domain)
{
    sqlite_store *s = S(base);
    bd_result r;
    bool own = own_begin(s, &r);
    if (r != BD_OK)
        return r;
    r = tenant_exists(s, id);
    bool have = false;
    if (r == BD_OK) {
        /* another tenant's domain equal to it, above it or under it refuses it; the tenant's
         * own may nest */
        sqlite3_stmt *st = sq_fixed(s, Q_DOMAIN_CLASH);
        if (!st)
            r = BD_ERR_STORE;
        else {
            sq_bind_slice(st, 1, domain);
            int rc;
            while (r == BD_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
                if (sqlite3_column_int64(st, 0) != id)
                    r = BD_ERR_CONFLICT;
                else if (sqlite3_column_int(st, 1))
                    have = true;
            }
            if (r == BD_OK && rc != SQLITE_DONE)
                r = sq_map_rc(rc);
            sq_done(st);
        }
    }
    if (r == BD_OK && !have) {
        sqlite3_stmt *st = sq_fixed(s, Q_DOMAIN_ADD);
        if (!st)
            r = BD_ERR_STORE;
        else {
            sq_bind_slice(st, 1, domain);
            sqlite3_bind_int64(st, 2, id);
            r = step_change(s, st);
        }
        if (r == BD_OK)
            r = sq_run_fixed(s, Q_KEY_BUMP);
    }
    return own_end(s, own, r);
}

bd_result sq_tenant_domain_remove(bd_store *base, int64_t id, bd_slice domain)
{
    sqlite_store *s = S(base);
    bd_result r;
    bool own = own_begin(s, &r);
    if (r != BD_OK)
        return r;
    sqlite3_stmt *st = sq_fixed(s, Q_DOMAIN_REMOVE);
    if (!st)
        return own_end(s, own, BD_ERR_STORE);
    sq_bind_slice(st, 1, domain);
    sqlite3_bind_int64(st, 2, id);
    r = step_change(s, st);
    if (r == BD_OK)
        r = sq_run_fixed(s, Q_KEY_BUMP);
    return own_end(s, own, r);
}

bd_result sq_tenant_domains(bd_store *base, int64_t id, bd_tenant_domain_cb cb, void *ctx)
{
    sqlite3_stmt *st = sq_fixed(S(base), id ? Q_DOMAINS_OF : Q_DOMAINS_ALL);
    if (!st)
        return BD_ERR_STORE;
    if (id)
        sqlite3_bind_int64(st, 1, id);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (cb(ctx, sqlite3_column_int64(st, 0), sq_col_slice(st, 1)))
            break;
    }
    bd_result r = rc == SQLITE_ROW || rc == SQLITE_DONE ? BD_OK : sq_map_rc(rc);
    sq_done(st);
    return r;
}
