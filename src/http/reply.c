/* Replies, error bodies and parameter validation shared by every handler. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "http/request.h"
#include "http/upload.h"

void bd_reply_begin(bd_req *rq, int status)
{
    rq->status = status;
    bd_buf_reset(rq->body);
    bd_json_init(&rq->json, rq->body);
}

void bd_reply_finish(bd_req *rq)
{
    if (bd_json_result(&rq->json) != BD_OK)
        bd_reply_error(rq, 500, "internal_error",
                       "the response could not be built; quote request id %s to support",
                       rq->request_id);
}

void bd_reply_error(bd_req *rq, int status, const char *code, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    bd_reply_begin(rq, status);
    rq->content_type = NULL; /* an error is JSON whatever the reply was going to be */
    rq->extra_len = 0;
    rq->cached = NULL;
    bd_json_object_begin(&rq->json);
    bd_json_key(&rq->json, "error");
    bd_json_cstring(&rq->json, code);
    bd_json_key(&rq->json, "message");
    bd_json_cstring(&rq->json, msg);
    bd_json_object_end(&rq->json);
}

bool bd_reply_header(bd_req *rq, const char *name, const char *value)
{
    size_t nl = strlen(name) + 1, vl = strlen(value) + 1;
    if (rq->extra_len + nl + vl > sizeof rq->extra_headers)
        return false;
    memcpy(rq->extra_headers + rq->extra_len, name, nl);
    memcpy(rq->extra_headers + rq->extra_len + nl, value, vl);
    rq->extra_len += nl + vl;
    return true;
}

void bd_reply_store_error(bd_req *rq, bd_result r)
{
    rq->store_failed = true;
    bd_log_for_request(BD_LOG_ERROR, "http", rq->request_id, "store error: %s", bd_result_str(r));
    if (r == BD_ERR_BUSY) {
        rq->retry_after = 1;
        bd_reply_error(rq, 503, "unavailable", "the store is busy or unreachable; retry shortly");
    } else if (r == BD_ERR_READONLY) {
        bd_reply_error(rq, 503, "read_only",
                       "this instance serves a read-only replica; send writes to an instance "
                       "on the primary");
    } else {
        bd_reply_error(rq, 500, "internal_error",
                       "an internal error occurred; quote request id %s to support",
                       rq->request_id);
    }
}

bool bd_method_takes_body(const char *method)
{
    return strcmp(method, "POST") == 0 || strcmp(method, "PUT") == 0 ||
           strcmp(method, "PATCH") == 0 || strcmp(method, "DELETE") == 0;
}

void bd_reply_too_large(bd_req *rq, size_t cap)
{
    rq->close = true;
    bool mib = cap % (1u << 20) == 0;
    bd_reply_error(rq, 413, "payload_too_large", "the request body is larger than %zu %s",
                   mib ? cap >> 20 : cap >> 10, mib ? "MiB" : "KiB");
}

void bd_reply_no_room(bd_req *rq)
{
    rq->close = true;
    rq->retry_after = 1;
    bd_reply_error(rq, 503, "unavailable",
                   "the server is receiving too many request bodies at once; retry in a moment");
}

bool bd_req_body(bd_req *rq, bd_slice *body)
{
    if (rq->upload_state == BD_UPLOAD_TOO_LARGE) {
        bd_reply_too_large(rq, rq->body_cap);
        return false;
    }
    if (rq->upload_state == BD_UPLOAD_NO_ROOM) {
        bd_reply_no_room(rq);
        return false;
    }
    if (!rq->upload.ptr || rq->upload.len == 0) {
        bd_reply_error(rq, 400, "missing_body", "this request needs a body");
        return false;
    }
    *body = rq->upload;
    return true;
}

static bool listed(bd_slice name, const char *const *names)
{
    for (; names && *names; names++)
        if (bd_slice_eq(name, *names))
            return true;
    return false;
}

/* Writes a parameter name into a message safely: printable ASCII only, capped. */
static void printable(bd_slice s, char *out, size_t cap)
{
    size_t j = 0;
    for (size_t i = 0; i < s.len && j + 1 < cap; i++) {
        unsigned char c = (unsigned char)s.ptr[i];
        out[j++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
    }
    out[j] = '\0';
}

static bool empty(const bd_param *p)
{
    return !p->value.ptr || p->value.len == 0;
}

/* "_": the cache-buster jQuery adds to GET requests (_=1700000000000). */
static bool ignored(const bd_param *p)
{
    return bd_slice_eq(p->name, "_");
}

bool bd_params_check(bd_req *rq, const char *const *allowed, const char *const *repeatable)
{
    if (rq->too_many_params) {
        bd_reply_error(rq, 400, "bad_request", "too many query parameters (at most %d)",
                       BD_MAX_PARAMS);
        return false;
    }
    if (rq->bad_param_bytes) {
        bd_reply_error(rq, 400, "bad_request", "a query parameter holds a NUL byte");
        return false;
    }
    for (size_t i = 0; i < rq->nparams; i++) {
        if (ignored(&rq->params[i]))
            continue;
        char name[64];
        printable(rq->params[i].name, name, sizeof name);
        if (!listed(rq->params[i].name, allowed)) {
            bd_reply_error(rq, 400, "bad_request",
                           "unknown query parameter '%s' (names are case-sensitive)", name);
            return false;
        }
        if (listed(rq->params[i].name, repeatable) || empty(&rq->params[i]))
            continue;
        for (size_t j = 0; j < i; j++) {
            if (!empty(&rq->params[j]) && rq->params[j].name.len == rq->params[i].name.len &&
                memcmp(rq->params[j].name.ptr, rq->params[i].name.ptr, rq->params[i].name.len) ==
                    0) {
                bd_reply_error(rq, 400, "bad_request", "query parameter '%s' is given twice", name);
                return false;
            }
        }
    }
    return true;
}

bool bd_param_get(const bd_req *rq, const char *name, bd_slice *value)
{
    bool seen = false;
    for (size_t i = 0; i < rq->nparams; i++) {
        if (!bd_slice_eq(rq->params[i].name, name))
            continue;
        if (!empty(&rq->params[i])) {
            *value = rq->params[i].value;
            return true;
        }
        seen = true;
    }
    if (seen)
        *value = (bd_slice){"", 0};
    return seen;
}

bool bd_param_opt(const bd_req *rq, const char *name, bd_slice *value)
{
    return bd_param_get(rq, name, value) && value->len > 0;
}

bool bd_param_int(bd_req *rq, const char *name, int64_t min, int64_t max, int64_t dflt,
                  int64_t *out)
{
    bd_slice v;
    *out = dflt;
    if (!bd_param_opt(rq, name, &v))
        return true;
    /* Digits only, optionally signed: "1e3", " 5" and "0x10" are not integers. */
    size_t i = 0;
    bool neg = false;
    if (v.len > 0 && (v.ptr[0] == '-' || v.ptr[0] == '+')) {
        neg = v.ptr[0] == '-';
        i = 1;
    }
    if (i == v.len) {
        bd_reply_error(rq, 400, "bad_request", "'%s' must be an integer", name);
        return false;
    }
    int64_t n = 0;
    bool overflow = false;
    for (; i < v.len; i++) {
        char c = v.ptr[i];
        if (c < '0' || c > '9') {
            bd_reply_error(rq, 400, "bad_request", "'%s' must be an integer", name);
            return false;
        }
        if (n > (INT64_MAX - (c - '0')) / 10)
            overflow = true;
        else
            n = n * 10 + (c - '0');
    }
    if (neg)
        n = -n;
    if (overflow || n < min || n > max) {
        bd_reply_error(rq, 422, "validation_error", "'%s' must be between %lld and %lld", name,
                       (long long)min, (long long)max);
        return false;
    }
    *out = n;
    return true;
}
