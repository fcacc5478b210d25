/* Reading a bulk job's identities (job_input.h). Every format is scanned in place: JSON by
 * a reader of the one shape a job's body has (no document is built, so a body of millions
 * of tiny strings costs nothing but the scan), CSV and text line by line. */
#include "v7/job_input.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/buf.h"
#include "core/hex.h"
#include "core/utf8.h"

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

/* ---- JSON -------------------------------------------------------------------------------
 *
 * The body is read twice: once to check all of it (RFC 8259 syntax, UTF-8, the shape) and to
 * count the accounts, refusing past BD_JOB_MAX_IDENTITIES at once; then its accounts are
 * handed on, decoded, from the array the first reading found. A refusal names the place of
 * the fault by line and column (bytes, from 1) and never quotes the text there. */

typedef struct {
    const char *start, *p, *end;
    const char *fault; /* where the first fault is; NULL while there is none */
    const char *what;  /* what is wrong there: a fixed phrase */
    bool syntax;       /* a fault of JSON itself, not of the body's shape */
    long bad_account;  /* the index of an account that is not a string; -1: none */
} js;

static bool js_fail(js *j, const char *at, const char *what, bool syntax)
{
    if (!j->fault) {
        j->fault = at;
        j->what = what;
        j->syntax = syntax;
    }
    return false;
}

static void js_ws(js *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
        j->p++;
}

/* The four hex digits (any case) at p (before end) as a number; -1 when they are not. */
static long hex4(const char *p, const char *end)
{
    return end - p < 4 ? -1 : bd_hex_value(p, 4);
}

static bd_result put_utf8(bd_buf *out, unsigned long cp)
{
    char b[4];
    size_t n;
    if (cp < 0x80) {
        b[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (char)(0xC0 | cp >> 6);
        b[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (char)(0xE0 | cp >> 12);
        b[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        b[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        b[0] = (char)(0xF0 | cp >> 18);
        b[1] = (char)(0x80 | (cp >> 12 & 0x3F));
        b[2] = (char)(0x80 | (cp >> 6 & 0x3F));
        b[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    return bd_buf_append(out, b, n);
}

/* The string at j->p (its opening quote): checked, and when out is not NULL its value into
 * *v, a slice of the body when it holds no escape, else decoded into out. j->p moves past
 * the closing quote. false (the fault noted) for a string that is not JSON's; a decoding
 * out of memory is noted as such. */
static bool js_string(js *j, bd_buf *out, bd_slice *v)
{
    const char *open = j->p++;
    const char *run = j->p; /* the bytes not yet copied to out */
    bool escaped = false;
    if (out)
        bd_buf_reset(out);
    while (j->p < j->end) {
        unsigned char c = (unsigned char)*j->p;
        if (c == '"') {
            if (out && escaped && bd_buf_append(out, run, (size_t)(j->p - run)) != BD_OK)
                return js_fail(j, open, "a string too long to read", false);
            if (v)
                *v = escaped ? (bd_slice){out->data, out->len}
                             : (bd_slice){open + 1, (size_t)(j->p - open - 1)};
            j->p++;
            return true;
        }
        if (c < 0x20)
            return js_fail(j, j->p, "a control character inside a string", true);
        if (c >= 0x80) {
            size_t n = bd_utf8_seq_len((const unsigned char *)j->p, (size_t)(j->end - j->p));
            if (n == 0)
                return js_fail(j, j->p, "bytes that are not UTF-8", true);
            j->p += n;
            continue;
        }
        if (c != '\\') {
            j->p++;
            continue;
        }
        const char *esc = j->p;
        if (out && bd_buf_append(out, run, (size_t)(esc - run)) != BD_OK)
            return js_fail(j, open, "a string too long to read", false);
        escaped = true;
        if (j->end - esc < 2)
            return js_fail(j, open, "a string that does not end", true);
        char e = esc[1];
        const char *simple = strchr("\"\\/bfnrt", e);
        if (simple && e) {
            static const char decoded[] = "\"\\/\b\f\n\r\t";
            if (out && bd_buf_append_char(out, decoded[simple - "\"\\/bfnrt"]) != BD_OK)
                return js_fail(j, open, "a string too long to read", false);
            j->p = esc + 2;
        } else if (e == 'u') {
            long cp = hex4(esc + 2, j->end);
            const char *next = esc + 6;
            if (cp < 0)
                return js_fail(j, esc, "an escape that is not JSON's", true);
            if (cp >= 0xDC00 && cp <= 0xDFFF)
                return js_fail(j, esc, "a lone UTF-16 surrogate", true);
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                long lo = j->end - next >= 2 && next[0] == '\\' && next[1] == 'u'
                              ? hex4(next + 2, j->end)
                              : -1;
                if (lo < 0xDC00 || lo > 0xDFFF)
                    return js_fail(j, esc, "a lone UTF-16 surrogate", true);
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                next += 6;
            }
            if (cp == 0)
                return js_fail(j, esc, "a NUL character (\\u0000), which no identity holds", true);
            if (out && put_utf8(out, (unsigned long)cp) != BD_OK)
                return js_fail(j, open, "a string too long to read", false);
            j->p = next;
        } else {
            return js_fail(j, esc, "an escape that is not JSON's", true);
        }
        run = j->p;
    }
    return js_fail(j, open, "a string that does not end", true);
}

/* A value that is not a string, at j->p: noted as a shape fault named by `what` when it is
 * a JSON value, as a syntax fault when it is not one at all. */
static bool js_not_a_string(js *j, const char *what)
{
    char c = j->p < j->end ? *j->p : '\0';
    bool value = c == '{' || c == '[' || c == '"' || c == '-' || (c >= '0' && c <= '9') ||
                 (j->end - j->p >= 4 && (memcmp(j->p, "true", 4) == 0 || memcmp(j->p, "null", 4) == 0)) ||
                 (j->end - j->p >= 5 && memcmp(j->p, "false", 5) == 0);
    if (j->p >= j->end)
        return js_fail(j, j->p, "the body ends too soon", true);
    return js_fail(j, j->p, value ? what : "a value that is not JSON", !value);
}

typedef struct {
    bool has_type, has_accounts;
    bd_slice type;        /* decoded into type_buf when it had escapes */
    const char *accounts; /* the accounts array's '[' */
    size_t count;
} js_body;

/* The accounts array at j->p: checked, and counted into b->count; BD_ERR_LIMIT past the
 * maximum (the rest unread), BD_ERR_INVALID with the fault noted. */
static bd_result js_accounts(js *j, js_body *b)
{
    b->accounts = j->p++;
    js_ws(j);
    if (j->p < j->end && *j->p == ']') {
        j->p++;
        return BD_OK;
    }
    for (;;) {
        if (j->p >= j->end || *j->p != '"') {
            js_not_a_string(j, "an account that is not a string");
            if (!j->syntax)
                j->bad_account = (long)b->count;
            return BD_ERR_INVALID;
        }
        if (b->count == BD_JOB_MAX_IDENTITIES)
            return BD_ERR_LIMIT;
        if (!js_string(j, NULL, NULL))
            return BD_ERR_INVALID;
        b->count++;
        js_ws(j);
        if (j->p < j->end && *j->p == ',') {
            j->p++;
            js_ws(j);
            continue;
        }
        if (j->p < j->end && *j->p == ']') {
            j->p++;
            return BD_OK;
        }
        js_fail(j, j->p, j->p < j->end ? "',' or ']' expected" : "the body ends too soon", true);
        return BD_ERR_INVALID;
    }
}

/* The first reading: all of the body checked, its type found, its accounts counted. */
static bd_result js_check(js *j, js_body *b, bd_buf *scratch, bd_buf *type_buf)
{
    js_ws(j);
    if (j->p >= j->end || *j->p != '{') {
        if (j->p < j->end && (*j->p == '[' || *j->p == '"' || *j->p == '-' ||
                              (*j->p >= '0' && *j->p <= '9') || *j->p == 't' || *j->p == 'f' ||
                              *j->p == 'n'))
            js_fail(j, j->p, "the body is not an object", false);
        else
            js_fail(j, j->p, j->p < j->end ? "a JSON object expected" : "the body is empty", true);
        return BD_ERR_INVALID;
    }
    j->p++;
    js_ws(j);
    if (j->p < j->end && *j->p == '}') {
        j->p++;
    } else {
        for (;;) {
            if (j->p >= j->end || *j->p != '"') {
                js_fail(j, j->p, j->p < j->end ? "a member name expected" : "the body ends too soon",
                        true);
                return BD_ERR_INVALID;
            }
            const char *at = j->p;
            bd_slice name;
            if (!js_string(j, scratch, &name))
                return BD_ERR_INVALID;
            js_ws(j);
            if (j->p >= j->end || *j->p != ':') {
                js_fail(j, j->p, j->p < j->end ? "':' expected" : "the body ends too soon", true);
                return BD_ERR_INVALID;
            }
            j->p++;
            js_ws(j);
            bool is_type = name.len == 4 && memcmp(name.ptr, "type", 4) == 0;
            bool is_accounts = name.len == 8 && memcmp(name.ptr, "accounts", 8) == 0;
            if (!is_type && !is_accounts) {
                js_fail(j, at, "a member that is not 'type' or 'accounts'", false);
                return BD_ERR_INVALID;
            }
            if (is_type ? b->has_type : b->has_accounts) {
                js_fail(j, at, is_type ? "a second 'type'" : "a second 'accounts'", false);
                return BD_ERR_INVALID;
            }
            if (is_type) {
                b->has_type = true;
                if (j->p >= j->end || *j->p != '"') {
                    js_not_a_string(j, "'type' must be a string");
                    return BD_ERR_INVALID;
                }
                if (!js_string(j, type_buf, &b->type))
                    return BD_ERR_INVALID;
            } else {
                b->has_accounts = true;
                if (j->p >= j->end || *j->p != '[') {
                    js_not_a_string(j, "'accounts' must be an array of strings");
                    return BD_ERR_INVALID;
                }
                bd_result r = js_accounts(j, b);
                if (r != BD_OK)
                    return r;
            }
            js_ws(j);
            if (j->p < j->end && *j->p == ',') {
                j->p++;
                js_ws(j);
                continue;
            }
            if (j->p < j->end && *j->p == '}') {
                j->p++;
                break;
            }
            js_fail(j, j->p, j->p < j->end ? "',' or '}' expected" : "the body ends too soon", true);
            return BD_ERR_INVALID;
        }
    }
    js_ws(j);
    if (j->p < j->end) {
        js_fail(j, j->p, "more text after the body's object", true);
        return BD_ERR_INVALID;
    }
    return BD_OK;
}

/* The fault as a sentence: what, and where by line and column, nothing of the text. */
static void js_why(const js *j, char *why, size_t whylen)
{
    long line = 1;
    const char *line_start = j->start;
    for (const char *q = j->start; q < j->fault; q++)
        if (*q == '\n') {
            line++;
            line_start = q + 1;
        }
    long column = (long)(j->fault - line_start) + 1;
    if (j->bad_account >= 0)
        snprintf(why, whylen, "accounts[%ld] is not a string", j->bad_account);
    else if (j->syntax)
        snprintf(why, whylen, "the body is not JSON: %s (line %ld, column %ld)", j->what, line,
                 column);
    else
        snprintf(why, whylen, "%s (line %ld, column %ld): a job's body is an object of a 'type' "
                              "string and an 'accounts' array of strings",
                 j->what, line, column);
}

static bd_result read_json(bd_slice body, bd_slice type, char *type_out,
                           bd_job_identity_cb cb, void *ctx, size_t *count, char *why,
                           size_t whylen)
{
    js j = {body.ptr, body.ptr, body.ptr + body.len, NULL, NULL, false, -1};
    js_body b = {0};
    bd_buf scratch, type_buf;
    bd_buf_init(&scratch, 1u << 20);
    bd_buf_init(&type_buf, 4096); /* copy_type says when it is too long for a type */
    bd_result r = js_check(&j, &b, &scratch, &type_buf);
    if (r == BD_ERR_INVALID && j.fault)
        js_why(&j, why, whylen);
    if (r != BD_OK)
        goto out;
    r = BD_ERR_INVALID;
    if (!b.has_accounts) {
        snprintf(why, whylen, "the body must be an object with an 'accounts' array and a "
                              "'type' string, and nothing else");
        goto out;
    }
    if (b.has_type) {
        if (type.ptr && (type.len != b.type.len || memcmp(type.ptr, b.type.ptr, b.type.len) != 0)) {
            snprintf(why, whylen, "the 'type' parameter and the body's 'type' differ");
            goto out;
        }
        type = b.type;
    }
    if (!type.ptr) {
        snprintf(why, whylen, "name the identity type in 'type'");
        goto out;
    }
    if (!copy_type(type, type_out, why, whylen))
        goto out;
    /* the second reading: the accounts, checked already, decoded and handed on */
    j.p = b.accounts + 1;
    r = BD_OK;
    for (size_t i = 0; r == BD_OK && i < b.count; i++) {
        js_ws(&j);
        bd_slice v;
        if (!js_string(&j, &scratch, &v)) {
            snprintf(why, whylen, "identity %zu (counted from 0) is too long", i);
            r = BD_ERR_INVALID;
            break;
        }
        r = pass(cb, ctx, count, v);
        js_ws(&j);
        j.p++; /* the ',' or the closing ']' */
    }
out:
    bd_buf_free(&scratch);
    bd_buf_free(&type_buf);
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
