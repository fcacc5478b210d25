/* The admin API's audit trail: the row each admin write leaves (who: the key's id; from
 * where: the client address; what: an action and its target; before and after as JSON,
 * never a secret), GET {base}/admin/audit?before=&limit= (newest first, paged by id), and
 * what the admin handlers share (v7/admin.h). */
#include <string.h>

#include "v7/admin.h"
#include "v7/handlers.h"
#include "auth/key_types.h"
#include "core/utf8.h"
#include "http/server_impl.h"

bool bd_admin_id(bd_req *rq, bd_slice text, const char *what, int64_t *id)
{
    int64_t v = 0;
    bool ok = text.len > 0 && text.len <= 18;
    for (size_t i = 0; ok && i < text.len; i++) {
        ok = text.ptr[i] >= '0' && text.ptr[i] <= '9';
        v = v * 10 + (text.ptr[i] - '0');
    }
    if (!ok || v == 0) {
        bd_reply_error(rq, 404, "not_found", "no such %s", what);
        return false;
    }
    *id = v;
    return true;
}

json_t *bd_admin_body(bd_req *rq, const char *const *known)
{
    bd_slice body;
    if (!bd_req_body(rq, &body))
        return NULL;
    json_error_t err;
    json_t *o = json_loadb(body.ptr, body.len, JSON_REJECT_DUPLICATES, &err);
    if (!o || !json_is_object(o)) {
        json_decref(o);
        bd_reply_error(rq, 400, "invalid_json", "the body must be one JSON object");
        return NULL;
    }
    const char *name;
    json_t *v;
    json_object_foreach(o, name, v) {
        bool ok = false;
        for (size_t k = 0; known[k] && !ok; k++)
            ok = strcmp(name, known[k]) == 0;
        if (!ok) {
            bd_buf list;
            bd_buf_init(&list, 1024);
            for (size_t k = 0; known[k]; k++)
                bd_buf_printf(&list, "%s%s", k ? ", " : "", known[k]);
            bd_reply_error(rq, 422, "validation_error", "the body takes only %.*s",
                           (int)list.len, list.data ? list.data : "");
            bd_buf_free(&list);
            json_decref(o);
            return NULL;
        }
    }
    return o;
}

/* Whether s is valid UTF-8 without control characters. */
static bool plain_text(bd_slice s)
{
    if (!bd_utf8_valid(s))
        return false;
    for (size_t i = 0; i < s.len; i++)
        if ((unsigned char)s.ptr[i] < 0x20 || s.ptr[i] == 0x7f)
            return false;
    return true;
}

bool bd_admin_string(bd_req *rq, json_t *o, const char *name, size_t max, bd_slice *out,
                     bool *bad)
{
    json_t *v = json_object_get(o, name);
    if (!v)
        return false;
    bd_slice s = {json_string_value(v), json_string_length(v)};
    if (!json_is_string(v) || s.len == 0 || s.len > max || !plain_text(s)) {
        bd_reply_error(rq, 422, "validation_error",
                       "'%s' must be a string of 1 to %zu bytes without control characters",
                       name, max);
        *bad = true;
        return false;
    }
    *out = s;
    return true;
}

static bd_slice text_of(const bd_buf *b)
{
    if (!b || !b->len)
        return (bd_slice){NULL, 0};
    return (bd_slice){b->data, b->len};
}

bd_result bd_admin_audit(bd_server *srv, bd_req *rq, bd_store *s, const char *action,
                         int64_t target, const bd_buf *before, const bd_buf *after)
{
    char addr[BD_CLIENT_ADDR_TEXT], tgt[24];
    bd_ip_format(bd_req_client(srv, rq), addr);
    bd_audit_row row = {
        .at = rq->now_us / 1000000,
        .key_id = rq->key.id,
        .address = bd_slice_from(addr),
        .action = bd_slice_from(action),
        .target = bd_slice_from(target ? bd_i64_text(target, tgt) : ""),
        .before = text_of(before),
        .after = text_of(after),
    };
    return bd_store_audit_add(s, &row, NULL);
}

bd_result bd_admin_txn(bd_req *rq, bd_result (*fn)(void *ctx, bd_store *s), void *ctx,
                       bool *no_writer)
{
    *no_writer = false;
    bd_store *s = bd_req_writer(rq);
    if (!s) {
        *no_writer = true;
        return BD_ERR_STORE;
    }
    bd_result r = bd_store_begin(s);
    if (r != BD_OK)
        return r;
    r = fn(ctx, s);
    if (r == BD_OK)
        r = bd_store_commit(s);
    else
        bd_store_rollback(s);
    return r;
}

bd_store *bd_admin_reader(bd_req *rq)
{
    return bd_req_writer(rq);
}

void bd_admin_json_start(bd_json *w, bd_buf *b)
{
    bd_buf_init(b, BD_ADMIN_JSON_MAX);
    bd_json_init(w, b);
}

/* A comma-separated list as a JSON array of strings. */
static void write_list(bd_json *w, bd_slice list)
{
    bd_json_array_begin(w);
    size_t start = 0;
    for (size_t i = 0; i <= list.len; i++) {
        if (i < list.len && list.ptr[i] != ',')
            continue;
        if (i > start)
            bd_json_string(w, (bd_slice){list.ptr + start, i - start});
        start = i + 1;
    }
    bd_json_array_end(w);
}

void bd_admin_write_key(bd_json *w, const bd_key_row *k, int64_t now, const char *shown_once)
{
    bd_json_object_begin(w);
    if (shown_once) {
        BD_JSON_KEY(w, "key");
        bd_json_cstring(w, shown_once);
    }
    BD_JSON_KEY(w, "id");
    bd_json_int(w, k->id);
    BD_JSON_KEY(w, "name");
    bd_json_string(w, k->name);
    BD_JSON_KEY(w, "plan");
    bd_json_string(w, k->plan);
    BD_JSON_KEY(w, "role");
    bd_json_cstring(w, k->role == BD_KEY_ROLE_ADMIN ? "admin" : "user");
    BD_JSON_KEY(w, "tenant");
    if (k->tenant_id)
        bd_json_int(w, k->tenant_id);
    else
        bd_json_null(w);
    BD_JSON_KEY(w, "types");
    bd_buf types;
    bd_buf_init(&types, 512);
    bd_key_types_format(bd_key_types_resolve(k->types, k->tenant_id), &types);
    write_list(w, (bd_slice){types.data ? types.data : "", types.len});
    bd_buf_free(&types);
    BD_JSON_KEY(w, "allow_ip");
    write_list(w, k->allow_ip);
    BD_JSON_KEY(w, "rate_per_hour");
    bd_json_int(w, k->rate_per_hour);
    BD_JSON_KEY(w, "quota_per_month");
    if (k->quota_per_month)
        bd_json_int(w, k->quota_per_month);
    else
        bd_json_null(w);
    bd_json_utc_member(w, "created_at", k->created_at);
    bd_json_utc_member(w, "expires_at", k->expires_at);
    bd_json_utc_member(w, "revoked_at", k->revoked_at);
    BD_JSON_KEY(w, "status");
    bd_json_cstring(w, k->revoked_at                           ? "revoked"
                       : k->expires_at && k->expires_at <= now ? "expired"
                                                               : "active");
    bd_json_object_end(w);
}

/* ---- GET {base}/admin/audit ------------------------------------------------------------ */

typedef struct {
    bd_req *rq;
    int64_t last;
    int64_t n;
} audit_list;

static void raw_or_null(bd_json *w, bd_slice text)
{
    if (text.ptr && text.len)
        bd_json_raw(w, text);
    else
        bd_json_null(w);
}

static int audit_one(void *ctx, const bd_audit_row *r)
{
    audit_list *al = ctx;
    bd_json *w = &al->rq->json;
    bd_json_object_begin(w);
    BD_JSON_KEY(w, "id");
    bd_json_int(w, r->id);
    bd_json_utc_member(w, "at", r->at);
    BD_JSON_KEY(w, "key_id");
    bd_json_int(w, r->key_id);
    BD_JSON_KEY(w, "address");
    bd_json_string(w, r->address);
    BD_JSON_KEY(w, "action");
    bd_json_string(w, r->action);
    BD_JSON_KEY(w, "target");
    bd_json_string(w, r->target);
    BD_JSON_KEY(w, "before");
    raw_or_null(w, r->before);
    BD_JSON_KEY(w, "after");
    raw_or_null(w, r->after);
    bd_json_object_end(w);
    al->last = r->id;
    al->n++;
    return 0;
}

void bd_handle_admin_audit(bd_server *srv, bd_req *rq, bd_slice arg)
{
    (void)srv;
    (void)arg;
    static const char *const allowed[] = {"before", "limit", NULL};
    int64_t before, limit;
    if (!bd_params_check(rq, allowed, NULL) ||
        !bd_param_int(rq, "before", 1, INT64_MAX, 0, &before) ||
        !bd_param_int(rq, "limit", 1, 1000, 100, &limit))
        return;
    bd_store *s = bd_admin_reader(rq);
    if (!s)
        return;
    bd_json *w = &rq->json;
    bd_reply_begin(rq, 200);
    bd_json_object_begin(w);
    BD_JSON_KEY(w, "audit");
    bd_json_array_begin(w);
    audit_list al = {.rq = rq};
    rq->records = 0;
    bd_result r = bd_store_audit_list(s, before, (int)limit, audit_one, &al);
    if (r != BD_OK) {
        bd_reply_store_error(rq, r);
        return;
    }
    rq->records = al.n;
    bd_json_array_end(w);
    /* the next page: the rows before this page's last, while a full page came */
    BD_JSON_KEY(w, "next_before");
    if (al.n == limit && al.last > 1)
        bd_json_int(w, al.last);
    else
        bd_json_null(w);
    bd_json_object_end(w);
    bd_reply_finish(rq);
}
