/* Watches and alerts under the v7 base path: POST and GET /watches, DELETE /watches/{id},
 * GET /alerts?since=CURSOR. A key sees and changes only its own watches and alerts; another
 * key's watch is answered exactly as a missing one. A watch's signing secret is never in a
 * reply or a log. */
#include <sodium.h>
#include <string.h>

#include "v7/handlers.h"
#include "auth/scope.h"
#include "http/scope.h"
#include "http/server_impl.h"
#include "ingest/jsonl.h"
#include "ingest/watch_spec.h"
#include "webhook/formats.h"
#include "webhook/payload.h"
#include "webhook/policy.h"

static void write_watch(bd_json *w, const bd_watch_row *row)
{
    char when[21];
    bd_utc_text(row->created_at, when);
    bd_json_object_begin(w);
    BD_JSON_KEY(w, "id");
    bd_json_int(w, row->id);
    BD_JSON_KEY(w, "type");
    bd_json_cstring(w, bd_watch_type_name(row->type));
    BD_JSON_MEMBER_STRING(w, "value", row->shown, false);
    char shown[BD_WEBHOOK_URL_MAX + 16];
    BD_JSON_MEMBER_STRING(w, "url", bd_watch_url_shown(row->format, row->url, shown, sizeof shown),
                          false);
    BD_JSON_KEY(w, "format");
    bd_json_cstring(w, bd_watch_format_name(row->format));
    BD_JSON_KEY(w, "created_at");
    bd_json_cstring(w, when);
    bd_json_object_end(w);
}

static int list_one(void *ctx, const bd_watch_row *row)
{
    bd_req *rq = ctx;
    write_watch(&rq->json, row);
    rq->records++;
    return 0;
}

static void list_watches(bd_req *rq)
{
    if (!bd_params_check(rq, NULL, NULL))
        return;
    bd_json *w = &rq->json;
    bd_reply_begin(rq, 200);
    bd_json_object_begin(w);
    BD_JSON_KEY(w, "watches");
    bd_json_array_begin(w);
    rq->records = 0;
    bd_result r = bd_store_read_begin(rq->store);
    if (r == BD_OK)
        r = bd_store_watch_list(rq->store, rq->key.id, list_one, rq);
    bd_store_read_end(rq->store);
    if (r != BD_OK) {
        bd_reply_store_error(rq, r);
        return;
    }
    bd_json_array_end(w);
    bd_json_object_end(w);
    bd_reply_finish(rq);
}

/* A required string member of the body; false with a 422 written when it is missing. */
static bool member(bd_req *rq, const bd_fields *f, const char *name, bd_slice *v)
{
    if (bd_fields_get(f, name, v) && v->len > 0)
        return true;
    bd_reply_error(rq, 422, "validation_error", "the body must give '%s'", name);
    return false;
}

/* The body's members, checked: nothing but type, account, url, secret and format (json when
 * absent; a slack, teams or email watch takes no secret). */
static bool read_body(bd_req *rq, bd_fields *f, bd_slice *type, bd_slice *account, bd_slice *url,
                      bd_slice *secret, int *format)
{
    bd_slice body;
    if (!bd_req_body(rq, &body))
        return false;
    char why[256];
    if (bd_jsonl_parse(body.ptr, body.len, f, why, sizeof why) != BD_OK) {
        bd_reply_error(rq, 400, "invalid_json",
                       "the body must be one JSON object with type, account, url and secret");
        return false;
    }
    static const char *const known[] = {"type", "account", "url", "secret", "format"};
    for (size_t i = 0; i < bd_fields_count(f); i++) {
        bool ok = false;
        for (size_t k = 0; k < 5; k++)
            ok = ok || strcmp(bd_fields_name(f, i), known[k]) == 0;
        if (!ok) {
            bd_reply_error(rq, 422, "validation_error",
                           "the body takes only type, account, url, secret and format");
            return false;
        }
    }
    bd_slice fmt;
    *format = BD_WATCH_FORMAT_JSON;
    if (bd_fields_get(f, "format", &fmt) && !bd_watch_format_parse(fmt, format)) {
        bd_reply_error(rq, 422, "validation_error",
                       "the format must be json, slack, teams, email or splunk-hec");
        return false;
    }
    if (!member(rq, f, "type", type) || !member(rq, f, "account", account) ||
        !member(rq, f, "url", url))
        return false;
    if (bd_watch_format_needs_secret(*format))
        return member(rq, f, "secret", secret);
    if (bd_fields_get(f, "secret", secret) && secret->len > 0) {
        if (*format == BD_WATCH_FORMAT_EMAIL)
            bd_reply_error(rq, 422, "validation_error", "an email watch takes no secret");
        else
            bd_reply_error(rq, 422, "validation_error",
                           "a %s watch takes no secret: its url is the receiver's credential",
                           bd_watch_format_name(*format));
        return false;
    }
    *secret = (bd_slice){"", 0};
    return true;
}

/* Checks what the body names; false with the reply written. */
static bool check_watch(bd_server *srv, bd_req *rq, bd_slice type, bd_slice account, bd_slice url,
                        bd_slice secret, int format, bd_watch_spec *spec)
{
    const char *why;
    if (bd_watch_spec_parse(rq->secret, type, account, spec, &why) != BD_OK) {
        bd_reply_error(rq, 422, "validation_error", "%s", why);
        return false;
    }
    if (bd_watch_format_needs_secret(format) &&
        (secret.len < BD_WEBHOOK_SECRET_MIN || secret.len > BD_WEBHOOK_SECRET_MAX)) {
        bd_reply_error(rq, 422, "validation_error", "the secret must be %d to %d bytes",
                       BD_WEBHOOK_SECRET_MIN, BD_WEBHOOK_SECRET_MAX);
        return false;
    }
    bd_slice address;
    if (format == BD_WATCH_FORMAT_EMAIL) { /* sent through the operator's SMTP server */
        if (bd_watch_mailto_parse(url, &address, &why) == BD_OK)
            return true;
        bd_reply_error(rq, 422, "validation_error", "%s", why);
        return false;
    }
    bd_webhook_url u;
    if (bd_webhook_url_parse(url, &u, &why) != BD_OK) {
        bd_reply_error(rq, 422, "validation_error", "%s", why);
        return false;
    }
    static const bd_webhook_policy public_only;
    if (bd_webhook_check_host(srv->cfg.webhooks ? srv->cfg.webhooks : &public_only, &u, &why) !=
        BD_OK) {
        bd_reply_error(rq, 422, "destination_not_allowed", "%s", why);
        return false;
    }
    return true;
}

/* Whether the key may watch what spec names: a type it was given (a BIN: cards); a tenant
 * key only emails and email domains in its tenant's domains, since an alert tells of
 * records as they land, before any search could filter them. false with the 403 written. */
static bool watch_in_scope(bd_server *srv, bd_req *rq, const bd_watch_spec *spec)
{
    const bd_key_info *k = &rq->key;
    bool allowed = spec->type == BD_WATCH_BIN ? (k->types & BD_KEY_TYPE_CARDS) != 0
                                              : bd_scope_type_allowed(k->types, spec->type);
    if (k->tenant_id && spec->type != BD_FIELD_EMAIL && spec->type != BD_FIELD_EMAIL_DOMAIN)
        allowed = false;
    if (!allowed) {
        bd_scope_refuse(srv, rq, BD_SCOPE_TYPE_NOT_ALLOWED);
        return false;
    }
    if (spec->type == BD_WATCH_BIN) /* no identity type: bd_scope_check would refuse it */
        return true;
    return bd_scope_check(srv, rq, spec->type, (bd_slice){spec->key, spec->key_len});
}

static void add_watch(bd_server *srv, bd_req *rq)
{
    if (!bd_params_check(rq, NULL, NULL))
        return;
    bd_fields *f = bd_fields_new();
    if (!f) {
        bd_reply_error(rq, 500, "internal_error", "out of memory");
        return;
    }
    bd_slice type, account, url, secret;
    int format;
    bd_watch_spec spec;
    if (!read_body(rq, f, &type, &account, &url, &secret, &format) ||
        !check_watch(srv, rq, type, account, url, secret, format, &spec) ||
        !watch_in_scope(srv, rq, &spec)) {
        bd_fields_free(f);
        return;
    }
    bd_watch_row row = {
        .key_id = rq->key.id,
        .type = spec.type,
        .key = {spec.key, spec.key_len},
        .shown = {spec.shown, spec.shown_len},
        .url = url,
        .secret = secret,
        .format = format,
    };
    bd_store *s = bd_req_writer(rq);
    bd_result r = s ? bd_store_watch_add(s, &row, BD_WATCHES_PER_KEY, &row.id) : BD_ERR_STORE;
    if (s && r == BD_ERR_LIMIT)
        bd_reply_error(rq, 409, "watch_limit_reached",
                       "a key may hold %d watches; remove one first", BD_WATCHES_PER_KEY);
    else if (s && r == BD_ERR_EXISTS)
        bd_reply_error(rq, 409, "watch_exists",
                       "this key already watches this value with this url");
    else if (s && r != BD_OK)
        bd_reply_store_error(rq, r);
    if (s && r == BD_OK) {
        row.created_at = rq->now_us / 1000000;
        bd_reply_begin(rq, 201);
        write_watch(&rq->json, &row);
        bd_reply_finish(rq);
    }
    sodium_memzero(&spec, sizeof spec);
    bd_fields_free(f);
}

void bd_handle_watches(bd_server *srv, bd_req *rq, bd_slice arg)
{
    (void)arg;
    if (strcmp(rq->method, "POST") == 0)
        add_watch(srv, rq);
    else
        list_watches(rq);
}

void bd_handle_watch(bd_server *srv, bd_req *rq, bd_slice id_text)
{
    (void)srv;
    if (!bd_params_check(rq, NULL, NULL))
        return;
    int64_t id = 0;
    bool ok = id_text.len > 0 && id_text.len <= 18;
    for (size_t i = 0; ok && i < id_text.len; i++) {
        ok = id_text.ptr[i] >= '0' && id_text.ptr[i] <= '9';
        id = id * 10 + (id_text.ptr[i] - '0');
    }
    if (!ok || id == 0) {
        bd_reply_error(rq, 404, "not_found", "no such watch");
        return;
    }
    bd_store *s = bd_req_writer(rq);
    if (!s)
        return;
    bd_result r = bd_store_watch_remove(s, rq->key.id, id);
    if (r == BD_ERR_NOT_FOUND)
        bd_reply_error(rq, 404, "not_found", "no such watch");
    else if (r != BD_OK)
        bd_reply_store_error(rq, r);
    else
        bd_reply_begin(rq, 204);
}

typedef struct {
    bd_req *rq;
    int64_t last;
} alerts_ctx;

static int alert_one(void *ctx, const bd_alert_row *a)
{
    alerts_ctx *ac = ctx;
    bd_alert_write_json(&ac->rq->json, a, true);
    ac->rq->records++;
    ac->last = a->cursor;
    return 0;
}

void bd_handle_alerts(bd_server *srv, bd_req *rq, bd_slice arg)
{
    (void)srv;
    (void)arg;
    static const char *const allowed[] = {"since", "limit", NULL};
    int64_t since, limit;
    if (!bd_params_check(rq, allowed, NULL) ||
        !bd_param_int(rq, "since", 0, INT64_MAX, 0, &since) ||
        !bd_param_int(rq, "limit", 1, 1000, 100, &limit))
        return;
    bd_json *w = &rq->json;
    bd_reply_begin(rq, 200);
    bd_json_object_begin(w);
    BD_JSON_KEY(w, "alerts");
    bd_json_array_begin(w);
    alerts_ctx ac = {.rq = rq, .last = since};
    rq->records = 0;
    bd_result r = bd_store_read_begin(rq->store);
    if (r == BD_OK)
        r = bd_store_alert_list(rq->store, rq->key.id, since, (int)limit, alert_one, &ac);
    bd_store_read_end(rq->store);
    if (r != BD_OK) {
        bd_reply_store_error(rq, r);
        return;
    }
    bd_json_array_end(w);
    BD_JSON_KEY(w, "next_cursor");
    bd_json_int(w, ac.last);
    bd_json_object_end(w);
    bd_reply_finish(rq);
}
