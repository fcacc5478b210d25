/* Text for an operator's terminal. Imported data (breach names, field names quoted in a
 * rejection reason) may hold escape sequences that would retitle the window, move the cursor
 * over earlier output or answer back to the terminal, so everything data-derived that a
 * command prints goes through here.
 *
 * Printable ASCII and valid UTF-8 pass unchanged. C0 controls (tab and line breaks included),
 * DEL, C1 controls (U+0080..U+009F, written in UTF-8 as C2 80..C2 9F) and every byte that is
 * not part of a valid UTF-8 sequence (overlong forms, surrogates and code points past
 * U+10FFFF included) are written as \xNN, one escape per byte, in lower-case hex. */
#ifndef BD_CORE_TERM_H
#define BD_CORE_TERM_H

#include <stddef.h>
#include <stdio.h>

/* Writes s[0..n) to f, escaped as above. Returns 0, or EOF when writing failed. */
int bd_term_write(FILE *f, const char *s, size_t n);

/* Formats like fprintf (format and arguments together, at most 4 KiB: the rest is cut) and
 * writes the result escaped, so a caller adds its own '\n' after. Returns 0, or EOF. */
int bd_term_printf(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
