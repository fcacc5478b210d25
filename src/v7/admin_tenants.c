/* The admin API's tenants: GET and POST {base}/admin/tenants, GET, PATCH and DELETE
 * {base}/admin/tenants/{id}, GET {base}/admin/tenants/{id}/usage. A tenant is shown with its
 * domains; each write leaves an audit row (tenant.create, tenant.update, tenant.delete) with
 * the tenant before and after. */
#include <stdlib.h>
#include <string.h>

#include "v7/admin.h"
#include "v7/handlers.h"
#include "auth/usage.h"
#include "http/server_impl.h"
#include "ingest/normalize.h"

/* Tenants and their domains as read from the store (their texts in one buffer). */
typedef struct {
    int64_t id, created_at;
    size_t name_at, name_len;
} trow;
typedef struct {
    int64_t tenant;
    size_t at, len;
} drow;
typedef struct {
    trow *t;
    size_t nt, ct;
    drow *d;
    size_t nd, cd;
    bd_buf text;
    bd_result err;
} tenants;

static void tenants_init(tenants *ts)
{
    memset(ts, 0, sizeof *ts);
    bd_buf_init(&ts->text, 64u << 20);
}

static void tenants_free(tenants *ts)
{
    free(ts->t);
    free(ts->d);
    bd_buf_free(&ts->text);
}

static bool grow(void **p, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return true;
    size_t c = *cap ? *cap * 2 : 16;
    void *q = realloc(*p, c * size);
    if (!q)
        return false;
    *p = q;
    *cap = c;
    return true;
}

static int take_tenant(void *ctx, const bd_tenant_row *t)
{
    tenants *ts = ctx;
    if (!grow((void **)&ts->t, &ts->ct, ts->nt, sizeof *ts->t)) {
        ts->err = BD_ERR_NOMEM;
        return 1;
    }
    trow *r = &ts->t[ts->nt++];
    r->id = t->id;
    r->created_at = t->created_at;
    r->name_at = ts->text.len;
    r->name_len = t->name.len;
    if (bd_buf_append_slice(&ts->text, t->name) != BD_OK) {
        ts->err = BD_ERR_NOMEM;
        return 1;
    }
    return 0;
}

static int take_domain(void *ctx, int64_t tenant_id, bd_slice domain)
{
    tenants *ts = ctx;
    if (!grow((void **)&ts->d, &ts->cd, ts->nd, sizeof *ts->d)) {
        ts->err = BD_ERR_NOMEM;
        return 1;
    }
    drow *r = &ts->d[ts->nd++];
    r->tenant = tenant_id;
    r->at = ts->text.len;
    r->len = domain.len;
    if (bd_buf_append_slice(&ts->text, domain) != BD_OK) {
        ts->err = BD_ERR_NOMEM;
        return 1;
    }
    return 0;
}

/* Every tenant (id 0) or tenant id, with its domains. */
static bd_result load(bd_store *s, int64_t id, tenants *ts)
{
    bd_result r;
    if (id) {
        bd_tenant_row t;
        r = bd_store_tenant_get(s, id, &t);
        if (r == BD_OK)
            take_tenant(ts, &t);
    } else {
        r = bd_store_tenant_list(s, take_tenant, ts);
    }
    if (r == BD_OK && ts->err == BD_OK)
        r = bd_store_tenant_domains(s, id, take_domain, ts);
    return r != BD_OK ? r : ts->err;
}

static bd_slice text_at(const tenants *ts, size_t at, size_t len)
{
    return (bd_slice){ts->text.data ? ts->text.data + at : "", len};
}

static void write_tenant(bd_json *w, const tenants *ts, size_t i)
{
    const trow *t = &ts->t[i];
    bd_json_object_begin(w);
    BD_JSON_KEY(w, "id");
    bd_json_int(w, t->id);
    BD_JSON_KEY(w, "name");
    bd_json_string(w, text_at(ts, t->name_at, t->name_len));
    BD_JSON_KEY(w, "domains");
    bd_json_array_begin(w);
    for (size_t d = 0; d < ts->nd; d++)
        if (ts->d[d].tenant == t->id)
            bd_json_string(w, text_at(ts, ts->d[d].at, ts->d[d].len));
    bd_json_array_end(w);
    bd_json_utc_member(w, "created_at", t->created_at);
    bd_json_object_end(w);
}

/* Tenant id as a JSON text (for the audit trail and the reply); BD_ERR_NOT_FOUND. */
static bd_result snapshot(bd_store *s, int64_t id, bd_buf *out)
{
    tenants ts;
    tenants_init(&ts);
    bd_json w;
    bd_admin_json_start(&w, out);
    bd_result r = load(s, id, &ts);
    if (r == BD_OK && ts.nt == 1)
        write_tenant(&w, &ts, 0);
    if (r == BD_OK)
        r = bd_json_result(&w);
    tenants_free(&ts);
    return r;
}

/* Replies 200/201 with a tenant's JSON text. */
static void reply_text(bd_req *rq, int status, const bd_buf *text)
{
    bd_reply_begin(rq, status);
    bd_json_raw(&rq->json, (bd_slice){text->data, text->len});
    bd_reply_finish(rq);
}

/* ---- the body's domains ------------------------------------------------------------------ */

typedef struct {
    char (*norm)[BD_NORM_MAX + 1];
    size_t n;
} domain_list;

/* The body's "domains": an array of up to BD_TENANT_DOMAINS_MAX host names, normalised as an
 * email_domain search normalises them, repeats dropped. false with 422 written. */
static bool read_domains(bd_req *rq, json_t *v, domain_list *out)
{
    out->n = 0;
    out->norm = NULL;
    if (!json_is_array(v) || json_array_size(v) > BD_TENANT_DOMAINS_MAX) {
        bd_reply_error(rq, 422, "validation_error",
                       "'domains' must be an array of at most %d domain names",
                       BD_TENANT_DOMAINS_MAX);
        return false;
    }
    out->norm = calloc(json_array_size(v) + 1, sizeof *out->norm);
    if (!out->norm) {
        bd_reply_error(rq, 503, "unavailable", "out of memory; retry later");
        return false;
    }
    size_t i;
    json_t *e;
    json_array_foreach(v, i, e) {
        const char *why = NULL;
        size_t len;
        bd_slice s = {json_string_value(e), json_string_length(e)};
        if (!json_is_string(e) ||
            bd_normalize(BD_ID_EMAIL_DOMAIN, s, out->norm[out->n], &len, &why) != BD_OK) {
            bd_reply_error(rq, 422, "validation_error", "domains[%zu] is not a domain name: %s",
                           i, why ? why : "not a string");
            free(out->norm);
            out->norm = NULL;
            return false;
        }
        bool repeat = false;
        for (size_t k = 0; k < out->n && !repeat; k++)
            repeat = strcmp(out->norm[k], out->norm[out->n]) == 0;
        if (!repeat)
            out->n++;
    }
    return true;
}

/* ---- writes ------------------------------------------------------------------------------ */

typedef struct {
    bd_server *srv;
    bd_req *rq;
    int64_t id;
    bool set_name, set_domains;
    bd_slice name;
    domain_list domains;
    const char *conflict; /* what a BD_ERR_CONFLICT was about */
    char conflict_domain[BD_NORM_MAX + 1];
    bd_buf before, after;
} change;

static bd_result add_domains(change *c, bd_store *s)
{
    for (size_t i = 0; i < c->domains.n; i++) {
        bd_result r = bd_store_tenant_domain_add(s, c->id, bd_slice_from(c->domains.norm[i]));
        if (r == BD_ERR_CONFLICT) {
            c->conflict = "domain";
            snprintf(c->conflict_domain, sizeof c->conflict_domain, "%s", c->domains.norm[i]);
        }
        if (r != BD_OK)
            return r;
    }
    return BD_OK;
}

static bd_result create_txn(void *ctx, bd_store *s)
{
    change *c = ctx;
    bd_result r = bd_store_tenant_add(s, c->name, c->rq->now_us / 1000000, &c->id);
    if (r == BD_ERR_CONFLICT)
        c->conflict = "name";
    if (r == BD_OK)
        r = add_domains(c, s);
    if (r == BD_OK)
        r = snapshot(s, c->id, &c->after);
    if (r == BD_OK)
        r = bd_admin_audit(c->srv, c->rq, s, "tenant.create", c->id, NULL, &c->after);
    return r;
}

typedef struct {
    domain_list *keep;
    bd_buf gone; /* NUL-terminated domains to remove */
    bd_result err;
} old_domains;

static int note_old(void *ctx, int64_t tenant_id, bd_slice domain)
{
    (void)tenant_id;
    old_domains *o = ctx;
    for (size_t k = 0; k < o->keep->n; k++)
        if (bd_slice_eq(domain, o->keep->norm[k]))
            return 0;
    if (bd_buf_append_slice(&o->gone, domain) != BD_OK ||
        bd_buf_append_char(&o->gone, '\0') != BD_OK) {
        o->err = BD_ERR_NOMEM;
        return 1;
    }
    return 0;
}

static bd_result update_txn(void *ctx, bd_store *s)
{
    change *c = ctx;
    bd_result r = snapshot(s, c->id, &c->before);
    if (r == BD_OK && c->set_name) {
        r = bd_store_tenant_rename(s, c->id, c->name);
        if (r == BD_ERR_CONFLICT)
            c->conflict = "name";
    }
    if (r == BD_OK && c->set_domains) { /* the old ones not kept go first */
        old_domains o = {.keep = &c->domains};
        bd_buf_init(&o.gone, 64u << 20);
        r = bd_store_tenant_domains(s, c->id, note_old, &o);
        if (r == BD_OK)
            r = o.err;
        for (size_t at = 0; r == BD_OK && at < o.gone.len;) {
            bd_slice d = bd_slice_from(o.gone.data + at);
            r = bd_store_tenant_domain_remove(s, c->id, d);
            at += d.len + 1;
        }
        bd_buf_free(&o.gone);
        if (r == BD_OK)
            r = add_domains(c, s);
    }
    if (r == BD_OK)
        r = snapshot(s, c->id, &c->after);
    if (r == BD_OK)
        r = bd_admin_audit(c->srv, c->rq, s, "tenant.update", c->id, &c->before, &c->after);
    return r;
}

static bd_result delete_txn(void *ctx, bd_store *s)
{
    change *c = ctx;
    bd_result r = snapshot(s, c->id, &c->before);
    if (r == BD_OK)
        r = bd_store_tenant_remove(s, c->id);
    if (r == BD_OK)
        r = bd_admin_audit(c->srv, c->rq, s, "tenant.delete", c->id, &c->before, NULL);
    return r;
}

/* The reply to a write's failure. */
static void write_failed(bd_req *rq, const change *c, bd_result r, bool no_writer)
{
    if (no_writer)
        return;
    if (r == BD_ERR_NOT_FOUND)
        bd_reply_error(rq, 404, "not_found", "no such tenant");
    else if (r == BD_ERR_CONFLICT && c->conflict && strcmp(c->conflict, "name") == 0)
        bd_reply_error(rq, 409, "tenant_exists", "another tenant has this name");
    else if (r == BD_ERR_CONFLICT && c->conflict)
        bd_reply_error(rq, 409, "domain_taken",
                       "the domain %s is another tenant's, or a subdomain or parent of one of "
                       "its domains",
                       c->conflict_domain);
    else if (r == BD_ERR_CONFLICT)
        bd_reply_error(rq, 409, "tenant_has_keys",
                       "the tenant still has active keys; revoke them first");
    else
        bd_reply_store_error(rq, r);
}

/* Reads a tenant body: name (required when create) and domains. */
static bool read_change(bd_req *rq, change *c, bool create, json_t **body)
{
    static const char *const known[] = {"name", "domains", NULL};
    json_t *o = *body = bd_admin_body(rq, known);
    if (!o)
        return false;
    bool bad = false;
    c->set_name = bd_admin_string(rq, o, "name", BD_TENANT_NAME_MAX, &c->name, &bad);
    if (bad)
        return false;
    if (create && !c->set_name) {
        bd_reply_error(rq, 422, "validation_error", "the body must give 'name'");
        return false;
    }
    json_t *d = json_object_get(o, "domains");
    c->set_domains = d != NULL;
    if (d && !read_domains(rq, d, &c->domains))
        return false;
    if (!create && !c->set_name && !c->set_domains) {
        bd_reply_error(rq, 422, "validation_error", "the body must give 'name' or 'domains'");
        return false;
    }
    return true;
}

static void change_free(change *c, json_t *body)
{
    free(c->domains.norm);
    bd_buf_free(&c->before);
    bd_buf_free(&c->after);
    json_decref(body);
}

static void create_tenant(bd_server *srv, bd_req *rq)
{
    change c = {.srv = srv, .rq = rq};
    json_t *body = NULL;
    if (read_change(rq, &c, true, &body)) {
        bool no_writer;
        bd_result r = bd_admin_txn(rq, create_txn, &c, &no_writer);
        if (r != BD_OK) {
            write_failed(rq, &c, r, no_writer);
        } else {
            snprintf(rq->location, sizeof rq->location, "%s/admin/tenants/%lld", srv->base,
                     (long long)c.id);
            reply_text(rq, 201, &c.after);
        }
    }
    change_free(&c, body);
}

static void list_tenants(bd_req *rq)
{
    if (!bd_params_check(rq, NULL, NULL))
        return;
    bd_store *s = bd_admin_reader(rq);
    if (!s)
        return;
    tenants ts;
    tenants_init(&ts);
    bd_result r = load(s, 0, &ts);
    if (r != BD_OK) {
        tenants_free(&ts);
        bd_reply_store_error(rq, r);
        return;
    }
    bd_json *w = &rq->json;
    bd_reply_begin(rq, 200);
    bd_json_object_begin(w);
    BD_JSON_KEY(w, "tenants");
    bd_json_array_begin(w);
    for (size_t i = 0; i < ts.nt; i++)
        write_tenant(w, &ts, i);
    bd_json_array_end(w);
    bd_json_object_end(w);
    rq->records = (int64_t)ts.nt;
    tenants_free(&ts);
    bd_reply_finish(rq);
}

void bd_handle_admin_tenants(bd_server *srv, bd_req *rq, bd_slice arg)
{
    (void)arg;
    if (strcmp(rq->method, "POST") == 0) {
        if (bd_params_check(rq, NULL, NULL))
            create_tenant(srv, rq);
    } else {
        list_tenants(rq);
    }
}

void bd_handle_admin_tenant(bd_server *srv, bd_req *rq, bd_slice id_text)
{
    change c = {.srv = srv, .rq = rq};
    if (!bd_params_check(rq, NULL, NULL) || !bd_admin_id(rq, id_text, "tenant", &c.id))
        return;
    json_t *body = NULL;
    bool no_writer = false;
    bd_result r;
    if (strcmp(rq->method, "PATCH") == 0) {
        if (read_change(rq, &c, false, &body)) {
            r = bd_admin_txn(rq, update_txn, &c, &no_writer);
            if (r == BD_OK)
                reply_text(rq, 200, &c.after);
            else
                write_failed(rq, &c, r, no_writer);
        }
    } else if (strcmp(rq->method, "DELETE") == 0) {
        r = bd_admin_txn(rq, delete_txn, &c, &no_writer);
        if (r == BD_OK)
            bd_reply_begin(rq, 204);
        else
            write_failed(rq, &c, r, no_writer);
    } else {
        bd_store *s = bd_admin_reader(rq);
        r = s ? snapshot(s, c.id, &c.after) : BD_OK;
        if (s && r == BD_OK)
            reply_text(rq, 200, &c.after);
        else if (s)
            write_failed(rq, &c, r, false);
    }
    change_free(&c, body);
}

/* ---- GET {base}/admin/tenants/{id}/usage ------------------------------------------------- */

typedef struct {
    int64_t tenant;
    struct key_use {
        int64_t id, revoked_at;
        char name[BD_KEY_NAME_MAX + 1];
    } *k;
    size_t n, cap;
    bd_result err;
} tenant_keys;

static int take_key(void *ctx, const bd_key_row *row)
{
    tenant_keys *tk = ctx;
    if (row->tenant_id != tk->tenant)
        return 0;
    if (!grow((void **)&tk->k, &tk->cap, tk->n, sizeof *tk->k)) {
        tk->err = BD_ERR_NOMEM;
        return 1;
    }
    struct key_use *u = &tk->k[tk->n++];
    u->id = row->id;
    u->revoked_at = row->revoked_at;
    size_t l = row->name.len < BD_KEY_NAME_MAX ? row->name.len : BD_KEY_NAME_MAX;
    memcpy(u->name, row->name.ptr, l);
    u->name[l] = '\0';
    return 0;
}

void bd_handle_admin_tenant_usage(bd_server *srv, bd_req *rq, bd_slice id_text)
{
    int64_t id;
    if (!bd_params_check(rq, NULL, NULL) || !bd_admin_id(rq, id_text, "tenant", &id))
        return;
    bd_store *s = bd_admin_reader(rq);
    if (!s)
        return;
    bd_tenant_row t;
    tenant_keys tk = {.tenant = id};
    bd_result r = bd_store_tenant_get(s, id, &t);
    if (r == BD_OK)
        r = bd_store_key_list(s, take_key, &tk);
    if (r == BD_OK)
        r = tk.err;
    int64_t (*use)[2] = r == BD_OK ? calloc(tk.n + 1, sizeof *use) : NULL;
    if (r == BD_OK && !use)
        r = BD_ERR_NOMEM;
    int64_t today = 0, month = 0;
    for (size_t i = 0; r == BD_OK && i < tk.n; i++) {
        r = bd_usage_get(srv->usage, tk.k[i].id, rq->now_us, &use[i][0], &use[i][1]);
        today += use[i][0];
        month += use[i][1];
    }
    if (r == BD_ERR_NOT_FOUND) {
        bd_reply_error(rq, 404, "not_found", "no such tenant");
    } else if (r != BD_OK) {
        bd_reply_store_error(rq, r);
    } else {
        bd_json *w = &rq->json;
        bd_reply_begin(rq, 200);
        bd_json_object_begin(w);
        BD_JSON_KEY(w, "tenant");
        bd_json_int(w, id);
        BD_JSON_KEY(w, "requests_today");
        bd_json_int(w, today);
        BD_JSON_KEY(w, "requests_this_month");
        bd_json_int(w, month);
        bd_json_utc_member(w, "month_resets_at", bd_usage_month_end(rq->now_us / 1000000));
        BD_JSON_KEY(w, "keys");
        bd_json_array_begin(w);
        for (size_t i = 0; i < tk.n; i++) {
            bd_json_object_begin(w);
            BD_JSON_KEY(w, "id");
            bd_json_int(w, tk.k[i].id);
            BD_JSON_KEY(w, "name");
            bd_json_cstring(w, tk.k[i].name);
            BD_JSON_KEY(w, "revoked");
            bd_json_bool(w, tk.k[i].revoked_at != 0);
            BD_JSON_KEY(w, "requests_today");
            bd_json_int(w, use[i][0]);
            BD_JSON_KEY(w, "requests_this_month");
            bd_json_int(w, use[i][1]);
            bd_json_object_end(w);
        }
        bd_json_array_end(w);
        bd_json_object_end(w);
        bd_reply_finish(rq);
    }
    free(use);
    free(tk.k);
}
