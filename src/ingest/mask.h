/* Masking applied at import, so that unmasked passwords, SSNs, card numbers and CVVs never reach
 * the store (PRODUCT.md section 2, "Masking"). Nothing here allocates. */
#ifndef BD_INGEST_MASK_H
#define BD_INGEST_MASK_H

#include <stdbool.h>
#include <stddef.h>

#include "core/result.h"
#include "core/slice.h"
#include "core/utf8.h" /* bd_utf8_seq_len, for the files that mask and parse */

/* Password: every code point but the last two replaced by '*', one '*' per code point; a
 * password of 1 or 2 code points becomes all '*' ("ab" -> "**", "pässwörd" -> "******rd").
 * Code points are counted in UTF-8: a well-formed sequence (no overlong forms, surrogates or
 * values past U+10FFFF) is one code point, and so is every byte that is not part of one; such
 * a byte is replaced like any other when masked, and kept as is among the last two.
 * Writes a NUL-terminated string into out (capacity outcap, NUL included) and sets *out_len.
 * Returns BD_ERR_LIMIT when the result does not fit (out then holds "" if outcap > 0). */
bd_result bd_mask_password(bd_slice pw, char *out, size_t outcap, size_t *out_len);

/* SSN from its 9 normalised digits: "*******" followed by the last two digits, NUL-terminated
 * in out (10 bytes). */
void bd_mask_ssn(const char digits9[9], char out[10]);

/* Card: the first 6 and last 4 digits visible, one 'X' per hidden digit: 411111XXXXXX1111,
 * 378282XXXXX0005. digits holds n digits, 12 <= n <= 19; out has n+1 bytes and receives a
 * NUL-terminated string. */
void bd_mask_card(const char *digits, size_t n, char *out);

/* CVV: one '*' per digit, so that its length still shows ("123" -> "***", "1234" -> "****").
 * n is the number of digits, 3 or 4 (more gives 4 stars); out receives a NUL-terminated
 * string. */
void bd_mask_cvv(size_t n, char out[5]);

/* The CVV a reply shows for a stored one: its mask, as static text ({NULL, 0} stays so).
 * Idempotent on a mask; a reply never shows a digit of a CVV, whatever a store upgraded from
 * before CVVs were masked still holds (src/ingest/cvv.h). */
bd_slice bd_mask_cvv_shown(bd_slice stored);

/* Card number as imported: digits, optionally separated by spaces or dashes, reduced to its
 * digits in out (NUL-terminated, 20 bytes) with *n set. Returns false (out unspecified) when
 * any other character appears or the number does not have 12..19 digits. */
bool bd_card_digits(bd_slice v, char out[20], size_t *n);

#endif
