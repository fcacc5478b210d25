/* Hexadecimal digits to bytes and back: the one decoder every reader of hex text uses (JSON
 * \u escapes, URI percent-escapes, Pwned Passwords hashes and prefixes, hashes breachd
 * stored as hex). Each function says which case it accepts and reads no byte past the
 * length it is given. */
#ifndef BD_CORE_HEX_H
#define BD_CORE_HEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/slice.h"

typedef enum {
    BD_HEX_ANY_CASE, /* 0-9, a-f, A-F: what people and other programs write */
    BD_HEX_LOWER,    /* 0-9, a-f only: what breachd (and PostgreSQL's encode()) wrote */
} bd_hex_case;

/* The value (0 to 15) of the hex digit c, or -1 when c is not one in the case accepted. */
int bd_hex_digit(char c, bd_hex_case accepted);

/* The value of the n hex digits at p, any case (1 <= n <= 7, so it fits an int32_t), or -1
 * when one is not a hex digit. The digits are read in order and the first byte that is not
 * one ends the reading, so a NUL-terminated string shorter than n is read safely; otherwise
 * the caller sees that p holds n bytes. n outside 1..7 returns -1. */
int32_t bd_hex_value(const char *p, size_t n);

/* Decodes exactly 2 * n hex digits into n bytes at out. Returns false when hex.len is not
 * 2 * n or a byte is not a hex digit in the case accepted; out may then be partly written. */
bool bd_hex_decode(bd_slice hex, uint8_t *out, size_t n, bd_hex_case accepted);

/* Writes the n bytes at in as 2 * n lower-case hex digits at out, without a terminator. */
void bd_hex_encode(const uint8_t *in, size_t n, char *out);

#endif
