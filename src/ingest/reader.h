/* Streaming record source for imports: a JSON Lines, CSV, TSV, combo-list or stealer-log file
 * (or standard input), plain or compressed (gzip, zstd, xz, bzip2: source.h), read in large
 * chunks and handed out one record at a time. The reader owns its buffers, its record objects
 * and its source; bd_reader_close releases all of them. Nothing is allocated per record. */
#ifndef BD_INGEST_READER_H
#define BD_INGEST_READER_H

#include <stdint.h>

#include "core/result.h"
#include "ingest/colmap.h"
#include "ingest/csv.h"
#include "ingest/fields.h"

typedef enum {
    BD_FMT_AUTO,
    BD_FMT_JSONL,
    BD_FMT_CSV,
    BD_FMT_TSV,     /* tab-separated, a '"' is an ordinary character */
    BD_FMT_COMBO,   /* login SEP password: fields email or user_name, password */
    BD_FMT_STEALER, /* URL SEP login SEP password: also other_attributes {"site":"host"} */
} bd_format;

/* What happens to text that is not well-formed UTF-8. */
typedef enum {
    BD_UTF8_KEEP,   /* passed on as it is (the importer repairs what it stores) */
    BD_UTF8_STRICT, /* the record is rejected, naming the field */
    BD_UTF8_LOSSY,  /* each stray byte becomes U+FFFD before the record is parsed */
} bd_utf8_mode;

typedef struct {
    bd_format format;
    char separator;            /* combo lists: the separator, 0 to detect it per file */
    const bd_colmap *map;      /* CSV/TSV: source column -> field, or NULL */
    const char *columns;       /* CSV/TSV: comma-separated names of a headerless file's columns */
    bool drop_unmapped;        /* CSV/TSV: drop columns neither mapped nor named like a field */
    const char *const *fields; /* the import's field names (NULL-terminated), for planning */
    bd_utf8_mode utf8;
    uint64_t memory_limit; /* what a decoder may use, in bytes (source.h); 0: the default */
    bool follow_links;     /* open path when it is a symbolic link too (see bd_reader_open) */
} bd_reader_options;

/* Longest physical line, and longest CSV record, the reader accepts (bytes, line break
 * excluded). */
#define BD_READER_LINE_MAX (1024u * 1024)

typedef struct bd_reader bd_reader;

/* Opens path for reading. path "-" is standard input (not closed by bd_reader_close). The
 * input's first bytes decide whether it is decompressed (source.h): a gzip, zstd, xz or bzip2
 * stream is, whatever its name; a plain file is read as it is, whatever its name. BD_FMT_AUTO
 * picks CSV for names ending .csv, TSV for .tsv (either maybe followed by .gz, .zst, .xz or
 * .bz2), else JSONL; combo lists and stealer logs are never guessed. For CSV/TSV, the header
 * row is read here (blank lines before it skipped, a UTF-8 byte order mark dropped) unless
 * o->columns names the columns, and the columns are planned when o->map or
 * o->drop_unmapped is set (colmap.h). A combo list without a separator has it detected from
 * the lines of its first 256 KiB (bd_combo_detect_separator).
 * Unless o->follow_links, a path that is a symbolic link is opened only when the link leads
 * to a pipe or a socket (the /dev/fd/N of a shell's process substitution): the check is the
 * open itself (O_NOFOLLOW), so a file swapped for a link after it was listed is not read.
 * Returns BD_OK with *out set; BD_ERR_IO (why set) when the file cannot be opened, is a
 * symbolic link as above ("it is a symbolic link"), is a directory, the header cannot be read
 * (empty file, read error, corrupt compressed data); or BD_ERR_INVALID (why set) when the header
 * row or --columns is malformed (duplicate or empty column names), the plan fails,
 * --map/--columns/--drop-unmapped are given for a format without columns, or no combo separator is
 * found; BD_ERR_NOMEM. Any failure leaves *out NULL and nothing to close. why is truncated to
 * whylen. */
bd_result bd_reader_open_with(const char *path, const bd_reader_options *o, bd_reader **out,
                              char *why, size_t whylen);
/* bd_reader_open_with with only the format set. */
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
 *   BD_ERR_IO         a read error, or corrupt or truncated compressed data (why says which);
 *                     the reader is then finished: later calls return BD_ERR_IO again;
 *   BD_ERR_NOMEM.
 * Lines holding only spaces, tabs and \r are skipped (JSONL, combo, stealer); empty lines (or a
 * lone \r) between CSV/TSV records are skipped. Every format accepts \r\n line ends. A final
 * line without a line break is a record. A UTF-8 byte order mark at the start of the input is
 * dropped. With BD_UTF8_STRICT a CSV/TSV/combo/stealer value that is not UTF-8 is
 * BD_ERR_INVALID ("password is not valid UTF-8 ..."); JSONL is checked by its parser. */
bd_result bd_reader_next(bd_reader *r, const bd_fields **rec, uint64_t *line, char *why,
                         size_t whylen);

/* Input bytes consumed so far (compressed bytes for a compressed file), for progress. */
uint64_t bd_reader_bytes_read(const bd_reader *r);
/* Size of the file for a regular file (not standard input), else -1. */
int64_t bd_reader_bytes_total(const bd_reader *r);
/* The format in use (never BD_FMT_AUTO). */
bd_format bd_reader_format(const bd_reader *r);
/* For CSV, the header's column names (valid until close); NULL for JSONL. */
const bd_csv_header *bd_reader_csv_header(const bd_reader *r);

/* Closes the input and its decoder, frees r. NULL is a no-op. */
void bd_reader_close(bd_reader *r);

/* Reading a JSON Lines file on several threads, each with a reader of its own: whether r
 * can read ranges (a plain regular file of JSON Lines, nothing read yet); its cut into
 * ranges of about step bytes at line breaks (bd_source_line_bounds: *n ranges, *n + 1
 * bounds, freed by the caller); and r set to read the range [start, end), its lines counted
 * from 1 (a byte order mark is dropped only at the file's start). A JSON line holds no raw
 * line break, so each range holds whole records. */
bool bd_reader_can_range(const bd_reader *r);
bd_result bd_reader_line_bounds(bd_reader *r, uint64_t step, uint64_t **bounds, size_t *n);
bool bd_reader_set_range(bd_reader *r, uint64_t start, uint64_t end);

#endif
