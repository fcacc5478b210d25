/* JSON Lines record parser: jansson validates and decodes strings; a small scanner over the
 * already validated line recovers the exact text of numbers and nested values. */
#include "ingest/jsonl.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void set_why(char *why, size_t whylen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_why(char *why, size_t whylen, const char *fmt, ...)
{
    if (!why || whylen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, whylen, fmt, ap);
    va_end(ap);
}

static bool is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The scanner below only ever sees text jansson accepted, so it need not validate; it still
 * never reads past n. */
static size_t skip_ws(const char *p, size_t i, size_t n)
{
    while (i < n && is_ws(p[i]))
        i++;
    return i;
}

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

bd_result bd_jsonl_parse(const char *line, size_t len, bd_fields *out, char *why, size_t whylen)
{
    bd_result r = BD_OK;
    bd_fields_clear(out);
    if (skip_ws(line, 0, len) == len) {
        set_why(why, whylen, "the line is empty: each line must hold one JSON object");
        return BD_ERR_INVALID;
    }
    json_error_t err;
    json_t *root = json_loadb(
        line, len,
        JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL | JSON_DECODE_ANY | JSON_DECODE_INT_AS_REAL, &err);
    if (!root) {
        if (json_error_code(&err) == json_error_duplicate_key)
            set_why(why, whylen, "a field name appears twice (column %d): %s", err.column,
                    err.text);
        else
            set_why(why, whylen, "not valid JSON at column %d: %s", err.column, err.text);
        return BD_ERR_INVALID;
    }
    if (!json_is_object(root)) {
        set_why(why, whylen, "each line must hold one JSON object, not %s", type_phrase(root));
        r = BD_ERR_INVALID;
        goto free_root;
    }
    if (json_object_size(root) > BD_FIELDS_MAX) {
        set_why(why, whylen, "a record may have at most %d fields, this one has %zu", BD_FIELDS_MAX,
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
            set_why(why, whylen, "the line could not be read as a JSON object");
            r = BD_ERR_INVALID;
            goto free_root;
        }
        r = add_member(out, json_object_iter_key(it), json_object_iter_key_len(it),
                       json_object_iter_value(it), line, vs, ve);
        if (r != BD_OK) {
            if (r == BD_ERR_INVALID)
                set_why(why, whylen, "a field name must not be empty or contain a NUL byte");
            else if (r == BD_ERR_LIMIT)
                set_why(why, whylen, "the record is too large");
            else
                set_why(why, whylen, "out of memory while reading the record");
            goto free_root;
        }
    }
free_root:
    json_decref(root);
    if (r != BD_OK)
        bd_fields_clear(out);
    return r;
}
