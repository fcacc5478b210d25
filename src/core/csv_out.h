/* CSV output (RFC 4180) for spreadsheet users: cells quoted when they hold a comma, quote,
 * CR or LF, rows ended by CRLF, and a guard against formula injection (OWASP "CSV
 * injection"): a cell that begins with = + - @ tab or CR gets a leading apostrophe, so a
 * spreadsheet shows breach data as text instead of running it. */
#ifndef BD_CORE_CSV_OUT_H
#define BD_CORE_CSV_OUT_H

#include <stdbool.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/slice.h"

/* Appends one cell (first: no separator before it); v.ptr NULL is an empty cell. Quoted
 * when it holds a comma, quote or line break (a quote doubled), and led by ' when it starts
 * with = + - @ tab or CR, so that a spreadsheet never reads it as a formula. */
bd_result bd_csv_cell(bd_buf *b, bd_slice v, bool first);
/* The same without a separator, and quoted whatever it holds; nothing for NULL or "". */
bd_result bd_csv_cell_quoted(bd_buf *b, bd_slice v);
/* Appends one cell holding a number (never guarded: it is ours). */
bd_result bd_csv_int(bd_buf *b, int64_t v, bool first);
/* Appends one cell holding a finite double in shortest round-trip form; empty when absent. */
bd_result bd_csv_double(bd_buf *b, double v, bool present, bool first);
/* Ends the row. */
bd_result bd_csv_row_end(bd_buf *b);
/* A header row of NULL-terminated names. */
bd_result bd_csv_header(bd_buf *b, const char *const *names);

#endif
