/* JSON Lines import records: one line holding one JSON object -> bd_fields. What is accepted
 * and every error message are jansson's; the text of numbers and nested values is taken from
 * the line. Nothing is allocated per record on the common path. */
#ifndef BD_INGEST_JSONL_H
#define BD_INGEST_JSONL_H

#include <stddef.h>

#include "core/result.h"
#include "ingest/fields.h"

/* Parses line[0..len) (no NUL needed; surrounding whitespace, a trailing '\r' included, is
 * allowed) as one JSON object and replaces the contents of out with its members, in order:
 *   string          its decoded bytes (a \u0000 escape gives a NUL byte; the length is exact)
 *   number          its JSON text as written ("7.5", "1e5", "-0", "12345678901234567890")
 *   true / false    "true" / "false"
 *   null            a null field: listed by name, bd_fields_get reports it absent
 *   object / array  its compact JSON text: the text as written, whitespace outside strings
 *                   removed ({"a": [1, 2]} -> {"a":[1,2]}); escapes are kept as written
 * Returns BD_OK; BD_ERR_INVALID when the line is not JSON (invalid UTF-8 included), not an
 * object, repeats a key at any depth, has a key with a NUL byte, or has more than
 * BD_FIELDS_MAX members; BD_ERR_LIMIT, BD_ERR_NOMEM from bd_fields. On error why receives a
 * sentence a person can act on (with jansson's column for syntax errors), out is left cleared,
 * and why is truncated to whylen (it may be NULL when whylen is 0). */
bd_result bd_jsonl_parse(const char *line, size_t len, bd_fields *out, char *why, size_t whylen);

/* The same contract computed by jansson alone. bd_jsonl_parse first tries a single-pass parser
 * without allocation and falls back to this whenever that parser is not sure (every error
 * included); this one is public so tests and fuzz_jsonl can check the two agree. */
bd_result bd_jsonl_parse_jansson(const char *line, size_t len, bd_fields *out, char *why,
                                 size_t whylen);

#endif
