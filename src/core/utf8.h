/* UTF-8 checks shared by the JSON writer and the import: one rule for what is well-formed,
 * and one repair (each byte that is not part of a well-formed sequence becomes U+FFFD, as
 * the JSON writer shows it). */
#ifndef BD_CORE_UTF8_H
#define BD_CORE_UTF8_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"
#include "core/result.h"
#include "core/slice.h"

/* Length of the well-formed UTF-8 sequence at p (1..4), or 0 when the bytes there are not
 * one (overlong forms, surrogates, code points past U+10FFFF, truncation and avail == 0
 * included). These are jansson's rules too. */
size_t bd_utf8_seq_len(const unsigned char *p, size_t avail);
/* Whether all of s is well-formed UTF-8. */
bool bd_utf8_valid(bd_slice s);
/* Appends s to out with every byte outside a well-formed sequence replaced by U+FFFD.
 * BD_ERR_LIMIT or BD_ERR_NOMEM from the buffer. */
bd_result bd_utf8_append_repaired(bd_buf *out, bd_slice s);

#endif
