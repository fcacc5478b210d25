/* Streaming record source for imports: a JSON Lines or CSV file (or standard input, or a .gz
 * file decompressed by a gzip child process) read in large chunks and handed out one record at
 * a time. The reader owns its buffers, its record object and any gzip child; bd_reader_close
 * releases all of them. Nothing is allocated per record. */
#ifndef BD_INGEST_READER_H
#define BD_INGEST_READER_H

#include <stdint.h>

#include "core/result.h"
#include "ingest/csv.h"
#include "ingest/fields.h"

typedef enum { BD_FMT_AUTO, BD_FMT_JSONL, BD_FMT_CSV } bd_format;

/* Longest physical line, and longest CSV record, the reader accepts (bytes, line break
 * excluded). */
#define BD_READER_LINE_MAX (1024u * 1024)

typedef struct bd_reader bd_reader;

/* Opens path for reading. path "-" is standard input (not closed by bd_reader_close). A path
 * ending in ".gz" is decompressed by running `gzip -dc -- path` (found on PATH). BD_FMT_AUTO
 * picks CSV for names ending .csv or .csv.gz, else JSONL. For CSV, the header row is read here
 * (blank lines before it skipped, a UTF-8 byte order mark dropped).
 * Returns BD_OK with *out set; BD_ERR_IO (why set) when the file cannot be opened, is a
 * directory, gzip cannot be started, the header cannot be read (empty file, read error); or
 * BD_ERR_INVALID (why set) when the header row is malformed (duplicate or empty column
 * names); BD_ERR_NOMEM. Any failure leaves *out NULL and nothing to close. why is truncated to
 * whylen. */
bd_result bd_reader_open(const char *path, bd_format fmt, bd_reader **out, char *why,
                         size_t whylen);

/* Reads the next record. Returns
 *   BD_OK             *rec set, valid until the next call or close; *line = the 1-based
 *                     physical line where the record starts;
 *   BD_ERR_INVALID    a bad record (why and *line set); the caller may go on reading. This
 *                     covers a line longer than BD_READER_LINE_MAX, which is skipped up to its
 *                     end without being buffered ("line longer than 1 MiB"), and a CSV quoted
 *                     cell that does not close properly: still open at the end of the input,
 *                     after BD_READER_LINE_MAX bytes or at an over-long line, or closed on a
 *                     later line with text after the quote. That costs only the line where the
 *                     quote opened ("unclosed quote: ..."): the lines after it are read again
 *                     as records of their own;
 *   BD_ERR_NOT_FOUND  end of input (again on every later call);
 *   BD_ERR_IO         a read error, or gzip exited non-zero (why holds gzip's message); the
 *                     reader is then finished: later calls return BD_ERR_IO again;
 *   BD_ERR_NOMEM.
 * Lines holding only spaces, tabs and \r are skipped (JSONL); empty lines (or a lone \r)
 * between CSV records are skipped. A JSONL record may end in \r\n. A final line without a line
 * break is a record. A UTF-8 byte order mark at the start of the input is dropped. */
bd_result bd_reader_next(bd_reader *r, const bd_fields **rec, uint64_t *line, char *why,
                         size_t whylen);

/* Input bytes consumed so far (decompressed bytes for .gz), for progress display. */
uint64_t bd_reader_bytes_read(const bd_reader *r);
/* Size of the file for a regular uncompressed file (not standard input), else -1. */
int64_t bd_reader_bytes_total(const bd_reader *r);
/* The format in use (never BD_FMT_AUTO). */
bd_format bd_reader_format(const bd_reader *r);
/* For CSV, the header's column names (valid until close); NULL for JSONL. */
const bd_csv_header *bd_reader_csv_header(const bd_reader *r);

/* Closes the input, stops and reaps a gzip child still running, frees r. NULL is a no-op. */
void bd_reader_close(bd_reader *r);

#endif
