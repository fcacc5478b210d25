/* The admin API's keys: GET and POST {base}/admin/keys, GET, PATCH and DELETE (revoke)
 * {base}/admin/keys/{id}. A key's text is in the one reply that creates it and nowhere else
 * (its SHA-256 alone is stored, and never shown); each write leaves an audit row
 * (key.create, key.update, key.revoke) with the key before and after, without its text. */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "v7/admin.h"
#include "v7/handlers.h"
#include "auth/cidr.h"
#include "auth/key_types.h"
#include "core/date.h"
#include "http/server_impl.h"

#define ALLOW_TEXT_MAX (BD_KEY_ALLOW_MAX * 64)
#define TYPES_TEXT_MAX 512

/* A key read back from the store, its texts copied. */
typedef struct {
    int64_t id;
    bool found;
    bd_key_row row;
    char name[BD_KEY_NAME_MAX * 4 + 1], plan[BD_KEY_PLAN_MAX * 4 + 1], allow[ALLOW_TEXT_MAX + 1];
} key_copy;

static void copy_text(char *out, size_t cap, bd_slice s, bd_slice *into)
{
    size_t n = s.len < cap - 1 ? s.len : cap - 1;
    if (n)
        memcpy(out, s.ptr, n);
    out[n] = '\0';
    *into = (bd_slice){out, n};
}

static int find_key(void *ctx, const bd_key_row *row)
{
    key_copy *k = ctx;
    if (row->id != k->id)
        return 0;
    k->found = true;
    k->row = *row;
    copy_text(k->name, sizeof k->name, row->name, &k->row.name);
    copy_text(k->plan, sizeof k->plan, row->plan, &k->row.plan);
    copy_text(k->allow, sizeof k->allow, row->allow_ip, &k->row.allow_ip);
    return 1;
}

/* Key id (revoked or not) into *k; BD_ERR_NOT_FOUND. */
static bd_result get_key(bd_store *s, int64_t id, key_copy *k)
{
    memset(k, 0, sizeof *k);
    k->id = id;
    bd_result r = bd_store_key_list(s, find_key, k);
    return r == BD_OK && !k->found ? BD_ERR_NOT_FOUND : r;
}

/* A key as a JSON text (the audit trail's before and after, a reply). */
static bd_result key_text(const bd_key_row *k, int64_t now, const char *shown_once, bd_buf *out)
{
    bd_json w;
    bd_admin_json_start(&w, out);
    bd_admin_write_key(&w, k, now, shown_once);
    return bd_json_result(&w);
}

static void reply_text(bd_req *rq, int status, const bd_buf *text)
{
    bd_reply_begin(rq, status);
    bd_json_raw(&rq->json, (bd_slice){text->data, text->len});
    bd_reply_finish(rq);
}

/* ---- the body's members ------------------------------------------------------------------ */

/* Days since 1970-01-01 of a civil date (proleptic Gregorian). */
static int64_t days_from_civil(int y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* expires_at: null (never), "YYYY-MM-DD" (its first second, UTC) or "YYYY-MM-DDTHH:MM:SSZ",
 * in the future. */
static bool read_expiry(bd_req *rq, json_t *v, int64_t *out)
{
    if (json_is_null(v)) {
        *out = 0;
        return true;
    }
    bd_slice s = {json_string_value(v), json_string_length(v)};
    bd_datetime d;
    bool ok = json_is_string(v) &&
              (bd_date_parse_iso(s, &d) ||
               (s.len == 20 && s.ptr[10] == 'T' && s.ptr[19] == 'Z' &&
                bd_datetime_parse((bd_slice){s.ptr, 19}, &d)));
    if (ok)
        *out = days_from_civil(d.y, d.m, d.d) * 86400 + d.hh * 3600 + d.mi * 60 + d.ss;
    if (!ok || *out <= rq->now_us / 1000000) {
        bd_reply_error(rq, 422, "validation_error",
                       "'expires_at' must be a future date, YYYY-MM-DD or "
                       "YYYY-MM-DDTHH:MM:SSZ (UTC), or null for never");
        return false;
    }
    return true;
}

/* A whole number member in [min, max]; null gives null_value when null_ok. */
static bool read_int(bd_req *rq, json_t *v, const char *name, int64_t min, int64_t max,
                     bool null_ok, int64_t null_value, int64_t *out)
{
    if (null_ok && json_is_null(v)) {
        *out = null_value;
        return true;
    }
    if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max) {
        bd_reply_error(rq, 422, "validation_error", "'%s' must be a whole number from %lld to %lld%s",
                       name, (long long)min, (long long)max, null_ok ? ", or null" : "");
        return false;
    }
    *out = json_integer_value(v);
    return true;
}

/* types: an array of type names (auth/key_types.h), or null for the key's default. */
static bool read_types(bd_req *rq, json_t *v, uint32_t *mask)
{
    if (json_is_null(v)) {
        *mask = 0;
        return true;
    }
    char text[TYPES_TEXT_MAX];
    size_t n = 0, i;
    json_t *e;
    bool ok = json_is_array(v) && json_array_size(v) > 0;
    json_array_foreach(v, i, e) {
        const char *t = json_string_value(e);
        size_t l = t ? strlen(t) : 0;
        if (!ok || !t || l == 0 || n + l + 2 > sizeof text) {
            ok = false;
            break;
        }
        if (n)
            text[n++] = ',';
        memcpy(text + n, t, l);
        n += l;
    }
    text[n] = '\0';
    if (!ok || !bd_key_types_parse(text, mask)) {
        bd_reply_error(rq, 422, "validation_error",
                       "'types' must be a non-empty array of email, email_domain, "
                       "phone_number, username, ip_address, social_security_number, password, "
                       "password_hash, bitcoin_address, website_domain and cards, or null for "
                       "the default");
        return false;
    }
    return true;
}

/* allow_ip: an array of up to BD_KEY_ALLOW_MAX CIDRs (empty: anywhere), kept canonical and
 * comma-separated in out. */
static bool read_allow(bd_req *rq, json_t *v, char out[ALLOW_TEXT_MAX + 1])
{
    size_t n = 0, i;
    json_t *e;
    bool ok = json_is_array(v) && json_array_size(v) <= BD_KEY_ALLOW_MAX;
    out[0] = '\0';
    json_array_foreach(v, i, e) {
        bd_cidr c;
        char canon[64];
        if (!ok || !json_is_string(e) ||
            !bd_cidr_parse((bd_slice){json_string_value(e), json_string_length(e)}, &c)) {
            ok = false;
            break;
        }
        bd_cidr_format(&c, canon);
        size_t l = strlen(canon);
        if (n + l + 2 > ALLOW_TEXT_MAX) {
            ok = false;
            break;
        }
        if (n)
            out[n++] = ',';
        memcpy(out + n, canon, l);
        n += l;
        out[n] = '\0';
    }
    if (!ok) {
        bd_reply_error(rq, 422, "validation_error",
                       "'allow_ip' must be an array of at most %d address blocks like "
                       "192.0.2.0/24 or 2001:db8::/32 (host bits zero), empty for anywhere",
                       BD_KEY_ALLOW_MAX);
        return false;
    }
    return true;
}

/* plan: standard or enterprise; its hourly rate into *rate. */
static bool read_plan(bd_req *rq, json_t *o, bd_slice *plan, int64_t *rate, bool *given)
{
    bool bad = false;
    *given = bd_admin_string(rq, o, "plan", BD_KEY_PLAN_MAX, plan, &bad);
    if (bad)
        return false;
    if (!*given)
        return true;
    char p[BD_KEY_PLAN_MAX + 1];
    memcpy(p, plan->ptr, plan->len);
    p[plan->len] = '\0';
    if (!bd_plan_rate(p, rate)) {
        bd_reply_error(rq, 422, "validation_error", "'plan' is standard or enterprise");
        return false;
    }
    return true;
}

/* ---- POST {base}/admin/keys -------------------------------------------------------------- */

typedef struct {
    bd_server *srv;
    bd_req *rq;
    bd_key_row row;
    char text[BD_KEY_TEXT_LEN + 1];
    bool no_tenant;
    bd_buf after;
} create;

static bd_result create_txn(void *ctx, bd_store *s)
{
    create *c = ctx;
    if (c->row.tenant_id) {
        bd_tenant_row t;
        bd_result r = bd_store_tenant_get(s, c->row.tenant_id, &t);
        if (r == BD_ERR_NOT_FOUND)
            c->no_tenant = true;
        if (r != BD_OK)
            return r;
    }
    bd_result r = bd_store_key_add(s, &c->row, &c->row.id);
    if (r == BD_OK)
        r = key_text(&c->row, c->row.created_at, NULL, &c->after);
    if (r == BD_OK)
        r = bd_admin_audit(c->srv, c->rq, s, "key.create", c->row.id, NULL, &c->after);
    return r;
}

static void create_key(bd_server *srv, bd_req *rq)
{
    static const char *const known[] = {"name",    "plan",     "rate",       "tenant", "types",
                                        "allow_ip", "quota",   "expires_at", "role",   NULL};
    json_t *o = bd_admin_body(rq, known);
    if (!o)
        return;
    create c = {.srv = srv, .rq = rq};
    char allow[ALLOW_TEXT_MAX + 1] = "";
    bd_key_row *k = &c.row;
    k->created_at = rq->now_us / 1000000;
    k->exact_per_day = BD_KEY_EXACT_PER_DAY;
    k->plan = bd_slice_from("standard");
    bd_plan_rate("standard", &k->rate_per_hour);
    bool bad = false, given;
    json_t *v;
    bool ok = bd_admin_string(rq, o, "name", BD_KEY_NAME_MAX, &k->name, &bad);
    if (!ok && !bad)
        bd_reply_error(rq, 422, "validation_error", "the body must give 'name'");
    ok = ok && read_plan(rq, o, &k->plan, &k->rate_per_hour, &given);
    if (ok && (v = json_object_get(o, "rate")))
        ok = read_int(rq, v, "rate", 1, 1000000000, false, 0, &k->rate_per_hour);
    if (ok && (v = json_object_get(o, "tenant")))
        ok = read_int(rq, v, "tenant", 1, INT64_MAX, true, 0, &k->tenant_id);
    if (ok && (v = json_object_get(o, "types")))
        ok = read_types(rq, v, &k->types);
    if (ok && (v = json_object_get(o, "allow_ip")))
        ok = read_allow(rq, v, allow);
    k->allow_ip = bd_slice_from(allow);
    if (ok && (v = json_object_get(o, "quota")))
        ok = read_int(rq, v, "quota", 1, BD_KEY_QUOTA_MAX, true, 0, &k->quota_per_month);
    if (ok && (v = json_object_get(o, "expires_at")))
        ok = read_expiry(rq, v, &k->expires_at);
    bd_slice role;
    if (ok && bd_admin_string(rq, o, "role", 16, &role, &bad)) {
        ok = bd_slice_eq(role, "admin") || bd_slice_eq(role, "user");
        k->role = bd_slice_eq(role, "admin") ? BD_KEY_ROLE_ADMIN : BD_KEY_ROLE_USER;
        if (!ok)
            bd_reply_error(rq, 422, "validation_error", "'role' is user or admin");
    }
    ok = ok && !bad;
    if (ok && k->role == BD_KEY_ROLE_ADMIN && k->tenant_id) {
        bd_reply_error(rq, 422, "validation_error", "an admin key belongs to no tenant");
        ok = false;
    }
    if (ok && bd_key_generate(c.text, k->hash) != BD_OK) {
        bd_reply_error(rq, 503, "unavailable", "no random bytes for a key; retry later");
        ok = false;
    }
    if (ok) {
        bool no_writer;
        bd_result r = bd_admin_txn(rq, create_txn, &c, &no_writer);
        bd_buf shown;
        if (r == BD_OK)
            r = key_text(k, k->created_at, c.text, &shown);
        if (r == BD_OK) {
            snprintf(rq->location, sizeof rq->location, "%s/admin/keys/%lld", srv->base,
                     (long long)k->id);
            reply_text(rq, 201, &shown);
            sodium_memzero(shown.data, shown.len);
            bd_buf_free(&shown);
        } else if (c.no_tenant) {
            bd_reply_error(rq, 422, "validation_error", "'tenant' names no tenant");
        } else if (!no_writer) {
            bd_reply_store_error(rq, r);
        }
    }
    sodium_memzero(c.text, sizeof c.text);
    bd_buf_free(&c.after);
    json_decref(o);
}

/* ---- GET {base}/admin/keys --------------------------------------------------------------- */

static int list_one(void *ctx, const bd_key_row *row)
{
    bd_req *rq = ctx;
    bd_admin_write_key(&rq->json, row, rq->now_us / 1000000, NULL);
    rq->records++;
    return 0;
}

static void list_keys(bd_req *rq)
{
    if (!bd_params_check(rq, NULL, NULL))
        return;
    bd_store *s = bd_admin_reader(rq);
    if (!s)
        return;
    bd_json *w = &rq->json;
    bd_reply_begin(rq, 200);
    bd_json_object_begin(w);
    BD_JSON_KEY(w, "keys");
    bd_json_array_begin(w);
    rq->records = 0;
    bd_result r = bd_store_key_list(s, list_one, rq);
    if (r != BD_OK) {
        bd_reply_store_error(rq, r);
        return;
    }
    bd_json_array_end(w);
    bd_json_object_end(w);
    bd_reply_finish(rq);
}

void bd_handle_admin_keys(bd_server *srv, bd_req *rq, bd_slice arg)
{
    (void)arg;
    if (strcmp(rq->method, "POST") == 0) {
        if (bd_params_check(rq, NULL, NULL))
            create_key(srv, rq);
    } else {
        list_keys(rq);
    }
}

/* ---- {base}/admin/keys/{id} -------------------------------------------------------------- */

typedef struct {
    bd_server *srv;
    bd_req *rq;
    int64_t id;
    bool revoke;
    bd_key_change ch;
    char allow[ALLOW_TEXT_MAX + 1];
    key_copy before, after;
    bd_buf before_text, after_text;
} update;

static bd_result update_txn(void *ctx, bd_store *s)
{
    update *u = ctx;
    int64_t now = u->rq->now_us / 1000000;
    bd_result r = get_key(s, u->id, &u->before);
    if (r == BD_OK && u->before.row.revoked_at)
        r = BD_ERR_NOT_FOUND; /* a revoked key changes no more */
    if (r == BD_OK)
        r = u->revoke ? bd_store_key_revoke(s, u->id, now) : bd_store_key_change(s, u->id, &u->ch);
    if (r == BD_OK)
        r = get_key(s, u->id, &u->after);
    if (r == BD_OK)
        r = key_text(&u->before.row, now, NULL, &u->before_text);
    if (r == BD_OK)
        r = key_text(&u->after.row, now, NULL, &u->after_text);
    if (r == BD_OK)
        r = bd_admin_audit(u->srv, u->rq, s, u->revoke ? "key.revoke" : "key.update", u->id,
                           &u->before_text, &u->after_text);
    return r;
}

/* The PATCH body into u->ch; false with the reply written. */
static bool read_update(bd_req *rq, update *u, json_t **body)
{
    static const char *const known[] = {"name",     "plan",  "rate",       "types",
                                        "allow_ip", "quota", "expires_at", NULL};
    json_t *o = *body = bd_admin_body(rq, known);
    if (!o)
        return false;
    bd_key_change *c = &u->ch;
    bool bad = false;
    json_t *v;
    c->set_name = bd_admin_string(rq, o, "name", BD_KEY_NAME_MAX, &c->name, &bad);
    bool ok = !bad && read_plan(rq, o, &c->plan, &c->rate_per_hour, &c->set_plan);
    c->set_rate = c->set_plan; /* a plan brings its rate, unless rate is given too */
    if (ok && (v = json_object_get(o, "rate"))) {
        ok = read_int(rq, v, "rate", 1, 1000000000, false, 0, &c->rate_per_hour);
        c->set_rate = true;
    }
    if (ok && (v = json_object_get(o, "types"))) {
        ok = read_types(rq, v, &c->types);
        c->set_types = true;
    }
    if (ok && (v = json_object_get(o, "allow_ip"))) {
        ok = read_allow(rq, v, u->allow);
        c->allow_ip = bd_slice_from(u->allow);
        c->set_allow_ip = true;
    }
    if (ok && (v = json_object_get(o, "quota"))) {
        ok = read_int(rq, v, "quota", 1, BD_KEY_QUOTA_MAX, true, 0, &c->quota_per_month);
        c->set_quota = true;
    }
    if (ok && (v = json_object_get(o, "expires_at"))) {
        ok = read_expiry(rq, v, &c->expires_at);
        c->set_expires = true;
    }
    if (ok && json_object_size(o) == 0) {
        bd_reply_error(rq, 422, "validation_error",
                       "the body must give one of name, plan, rate, types, allow_ip, quota, "
                       "expires_at");
        ok = false;
    }
    return ok;
}

void bd_handle_admin_key(bd_server *srv, bd_req *rq, bd_slice id_text)
{
    update *u = calloc(1, sizeof *u);
    if (!u) {
        bd_reply_error(rq, 503, "unavailable", "out of memory; retry later");
        return;
    }
    u->srv = srv;
    u->rq = rq;
    json_t *body = NULL;
    if (!bd_params_check(rq, NULL, NULL) || !bd_admin_id(rq, id_text, "key", &u->id))
        goto out;
    bool write = strcmp(rq->method, "PATCH") == 0 || strcmp(rq->method, "DELETE") == 0;
    u->revoke = strcmp(rq->method, "DELETE") == 0;
    bd_result r;
    bool no_writer = false;
    if (!write) {
        bd_store *s = bd_admin_reader(rq);
        if (!s)
            goto out;
        r = get_key(s, u->id, &u->after);
        if (r == BD_OK)
            r = key_text(&u->after.row, rq->now_us / 1000000, NULL, &u->after_text);
    } else {
        if (!u->revoke && !read_update(rq, u, &body))
            goto out;
        r = bd_admin_txn(rq, update_txn, u, &no_writer);
    }
    if (r == BD_ERR_NOT_FOUND)
        bd_reply_error(rq, 404, "not_found", write ? "no such active key" : "no such key");
    else if (r != BD_OK && !no_writer)
        bd_reply_store_error(rq, r);
    else if (r == BD_OK && u->revoke)
        bd_reply_begin(rq, 204);
    else if (r == BD_OK)
        reply_text(rq, 200, &u->after_text);
out:
    bd_buf_free(&u->before_text);
    bd_buf_free(&u->after_text);
    json_decref(body);
    free(u);
}
