/* Why a JSON Lines line is invalid: jansson's error turned into fixed text located by field. */
#include <stdio.h>
#include <string.h>

#include "ingest/fields.h"
#include "ingest/jsonl_impl.h"

/* ---- Rejection reasons ----
 * jansson's messages quote the input ("... near '\"Plaintext'", "control character 0x1",
 * "unable to decode byte 0xe9"), and in a breach dump that input is often a password. A
 * reason here is fixed text, located by the field it concerns, never a byte of the line. */

/* jansson's message prefixes, most specific first, and what is said instead. */
static const struct {
    const char *prefix, *reason;
} JSON_REASONS[] = {
    {"unable to decode byte", "a byte that is not valid UTF-8"},
    {"Invalid UTF-8", "a byte that is not valid UTF-8"},
    {"control character", "a control character inside a string (it must be escaped)"},
    {"unexpected newline", "a line break inside a string"},
    {"invalid Unicode", "an invalid \\u escape"},
    {"invalid escape", "an invalid backslash escape"},
    {"premature end of input", "the line ends inside the object"},
    {"end of file expected", "text after the end of the object"},
    {"string or '}' expected", "a field name in double quotes or '}' expected"},
    {"':' expected", "':' expected after a field name"},
    {"'}' expected", "',' or '}' expected"},
    {"']' expected", "',' or ']' expected"},
    {"invalid token", "a word that is not JSON (text needs double quotes)"},
    {"unexpected token", "an unexpected token"},
    {"too big", "a number too large"},
    {"real number overflow", "a number too large"},
    {"maximum parsing depth", "objects or arrays nested too deeply"},
};

static const char *json_reason(const json_error_t *err)
{
    for (size_t i = 0; i < sizeof JSON_REASONS / sizeof JSON_REASONS[0]; i++)
        if (strncmp(err->text, JSON_REASONS[i].prefix, strlen(JSON_REASONS[i].prefix)) == 0)
            return JSON_REASONS[i].reason;
    return "invalid JSON";
}

enum { AT_START, IN_NAME, IN_VALUE, AFTER_VALUE };

/* p[i] is an opening quote: the index after its closing quote, or n when the string runs to
 * the end of the line unclosed (*closed false). */
static size_t string_end(const char *p, size_t i, size_t n, bool *closed)
{
    for (i++; i < n; i++) {
        if (p[i] == '\\') {
            i++;
        } else if (p[i] == '"') {
            *closed = true;
            return i + 1;
        }
    }
    *closed = false;
    return n;
}

/* Where byte off (n: the end of the line) of an invalid line falls among the members of its
 * top-level object: before any member (AT_START), in or just after a string in the place of a
 * field name (IN_NAME, *cand set to it), in a value (IN_VALUE), or between a value and the
 * next name (AFTER_VALUE). *name is set to the last string that a ':' confirmed as a field
 * name; a string only in the place of one may be a value in a malformed line, so *cand is
 * for messages that jansson already confirmed as a name (a duplicate). */
static int locate(const char *p, size_t n, size_t off, bd_slice *name, bd_slice *cand)
{
    size_t i = skip_ws(p, 0, n);
    if (i >= n || p[i] != '{' || off <= i)
        return AT_START;
    int at = AT_START, depth = 0; /* depth: nesting inside the current value */
    for (i++; i < n && i <= off; i++) {
        char c = p[i];
        if (c == '"') {
            bool closed;
            size_t end = string_end(p, i, n, &closed);
            if (depth == 0 && (at == AT_START || at == AFTER_VALUE)) {
                *cand = (bd_slice){p + i + 1, end - i - 1 - closed};
                at = IN_NAME;
            } else if (depth == 0 && at == IN_VALUE && off >= end && closed) {
                at = AFTER_VALUE;
            }
            if (off < end || !closed)
                return at;
            i = end - 1;
        } else if (c == ':' && depth == 0 && at == IN_NAME) {
            *name = *cand;
            at = IN_VALUE;
        } else if ((c == '{' || c == '[') && at == IN_VALUE) {
            depth++;
        } else if ((c == '}' || c == ']') && depth > 0 && --depth == 0 && off > i) {
            at = AFTER_VALUE;
        } else if (c == ',' && depth == 0 && at == IN_VALUE) {
            at = AFTER_VALUE; /* the next name starts a new member */
        } else if (is_ws(c) && depth == 0 && at == IN_VALUE && !is_ws(p[i - 1]) &&
                   p[i - 1] != ':') {
            at = AFTER_VALUE; /* a bare value (number, word) ended */
        }
    }
    return at;
}

/* Writes the name in quotes into out when it is a plain field name (printable ASCII without
 * quotes or backslashes, at most 64 bytes), else "a field"; returns out. */
static const char *field_phrase(bd_slice name, char *out, size_t cap)
{
    bool plain = name.len > 0 && name.len <= 64;
    for (size_t i = 0; plain && i < name.len; i++)
        plain =
            name.ptr[i] > 0x20 && name.ptr[i] < 0x7f && name.ptr[i] != '"' && name.ptr[i] != '\\';
    if (plain)
        snprintf(out, cap, "\"%.*s\"", (int)name.len, name.ptr);
    else
        snprintf(out, cap, "a field");
    return out;
}

/* Explains why jansson refused the line: a fixed reason, and where, by field. */
void bd_jsonl_error_why(const char *line, size_t len, const json_error_t *err, char *why,
                        size_t whylen)
{
    bool eof = json_error_code(err) == json_error_premature_end_of_input ||
               strstr(err->text, " near end of file") != NULL;
    size_t off = eof || err->position < 1 ? len : (size_t)err->position - 1;
    bd_slice name = {NULL, 0}, cand = {NULL, 0};
    int at = locate(line, len, off < len ? off : len, &name, &cand);
    const char *reason = eof ? "the line ends inside the object" : json_reason(err);
    char field[80];
    field_phrase(json_error_code(err) == json_error_duplicate_key && at == IN_NAME ? cand : name,
                 field, sizeof field);
    if (json_error_code(err) == json_error_duplicate_key)
        bd_why(why, whylen, "a field name appears twice%s %s", at == IN_NAME ? ":" : " inside",
               field);
    else if (at == IN_VALUE)
        bd_why(why, whylen, "not valid JSON in the value of %s: %s", field, reason);
    else if (name.ptr && (at == IN_NAME || at == AFTER_VALUE))
        bd_why(why, whylen, "not valid JSON after the value of %s: %s", field, reason);
    else
        bd_why(why, whylen, "not valid JSON before the first field: %s", reason);
}
