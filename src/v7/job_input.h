/* The identities of a bulk job's request body (POST {base}/jobs): a JSON object, CSV or plain
 * text, read in place without allocation per identity (no JSON document is built: a JSON body
 * is checked and its accounts counted first, so one of more than BD_JOB_MAX_IDENTITIES is
 * refused before any is handed on). Nothing here knows HTTP; fuzz_job_input drives it with
 * arbitrary bytes.
 *
 *   JSON        {"type": "email", "accounts": ["a@example.com", ...]}: exactly these two
 *               members ("type" may be left to the caller, see bd_job_input_read), every
 *               account a string
 *   text/plain  one identity per line (\n or \r\n); empty lines are skipped
 *   text/csv    RFC 4180; the identity is each record's first cell, the other cells are
 *               ignored; a first record whose first cell is "account" or the type's name
 *               (ASCII case ignored) is a header and skipped; empty records are skipped */
#ifndef BD_V7_JOB_INPUT_H
#define BD_V7_JOB_INPUT_H

#include <stdbool.h>
#include <stddef.h>

#include "core/result.h"
#include "core/slice.h"

#define BD_JOB_MAX_IDENTITIES 100000
#define BD_JOB_TYPE_MAX 64 /* bytes for a type's text, NUL included */

typedef enum { BD_JOB_INPUT_JSON, BD_JOB_INPUT_CSV, BD_JOB_INPUT_TEXT } bd_job_input_format;

/* The format a Content-Type names (parameters such as charset ignored); false when it names
 * none of the three. */
bool bd_job_input_format_of(const char *content_type, bd_job_input_format *out);

/* Called for each identity, in order; value is valid during the call only. Non-zero stops
 * the reading, which then returns BD_ERR_INVALID with why left as the callback wrote it. */
typedef int (*bd_job_identity_cb)(void *ctx, size_t index, bd_slice value);

/* Reads body. type is the type named outside the body (the "type" query parameter; ptr NULL
 * when none): a CSV or text body needs it, a JSON body names it there or in its "type"
 * member (both: they must agree). type_out (BD_JOB_TYPE_MAX bytes) gets the type's text,
 * NUL-terminated, before the first identity is passed on. Returns BD_OK with *count
 * identities passed to cb; BD_ERR_LIMIT when the body holds more than BD_JOB_MAX_IDENTITIES
 * (a JSON body: before any is passed on; CSV and text: after the first that many);
 * BD_ERR_INVALID with a sentence in why for a malformed body, which says where (an identity
 * by its index, a fault of JSON by line and column) and never quotes the body's text;
 * BD_ERR_NOMEM. */
bd_result bd_job_input_read(bd_slice body, bd_job_input_format fmt, bd_slice type,
                            char *type_out, bd_job_identity_cb cb, void *ctx,
                            size_t *count, char *why, size_t whylen);

#endif
