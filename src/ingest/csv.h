/* CSV import records (RFC 4180): a header row naming the columns, then one record per row.
 * Comma separator; a quoted cell may hold commas, line breaks and "" for a quote; records end
 * in \n or \r\n. A quote inside an unquoted cell is kept as a literal character (real dumps
 * have them); text after a closing quote is an error. Records reach this module whole: the
 * reader joins physical lines until bd_csv_record_complete (or a bd_csv_scan) says so, so a
 * line break outside quotes never reaches the parsers (they would keep it as cell content). */
#ifndef BD_INGEST_CSV_H
#define BD_INGEST_CSV_H

#include <stdbool.h>
#include <stddef.h>

#include "core/result.h"
#include "ingest/fields.h"

/* Incremental quote tracking, for a reader that appends physical lines one at a time without
 * rescanning the record from its start. Plain value: no allocation, no cleanup. */
typedef struct {
    int state;
} bd_csv_scan;

/* Starts a new record. */
void bd_csv_scan_init(bd_csv_scan *s);
/* Feeds the next n bytes of the record (line breaks between physical lines included) and
 * returns true when the bytes fed so far form a complete record: no quoted cell left open. */
bool bd_csv_scan_feed(bd_csv_scan *s, const char *p, size_t n);

/* true when rec holds a complete record (quotes balanced), so a reader appends the next
 * physical line otherwise. A malformed record (text after a closing quote) counts as complete:
 * the row parser then reports it. */
bool bd_csv_record_complete(const char *rec, size_t len);

/* true when rec[0..len) is a well-formed record: every quoted cell closes and is followed by a
 * comma or the end of the record (a trailing \r is ignored). The cell count is not checked.
 * A reader that joined lines for a quote uses it to tell a stray quote from a bad row. */
bool bd_csv_record_well_formed(const char *rec, size_t len);

/* The column names of a file, in order. Owns copies of the names. */
typedef struct bd_csv_header bd_csv_header;

/* Returns an empty header, or NULL when out of memory. */
bd_csv_header *bd_csv_header_new(void);
/* Frees h; NULL is a no-op. */
void bd_csv_header_free(bd_csv_header *h);
/* Sets how h's records (and its header row, when parsed after this) are split: sep between
 * cells, and whether '"' quotes a cell. The default is ',' with quotes (RFC 4180); TSV is
 * '\t' without quotes (IANA text/tab-separated-values: a '"' is an ordinary character). */
void bd_csv_header_set_dialect(bd_csv_header *h, char sep, bool quotes);
size_t bd_csv_header_count(const bd_csv_header *h);
/* Name of column i (i < count), NUL-terminated. */
const char *bd_csv_header_name(const bd_csv_header *h, size_t i);

/* Parses the header record rec[0..len) (without its final line break; a trailing \r is
 * dropped) into h, replacing what it held. A UTF-8 byte order mark at the start is skipped.
 * Returns BD_OK; BD_ERR_INVALID (why set, h left empty) for a malformed record, an empty
 * column name, a name holding a NUL byte, a name that appears twice, or more than
 * BD_FIELDS_MAX columns; BD_ERR_NOMEM. why names columns by position and never quotes a
 * name (the first row of a headerless file may hold passwords). why is truncated to whylen
 * and may be NULL when whylen is 0. */
bd_result bd_csv_parse_header(const char *rec, size_t len, bd_csv_header *h, char *why,
                              size_t whylen);

/* Parses one data record rec[0..len) (as for the header) into out, replacing its contents:
 * one field per column, named after it. An empty unquoted cell is a null field (absent, like
 * JSON null); a quoted empty "" is present with length 0. Values keep every byte, NUL
 * included. Returns BD_OK; BD_ERR_INVALID (why set, out left cleared) when the record is
 * malformed or its cell count differs from the header's; BD_ERR_LIMIT, BD_ERR_NOMEM from
 * bd_fields. */
bd_result bd_csv_parse_row(const bd_csv_header *h, const char *rec, size_t len, bd_fields *out,
                           char *why, size_t whylen);

#endif
