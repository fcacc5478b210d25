/* JSON Lines record parser: a reference path where jansson validates and decodes (a scanner over
 * the validated line recovers the exact text of numbers and nested values), and an equivalent
 * allocation-free fast path for the common line that defers to it whenever unsure. */
#include "ingest/jsonl.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "core/hex.h"
#include "ingest/jsonl_impl.h"
#include "ingest/mask.h"

/* p[i] is the opening quote; returns the index after the closing one. */
static size_t skip_string(const char *p, size_t i, size_t n)
{
    for (i++; i < n; i++) {
        if (p[i] == '\\')
            i++;
        else if (p[i] == '"')
            return i + 1;
    }
    return n;
}

static size_t skip_value(const char *p, size_t i, size_t n)
{
    if (i >= n)
        return n;
    if (p[i] == '"')
        return skip_string(p, i, n);
    if (p[i] == '{' || p[i] == '[') {
        size_t depth = 0;
        while (i < n) {
            char c = p[i];
            if (c == '"') {
                i = skip_string(p, i, n);
                continue;
            }
            if (c == '{' || c == '[') {
                depth++;
            } else if (c == '}' || c == ']') {
                if (--depth == 0)
                    return i + 1;
            }
            i++;
        }
        return n;
    }
    while (i < n && p[i] != ',' && p[i] != '}' && p[i] != ']' && !is_ws(p[i]))
        i++;
    return i;
}

/* Appends p[i..end) to the last field without the whitespace outside strings. */
static bd_result append_compact(bd_fields *out, const char *p, size_t i, size_t end)
{
    while (i < end) {
        size_t run = i;
        while (i < end && !is_ws(p[i]))
            i = p[i] == '"' ? skip_string(p, i, end) : i + 1;
        bd_result r = bd_fields_append(out, p + run, i - run);
        if (r != BD_OK)
            return r;
        i = skip_ws(p, i, end);
    }
    return BD_OK;
}

static const char *type_phrase(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
    case JSON_REAL:
        return "a number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    case JSON_NULL:
        return "null";
    case JSON_OBJECT:
        break;
    }
    return "an object";
}

/* Adds one member whose value text is line[vs..ve). */
static bd_result add_member(bd_fields *out, const char *key, size_t klen, const json_t *v,
                            const char *line, size_t vs, size_t ve)
{
    bd_result r;
    switch (json_typeof(v)) {
    case JSON_STRING:
        return bd_fields_add(out, key, klen, json_string_value(v), json_string_length(v));
    case JSON_TRUE:
        return bd_fields_add(out, key, klen, "true", 4);
    case JSON_FALSE:
        return bd_fields_add(out, key, klen, "false", 5);
    case JSON_NULL:
        return bd_fields_add(out, key, klen, NULL, 0);
    case JSON_INTEGER:
    case JSON_REAL:
        return bd_fields_add(out, key, klen, line + vs, ve - vs);
    case JSON_OBJECT:
    case JSON_ARRAY:
        r = bd_fields_add(out, key, klen, "", 0);
        return r == BD_OK ? append_compact(out, line, vs, ve) : r;
    }
    return BD_ERR_INVALID;
}

bd_result bd_jsonl_parse_jansson(const char *line, size_t len, bd_fields *out, char *why,
                                 size_t whylen)
{
    bd_result r = BD_OK;
    bd_fields_clear(out);
    if (skip_ws(line, 0, len) == len) {
        bd_why(why, whylen, "the line is empty: each line must hold one JSON object");
        return BD_ERR_INVALID;
    }
    json_error_t err;
    json_t *root = json_loadb(
        line, len,
        JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL | JSON_DECODE_ANY | JSON_DECODE_INT_AS_REAL, &err);
    if (!root) {
        bd_jsonl_error_why(line, len, &err, why, whylen);
        return BD_ERR_INVALID;
    }
    if (!json_is_object(root)) {
        bd_why(why, whylen, "each line must hold one JSON object, not %s", type_phrase(root));
        r = BD_ERR_INVALID;
        goto free_root;
    }
    if (json_object_size(root) > BD_FIELDS_MAX) {
        bd_why(why, whylen, "a record may have at most %d fields, this one has %zu", BD_FIELDS_MAX,
               json_object_size(root));
        r = BD_ERR_INVALID;
        goto free_root;
    }
    /* jansson iterates members in input order, and duplicates were rejected, so the scanner
     * meets the same members in the same order. */
    size_t i = skip_ws(line, 0, len) + 1; /* past '{' */
    for (void *it = json_object_iter(root); it; it = json_object_iter_next(root, it)) {
        i = skip_ws(line, i, len);
        i = skip_ws(line, skip_string(line, i, len), len) + 1; /* key, ':' */
        size_t vs = skip_ws(line, i, len);
        size_t ve = skip_value(line, vs, len);
        i = skip_ws(line, ve, len) + 1; /* ',' or '}' */
        if (ve > len || vs >= ve) {
            bd_why(why, whylen, "the line could not be read as a JSON object");
            r = BD_ERR_INVALID;
            goto free_root;
        }
        r = add_member(out, json_object_iter_key(it), json_object_iter_key_len(it),
                       json_object_iter_value(it), line, vs, ve);
        if (r != BD_OK) {
            if (r == BD_ERR_INVALID)
                bd_why(why, whylen, "a field name must not be empty or contain a NUL byte");
            else if (r == BD_ERR_LIMIT)
                bd_why(why, whylen, "the record is too large");
            else
                bd_why(why, whylen, "out of memory while reading the record");
            goto free_root;
        }
    }
free_root:
    json_decref(root);
    if (r != BD_OK)
        bd_fields_clear(out);
    return r;
}

/* ---- Fast path ----
 * jansson allocates a node per value and reads its input a character at a time, which caps an
 * import well below the rate it must sustain. fast_parse is a single pass with no allocation
 * for the common line: it either produces exactly what bd_jsonl_parse_jansson would, or gives
 * up (returns false) and lets jansson decide, also for every error, so messages stay
 * jansson's. It gives up on anything it is not sure of: syntax errors, exponents, numbers
 * over 300 characters (jansson rejects doubles that overflow), escapes in keys, invalid
 * escapes or UTF-8, control characters, nesting deeper than FAST_DEPTH, more than
 * FAST_KEYS nested keys, empty or duplicate keys, more than BD_FIELDS_MAX members, and a full
 * fields buffer. fuzz_jsonl checks the equivalence on arbitrary input. */

#define FAST_DEPTH 32
#define FAST_KEYS 256

typedef struct {
    const char *p;
    size_t n;
    size_t i;
    /* keys of the nested objects being scanned, for duplicate detection */
    struct {
        size_t off, len;
    } keys[FAST_KEYS];
    size_t nkeys;
} fast;

/* Reads 4 hex digits (any case) at p[i..]; -1 when they are not there. */
static long hex4(const char *p, size_t n, size_t i)
{
    if (n < 4 || i > n - 4)
        return -1;
    return bd_hex_value(p + i, 4);
}

static size_t utf8_encode(unsigned long cp, char out[4])
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* Scans the string at f->i (an opening quote). With out, appends its decoded bytes to the
 * last field of out. *escaped tells whether it held a backslash. */
static bool fast_string(fast *f, bd_fields *out, bool *escaped)
{
    const char *p = f->p;
    size_t n = f->n, i = f->i + 1, run = i;
    *escaped = false;
    while (i < n) {
        unsigned char c = (unsigned char)p[i];
        if (c == '"') {
            if (out && i > run && bd_fields_append(out, p + run, i - run) != BD_OK)
                return false;
            f->i = i + 1;
            return true;
        }
        if (c == '\\') {
            *escaped = true;
            if (out && i > run && bd_fields_append(out, p + run, i - run) != BD_OK)
                return false;
            if (i + 1 >= n)
                return false;
            char dec[4];
            size_t dlen = 1;
            switch (p[i + 1]) {
            case '"':
                dec[0] = '"';
                break;
            case '\\':
                dec[0] = '\\';
                break;
            case '/':
                dec[0] = '/';
                break;
            case 'b':
                dec[0] = '\b';
                break;
            case 'f':
                dec[0] = '\f';
                break;
            case 'n':
                dec[0] = '\n';
                break;
            case 'r':
                dec[0] = '\r';
                break;
            case 't':
                dec[0] = '\t';
                break;
            case 'u': {
                long cp = hex4(p, n, i + 2);
                if (cp < 0 || (cp >= 0xdc00 && cp <= 0xdfff))
                    return false;
                if (cp >= 0xd800 && cp <= 0xdbff) {
                    long lo =
                        i + 7 < n && p[i + 6] == '\\' && p[i + 7] == 'u' ? hex4(p, n, i + 8) : -1;
                    if (lo < 0xdc00 || lo > 0xdfff)
                        return false;
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                    i += 6;
                }
                dlen = utf8_encode((unsigned long)cp, dec);
                i += 4;
                break;
            }
            default:
                return false;
            }
            if (out && bd_fields_append(out, dec, dlen) != BD_OK)
                return false;
            i += 2;
            run = i;
            continue;
        }
        if (c < 0x20)
            return false;
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t len = bd_utf8_seq_len((const unsigned char *)p + i, n - i);
        if (len == 0)
            return false;
        i += len;
    }
    return false;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool fast_number(fast *f)
{
    const char *p = f->p;
    size_t n = f->n, i = f->i;
    if (i < n && p[i] == '-')
        i++;
    if (i < n && p[i] == '0') {
        i++;
    } else if (i < n && p[i] >= '1' && p[i] <= '9') {
        while (i < n && is_digit(p[i]))
            i++;
    } else {
        return false;
    }
    if (i < n && p[i] == '.') {
        i++;
        if (i >= n || !is_digit(p[i]))
            return false;
        while (i < n && is_digit(p[i]))
            i++;
    }
    if ((i < n && (p[i] == 'e' || p[i] == 'E')) || i - f->i > 300)
        return false;
    f->i = i;
    return true;
}

static bool fast_literal(fast *f, const char *word, size_t len)
{
    if (f->n - f->i < len || memcmp(f->p + f->i, word, len) != 0)
        return false;
    f->i += len;
    return true;
}

static bool fast_value(fast *f, int depth);

/* The object at f->i ('{'), nested inside the record. */
static bool fast_object(fast *f, int depth)
{
    size_t base = f->nkeys;
    f->i = skip_ws(f->p, f->i + 1, f->n);
    if (f->i < f->n && f->p[f->i] == '}') {
        f->i++;
        return true;
    }
    for (;;) {
        if (f->i >= f->n || f->p[f->i] != '"' || f->nkeys == FAST_KEYS)
            return false;
        size_t ks = f->i + 1;
        bool escaped;
        if (!fast_string(f, NULL, &escaped) || escaped)
            return false;
        size_t klen = f->i - 1 - ks;
        for (size_t k = base; k < f->nkeys; k++) {
            if (f->keys[k].len == klen && memcmp(f->p + f->keys[k].off, f->p + ks, klen) == 0)
                return false;
        }
        f->keys[f->nkeys].off = ks;
        f->keys[f->nkeys].len = klen;
        f->nkeys++;
        f->i = skip_ws(f->p, f->i, f->n);
        if (f->i >= f->n || f->p[f->i] != ':')
            return false;
        f->i = skip_ws(f->p, f->i + 1, f->n);
        if (!fast_value(f, depth + 1))
            return false;
        f->i = skip_ws(f->p, f->i, f->n);
        if (f->i < f->n && f->p[f->i] == ',') {
            f->i = skip_ws(f->p, f->i + 1, f->n);
            continue;
        }
        if (f->i < f->n && f->p[f->i] == '}') {
            f->i++;
            f->nkeys = base;
            return true;
        }
        return false;
    }
}

static bool fast_array(fast *f, int depth)
{
    f->i = skip_ws(f->p, f->i + 1, f->n);
    if (f->i < f->n && f->p[f->i] == ']') {
        f->i++;
        return true;
    }
    for (;;) {
        if (!fast_value(f, depth + 1))
            return false;
        f->i = skip_ws(f->p, f->i, f->n);
        if (f->i < f->n && f->p[f->i] == ',') {
            f->i = skip_ws(f->p, f->i + 1, f->n);
            continue;
        }
        if (f->i < f->n && f->p[f->i] == ']') {
            f->i++;
            return true;
        }
        return false;
    }
}

/* Validates the value at f->i (nested: its text is copied, not decoded). */
static bool fast_value(fast *f, int depth)
{
    bool escaped;
    if (f->i >= f->n || depth > FAST_DEPTH)
        return false;
    switch (f->p[f->i]) {
    case '"':
        return fast_string(f, NULL, &escaped);
    case '{':
        return fast_object(f, depth);
    case '[':
        return fast_array(f, depth);
    case 't':
        return fast_literal(f, "true", 4);
    case 'f':
        return fast_literal(f, "false", 5);
    case 'n':
        return fast_literal(f, "null", 4);
    default:
        return fast_number(f);
    }
}

/* One member value of the record, added to out under key. */
static bool fast_member(fast *f, bd_fields *out, const char *key, size_t klen)
{
    size_t vs = f->i;
    bool escaped;
    if (vs >= f->n)
        return false;
    switch (f->p[vs]) {
    case '"':
        return bd_fields_add(out, key, klen, "", 0) == BD_OK && fast_string(f, out, &escaped);
    case '{':
    case '[':
        return fast_value(f, 1) && bd_fields_add(out, key, klen, "", 0) == BD_OK &&
               append_compact(out, f->p, vs, f->i) == BD_OK;
    case 't':
        return fast_literal(f, "true", 4) && bd_fields_add(out, key, klen, "true", 4) == BD_OK;
    case 'f':
        return fast_literal(f, "false", 5) && bd_fields_add(out, key, klen, "false", 5) == BD_OK;
    case 'n':
        return fast_literal(f, "null", 4) && bd_fields_add(out, key, klen, NULL, 0) == BD_OK;
    default:
        return fast_number(f) && bd_fields_add(out, key, klen, f->p + vs, f->i - vs) == BD_OK;
    }
}

static bool fast_parse(const char *line, size_t len, bd_fields *out)
{
    fast f;
    f.p = line;
    f.n = len;
    f.nkeys = 0;
    f.i = skip_ws(line, 0, len);
    if (f.i >= len || line[f.i] != '{')
        return false;
    f.i = skip_ws(line, f.i + 1, len);
    if (f.i < len && line[f.i] == '}') {
        f.i++;
    } else {
        for (;;) {
            if (f.i >= len || line[f.i] != '"')
                return false;
            size_t ks = f.i + 1;
            bool escaped;
            if (!fast_string(&f, NULL, &escaped) || escaped)
                return false;
            size_t klen = f.i - 1 - ks;
            if (klen == 0 || bd_fields_count(out) == BD_FIELDS_MAX)
                return false;
            if (bd_fields_has(out, line + ks, klen))
                return false;
            f.i = skip_ws(line, f.i, len);
            if (f.i >= len || line[f.i] != ':')
                return false;
            f.i = skip_ws(line, f.i + 1, len);
            if (!fast_member(&f, out, line + ks, klen))
                return false;
            f.i = skip_ws(line, f.i, len);
            if (f.i < len && line[f.i] == ',') {
                f.i = skip_ws(line, f.i + 1, len);
                continue;
            }
            if (f.i < len && line[f.i] == '}') {
                f.i++;
                break;
            }
            return false;
        }
    }
    return skip_ws(line, f.i, len) == len;
}

bd_result bd_jsonl_parse(const char *line, size_t len, bd_fields *out, char *why, size_t whylen)
{
    bd_fields_clear(out);
    if (fast_parse(line, len, out))
        return BD_OK;
    return bd_jsonl_parse_jansson(line, len, out, why, whylen);
}
