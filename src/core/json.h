/* Streaming JSON writer into a capped bd_buf: no document tree is built. Commas between
 * members and elements are inserted automatically. String output is always valid UTF-8:
 * quotes, backslashes and control characters are escaped, and any byte sequence that is not
 * well-formed UTF-8 is replaced by U+FFFD, never passed through.
 *
 * Errors are sticky: the first failing append (BD_ERR_LIMIT, BD_ERR_NOMEM) is remembered in
 * w->err and later calls do nothing, so a caller checks once with bd_json_result() at the end. */
#ifndef BD_CORE_JSON_H
#define BD_CORE_JSON_H

#include <stdbool.h>
#include <stdint.h>

#include "core/buf.h"

#define BD_JSON_MAX_DEPTH 32

typedef struct {
    bd_buf *out;
    bd_result err;
    int depth;
    bool need_comma[BD_JSON_MAX_DEPTH + 1];
    bool after_key;
} bd_json;

void bd_json_init(bd_json *w, bd_buf *out);
bd_result bd_json_result(const bd_json *w);

void bd_json_object_begin(bd_json *w);
void bd_json_object_end(bd_json *w);
void bd_json_array_begin(bd_json *w);
void bd_json_array_end(bd_json *w);
/* Member name inside an object; the next value call writes its value. */
void bd_json_key(bd_json *w, const char *name);
/* The same for a name written in the source as a string literal (only a literal compiles):
 * it goes out quoted in one copy, without the scan for bytes to escape. Our names are
 * plain ASCII; tests compare both forms. */
#define BD_JSON_KEY(w, literal)                                                                    \
    bd_json_key_quoted((w), "\"" literal "\":", sizeof("\"" literal "\":") - 1)
#define BD_JSON_MEMBER_STRING(w, literal, s, empty_is_null)                                        \
    bd_json_member_string_quoted((w), "\"" literal "\":", sizeof("\"" literal "\":") - 1, (s),     \
                                 (empty_is_null))
void bd_json_key_quoted(bd_json *w, const char *quoted_colon, size_t n);

void bd_json_string(bd_json *w, bd_slice s);
void bd_json_cstring(bd_json *w, const char *s); /* NULL writes null */
void bd_json_null(bd_json *w);
void bd_json_bool(bd_json *w, bool v);
void bd_json_int(bd_json *w, int64_t v);
/* Finite doubles in shortest round-trip form; NaN and infinities write null. */
void bd_json_double(bd_json *w, double v);
/* Appends text that is already valid JSON (e.g. a stored, pre-encoded value). */
void bd_json_raw(bd_json *w, bd_slice json);

/* A member whose value is s, or null when s.ptr is NULL (or, with empty_is_null, when s is
 * empty). */
void bd_json_member_string(bd_json *w, const char *key, bd_slice s, bool empty_is_null);
void bd_json_member_string_quoted(bd_json *w, const char *quoted_colon, size_t n, bd_slice s,
                                  bool empty_is_null);

/* Appends s to out as the contents of a JSON string (no surrounding quotes). */
bd_result bd_json_escape(bd_buf *out, bd_slice s);

#endif
