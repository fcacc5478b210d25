/* Streaming JSON writer with strict UTF-8 output. */
#include "core/json.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/utf8.h"

void bd_json_init(bd_json *w, bd_buf *out)
{
    w->out = out;
    w->err = BD_OK;
    w->depth = 0;
    w->need_comma[0] = false;
    w->after_key = false;
}

bd_result bd_json_result(const bd_json *w)
{
    return w->err;
}

static void put(bd_json *w, const char *p, size_t n)
{
    bd_buf *b = w->out;
    if (w->err == BD_OK && b->cap - b->len > n) { /* the common case: room, no call */
        memcpy(b->data + b->len, p, n);
        b->len += n;
        b->data[b->len] = '\0';
    } else if (w->err == BD_OK) {
        w->err = bd_buf_append(b, p, n);
    }
}

/* Bytes that go into a JSON string as they are: printable ASCII but the quote and the
 * backslash; everything else needs a look (an escape, or a UTF-8 check). */
static inline bool verbatim(unsigned char c)
{
    return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

static void quoted(bd_json *w, bd_slice s);

/* Writes the separator a new value needs at the current position. */
static void before_value(bd_json *w)
{
    if (w->after_key) {
        w->after_key = false;
        return;
    }
    if (w->need_comma[w->depth])
        put(w, ",", 1);
    w->need_comma[w->depth] = true;
}

static void open(bd_json *w, char c)
{
    before_value(w);
    put(w, &c, 1);
    if (w->depth >= BD_JSON_MAX_DEPTH) {
        if (w->err == BD_OK)
            w->err = BD_ERR_LIMIT;
        return;
    }
    w->need_comma[++w->depth] = false;
}

static void close_(bd_json *w, char c)
{
    put(w, &c, 1);
    if (w->depth > 0)
        w->depth--;
}

void bd_json_object_begin(bd_json *w)
{
    open(w, '{');
}

void bd_json_object_end(bd_json *w)
{
    close_(w, '}');
}

void bd_json_array_begin(bd_json *w)
{
    open(w, '[');
}

void bd_json_array_end(bd_json *w)
{
    close_(w, ']');
}

void bd_json_key(bd_json *w, const char *name)
{
    before_value(w);
    quoted(w, bd_slice_from(name));
    put(w, ":", 1);
    w->after_key = true;
}

void bd_json_key_quoted(bd_json *w, const char *quoted_colon, size_t n)
{
    before_value(w);
    put(w, quoted_colon, n);
    w->after_key = true;
}

/* Whether all eight bytes of v are verbatim: no byte below 0x20, none equal to the quote
 * or the backslash, none with the high bit set. Each test is the "some byte is zero (or
 * below n)" word trick, exact for whether any byte matches, which is all that is asked;
 * an answer of false sends the bytes through the byte-wise look. */
static inline bool word_verbatim(uint64_t v)
{
    const uint64_t ones = 0x0101010101010101u, high = 0x8080808080808080u;
    uint64_t quote = v ^ (ones * '"'), slash = v ^ (ones * '\\');
    uint64_t hit =
        ((v - ones * 0x20) & ~v) | ((quote - ones) & ~quote) | ((slash - ones) & ~slash) | v;
    return (hit & high) == 0;
}

/* Length of the prefix of s that needs no escaping: printable ASCII other than the quote
 * and backslash, and well-formed UTF-8. Eight bytes at a time while they are plain ASCII
 * (most of what a reply holds). */
static size_t verbatim_prefix(bd_slice s)
{
    const unsigned char *p = (const unsigned char *)s.ptr;
    size_t i = 0;
    while (i < s.len) {
        uint64_t v;
        if (s.len - i >= 8 && (memcpy(&v, p + i, 8), word_verbatim(v))) {
            i += 8;
            continue;
        }
        if (verbatim(p[i])) {
            i++;
            continue;
        }
        size_t n = p[i] >= 0x80 ? bd_utf8_seq_len(p + i, s.len - i) : 0;
        if (n == 0)
            break;
        i += n;
    }
    return i;
}

bd_result bd_json_escape(bd_buf *out, bd_slice s)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s.ptr;
    size_t i = verbatim_prefix(s), run = i; /* [i-run, i) is copied verbatim when the run ends */
    bd_result r = BD_OK;
    while (i < s.len && r == BD_OK) {
        unsigned char c = p[i];
        if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
            i++;
            run++;
            continue;
        }
        if (c >= 0x80) {
            size_t n = bd_utf8_seq_len(p + i, s.len - i);
            if (n > 0) {
                i += n;
                run += n;
                continue;
            }
        }
        r = bd_buf_append(out, p + i - run, run);
        run = 0;
        if (r != BD_OK)
            break;
        if (c >= 0x80) {
            r = bd_buf_append(out, "\xEF\xBF\xBD", 3); /* U+FFFD for one invalid byte */
        } else {
            char esc[6] = {'\\', 0};
            size_t n = 2;
            switch (c) {
            case '"':
                esc[1] = '"';
                break;
            case '\\':
                esc[1] = '\\';
                break;
            case '\n':
                esc[1] = 'n';
                break;
            case '\r':
                esc[1] = 'r';
                break;
            case '\t':
                esc[1] = 't';
                break;
            case '\b':
                esc[1] = 'b';
                break;
            case '\f':
                esc[1] = 'f';
                break;
            default:
                esc[1] = 'u';
                esc[2] = '0';
                esc[3] = '0';
                esc[4] = hex[c >> 4];
                esc[5] = hex[c & 15];
                n = 6;
            }
            r = bd_buf_append(out, esc, n);
        }
        i++;
    }
    if (r == BD_OK)
        r = bd_buf_append(out, p + i - run, run);
    return r;
}

/* Writes s as a quoted JSON string: in one copy when nothing in it needs escaping. */
static void quoted(bd_json *w, bd_slice s)
{
    bd_buf *b = w->out;
    if (w->err == BD_OK && verbatim_prefix(s) == s.len && b->cap - b->len > s.len + 2) {
        char *d = b->data + b->len;
        d[0] = '"';
        if (s.len)
            memcpy(d + 1, s.ptr, s.len);
        d[s.len + 1] = '"';
        d[s.len + 2] = '\0';
        b->len += s.len + 2;
        return;
    }
    put(w, "\"", 1);
    if (w->err == BD_OK)
        w->err = bd_json_escape(b, s);
    put(w, "\"", 1);
}

void bd_json_string(bd_json *w, bd_slice s)
{
    before_value(w);
    quoted(w, s);
}

void bd_json_cstring(bd_json *w, const char *s)
{
    if (s)
        bd_json_string(w, bd_slice_from(s));
    else
        bd_json_null(w);
}

void bd_json_null(bd_json *w)
{
    before_value(w);
    put(w, "null", 4);
}

void bd_json_bool(bd_json *w, bool v)
{
    before_value(w);
    if (v)
        put(w, "true", 4);
    else
        put(w, "false", 5);
}

void bd_json_int(bd_json *w, int64_t v)
{
    before_value(w);
    if (w->err == BD_OK)
        w->err = bd_buf_append_i64(w->out, v);
}

void bd_json_double(bd_json *w, double v)
{
    if (!isfinite(v)) {
        bd_json_null(w);
        return;
    }
    before_value(w);
    char tmp[32];
    /* Scores and amounts have at most two decimals: when v is exactly k/100 (a correctly
     * rounded division, so the decimal k/100 reads back as v) the digits of k are the
     * shortest form, and formatting them skips snprintf and strtod (3% of a card search). */
    if (v >= 1e-4 && v < 1e13) {
        int64_t k = (int64_t)(v * 100.0 + 0.5);
        if ((double)k / 100.0 == v) {
            char *e = tmp + sizeof tmp, *p = e;
            int64_t frac = k % 100, whole = k / 100;
            if (frac) {
                if (frac % 10)
                    *--p = (char)('0' + frac % 10);
                *--p = (char)('0' + frac / 10);
                *--p = '.';
            }
            do
                *--p = (char)('0' + whole % 10);
            while ((whole /= 10) > 0);
            put(w, p, (size_t)(e - p));
            return;
        }
    }
    /* The shortest of %.15g..%.17g that reads back as the same double. */
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*g", prec, v);
        if (strtod(tmp, NULL) == v)
            break;
    }
    put(w, tmp, strlen(tmp));
}

void bd_json_raw(bd_json *w, bd_slice json)
{
    before_value(w);
    put(w, json.ptr, json.len);
}

static void member_value(bd_json *w, bd_slice s, bool empty_is_null)
{
    if (!s.ptr || (empty_is_null && s.len == 0))
        bd_json_null(w);
    else
        bd_json_string(w, s);
}

void bd_json_member_string(bd_json *w, const char *key, bd_slice s, bool empty_is_null)
{
    bd_json_key(w, key);
    member_value(w, s, empty_is_null);
}

void bd_json_member_string_quoted(bd_json *w, const char *quoted_colon, size_t n, bd_slice s,
                                  bool empty_is_null)
{
    bd_json_key_quoted(w, quoted_colon, n);
    member_value(w, s, empty_is_null);
}
