/* Reading a bulk job's identities (job_input.h). JSON goes through jansson (one document
 * per job, so a DOM is fine here); CSV and text are scanned in place. */
#include "http/job_input.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/buf.h"

static bool media_is(const char *ct, const char *want)
{
    size_t n = strlen(want);
    while (*ct == ' ')
        ct++;
    return strncasecmp(ct, want, n) == 0 && (ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ');
}

bool bd_job_input_format_of(const char *content_type, bd_job_input_format *out)
{
    if (!content_type)
        return false;
    if (media_is(content_type, "application/json"))
        *out = BD_JOB_INPUT_JSON;
    else if (media_is(content_type, "text/csv"))
        *out = BD_JOB_INPUT_CSV;
    else if (media_is(content_type, "text/plain"))
        *out = BD_JOB_INPUT_TEXT;
    else
        return false;
    return true;
}

/* Passes one identity on; *n counts them. BD_ERR_LIMIT past the maximum. */
static bd_result pass(bd_job_identity_cb cb, void *ctx, size_t *n, bd_slice v)
{
    if (*n == BD_JOB_MAX_IDENTITIES)
        return BD_ERR_LIMIT;
    if (cb(ctx, *n, v) != 0)
        return BD_ERR_INVALID;
    (*n)++;
    return BD_OK;
}

/* The type's text into out (BD_JOB_TYPE_MAX bytes); false (why written) when too long. */
static bool copy_type(bd_slice type, char *out, char *why, size_t whylen)
{
    if (type.len >= BD_JOB_TYPE_MAX || memchr(type.ptr, '\0', type.len)) {
        snprintf(why, whylen, "'type' is not one of the identity types");
        return false;
    }
    memcpy(out, type.ptr, type.len);
    out[type.len] = '\0';
    return true;
}

static bd_result read_json(bd_slice body, bd_slice type, char *type_out,
                           bd_job_identity_cb cb, void *ctx, size_t *count, char *why,
                           size_t whylen)
{
    json_error_t err;
    json_t *doc = json_loadb(body.ptr, body.len, JSON_REJECT_DUPLICATES, &err);
    if (!doc) {
        snprintf(why, whylen, "the body is not JSON (line %d, column %d): %s", err.line,
                 err.column, err.text);
        return BD_ERR_INVALID;
    }
    bd_result r = BD_ERR_INVALID;
    json_t *accounts = json_object_get(doc, "accounts");
    json_t *t = json_object_get(doc, "type");
    size_t members = json_is_object(doc) ? json_object_size(doc) : 0;
    if (!json_is_object(doc) || !json_is_array(accounts) || members != 1u + (t != NULL)) {
        snprintf(why, whylen, "the body must be an object with an 'accounts' array and a "
                              "'type' string, and nothing else");
        goto out;
    }
    if (t && !json_is_string(t)) {
        snprintf(why, whylen, "'type' must be a string");
        goto out;
    }
    if (t) {
        bd_slice bt = {json_string_value(t), json_string_length(t)};
        if (type.ptr && (type.len != bt.len || memcmp(type.ptr, bt.ptr, bt.len) != 0)) {
            snprintf(why, whylen, "the 'type' parameter and the body's 'type' differ");
            goto out;
        }
        type = bt;
    }
    if (type.ptr && !copy_type(type, type_out, why, whylen))
        goto out;
    if (!type.ptr) {
        snprintf(why, whylen, "name the identity type in 'type'");
        goto out;
    }
    size_t n = json_array_size(accounts);
    r = BD_OK;
    for (size_t i = 0; r == BD_OK && i < n; i++) {
        json_t *a = json_array_get(accounts, i);
        if (!json_is_string(a)) {
            snprintf(why, whylen, "accounts[%zu] is not a string", i);
            r = BD_ERR_INVALID;
        } else {
            r = pass(cb, ctx, count, (bd_slice){json_string_value(a), json_string_length(a)});
        }
    }
out:
    json_decref(doc);
    return r;
}

/* One CSV cell at *p (before end): its value into *cell (a slice of the body, or of scratch
 * for a quoted cell with "" in it); *p moves past the cell and its comma or line end, and
 * *eol is set when the record ended. false for text after a closing quote or a quote that
 * never closes. */
static bool csv_cell(const char **p, const char *end, bd_slice *cell, bd_buf *scratch, bool *eol)
{
    const char *s = *p;
    *eol = false;
    if (s < end && *s == '"') {
        bd_buf_reset(scratch);
        const char *q = ++s;
        bool copied = false;
        for (;;) {
            const char *quote = memchr(q, '"', (size_t)(end - q));
            if (!quote)
                return false;
            if (quote + 1 < end && quote[1] == '"') { /* "" is one quote */
                if (bd_buf_append(scratch, q, (size_t)(quote + 1 - q)) != BD_OK)
                    return false;
                copied = true;
                q = quote + 2;
                continue;
            }
            if (copied) {
                if (bd_buf_append(scratch, q, (size_t)(quote - q)) != BD_OK)
                    return false;
                *cell = (bd_slice){scratch->data, scratch->len};
            } else {
                *cell = (bd_slice){s, (size_t)(quote - s)};
            }
            s = quote + 1;
            break;
        }
        if (s < end && *s == '\r')
            s++;
        if (s < end && *s != ',' && *s != '\n')
            return false;
    } else {
        const char *e = s;
        while (e < end && *e != ',' && *e != '\n')
            e++;
        size_t n = (size_t)(e - s);
        if (n > 0 && e < end && *e == '\n' && s[n - 1] == '\r')
            n--;
        else if (n > 0 && e == end && s[n - 1] == '\r')
            n--;
        *cell = (bd_slice){s, n};
        s = e;
    }
    if (s >= end || *s == '\n')
        *eol = true;
    *p = s < end ? s + 1 : end;
    return true;
}

static bool names_header(bd_slice cell, bd_slice type)
{
    return (cell.len == 7 && strncasecmp(cell.ptr, "account", 7) == 0) ||
           (cell.len == type.len && cell.len > 0 && strncasecmp(cell.ptr, type.ptr, type.len) == 0);
}

static bd_result read_csv(bd_slice body, bd_slice type, bd_job_identity_cb cb, void *ctx,
                          size_t *count, char *why, size_t whylen)
{
    const char *p = body.ptr, *end = body.ptr + body.len;
    if (body.len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
        p += 3;
    bd_buf scratch;
    bd_buf_init(&scratch, 1u << 16);
    bd_result r = BD_OK;
    for (size_t row = 1; r == BD_OK && p < end; row++) {
        bd_slice first, other;
        bool eol;
        bool ok = csv_cell(&p, end, &first, &scratch, &eol);
        /* the first cell may live in scratch: the others' parsing must not reuse it */
        bd_buf skip;
        bd_buf_init(&skip, 1u << 16);
        while (ok && !eol)
            ok = csv_cell(&p, end, &other, &skip, &eol);
        bd_buf_free(&skip);
        if (!ok) {
            snprintf(why, whylen, "CSV record %zu is malformed (a quote that does not close, "
                                  "or text after a closing quote)", row);
            r = BD_ERR_INVALID;
        } else if (first.len == 0 || (row == 1 && names_header(first, type))) {
            continue;
        } else {
            r = pass(cb, ctx, count, first);
        }
    }
    bd_buf_free(&scratch);
    return r;
}

static bd_result read_text(bd_slice body, bd_job_identity_cb cb, void *ctx, size_t *count)
{
    const char *p = body.ptr, *end = body.ptr + body.len;
    bd_result r = BD_OK;
    while (r == BD_OK && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl ? nl : end;
        size_t n = (size_t)(e - p);
        if (n > 0 && p[n - 1] == '\r')
            n--;
        if (n > 0)
            r = pass(cb, ctx, count, (bd_slice){p, n});
        p = nl ? nl + 1 : end;
    }
    return r;
}

bd_result bd_job_input_read(bd_slice body, bd_job_input_format fmt, bd_slice type,
                            char *type_out, bd_job_identity_cb cb, void *ctx,
                            size_t *count, char *why, size_t whylen)
{
    *count = 0;
    type_out[0] = '\0';
    if (whylen)
        why[0] = '\0';
    if (fmt == BD_JOB_INPUT_JSON)
        return read_json(body, type, type_out, cb, ctx, count, why, whylen);
    if (!type.ptr) {
        snprintf(why, whylen, "name the identity type in the 'type' parameter");
        return BD_ERR_INVALID;
    }
    if (!copy_type(type, type_out, why, whylen))
        return BD_ERR_INVALID;
    if (fmt == BD_JOB_INPUT_CSV)
        return read_csv(body, type, cb, ctx, count, why, whylen);
    return read_text(body, cb, ctx, count);
}
