/* Private to the import file reader (src/ingest/reader.c, reader_lines.c): the reader's state
 * and the cutting of its input into lines and raw records. */
#ifndef BD_INGEST_READER_IMPL_H
#define BD_INGEST_READER_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/utf8.h"
#include "ingest/reader.h"
#include "ingest/source.h"

#define CHUNK (256u * 1024)
/* A pending line is at most BD_READER_LINE_MAX bytes (longer ones are skipped), so after
 * compaction there is always at least CHUNK bytes of room to read into. */
#define BUF_CAP (BD_READER_LINE_MAX + CHUNK)
#define REPLAY_CAP (BD_READER_LINE_MAX + 1)

struct bd_reader {
    bd_source *src; /* the input, decompressed when it is compressed */
    bd_format fmt;
    bd_utf8_mode utf8;
    char sep;  /* combo lists: the separator */
    char *buf; /* BUF_CAP bytes; [start, end) not yet consumed */
    size_t start, end;
    size_t searched; /* bytes after start known to hold no '\n' */
    bool eof;
    bool skipping;    /* discarding the rest of an over-long line (already counted) */
    bd_result failed; /* BD_OK, or BD_ERR_IO once reading failed for good */
    char failed_why[256];
    uint64_t line_no; /* physical lines started so far (of the range, when reading one) */
    bool mid_file;    /* reading a range that starts past the file's first byte: no BOM */
    uint64_t bytes_read;
    int64_t bytes_total;
    bd_csv_scan scan; /* quote state of the CSV record being read */
    bd_buf rec;       /* a CSV record joined from several lines */
    /* Lines to read again before the main buffer, each ending in '\n': [replay_start,
     * replay_end) of replay (REPLAY_CAP bytes, allocated on first use). They always are the
     * input from some line up to where the main buffer stands, so they fit: a record that
     * gave them back held at most BD_READER_LINE_MAX bytes of them. */
    char *replay;
    size_t replay_start, replay_end;
    bool pending_long; /* after the replay: report the over-long line being skipped */
    size_t last_cut;   /* bytes the last line took from its source, for unread_line */
    bool last_from_replay;
    bd_csv_header *header;
    bd_fields *fields;
    /* CSV/TSV with a plan (--map, --drop-unmapped): the row carried through it */
    const bd_colmap *map;
    bool planned;
    int plan[BD_FIELDS_MAX];
    bd_fields *mapped;
    bd_buf scratch; /* other_attributes JSON being built */
    bd_buf fix;     /* a line repaired by --lossy */
};

/* reader_lines.c */
/* Compacts the buffer and reads once. BD_OK when bytes arrived or the end was reached
 * (r->eof); BD_ERR_IO with r->failed_why set otherwise. */
bd_result bd_reader_fill(bd_reader *r);
/* Rejects the CSV record in r->rec (from line first) as an unclosed quote, and replays the
 * lines after its first. Returns BD_ERR_INVALID with why set, or the replay's error. */
bd_result bd_reader_unclosed_quote(bd_reader *r, uint64_t first, const char *how, char *why,
                                   size_t whylen);
/* Reads the next record's raw text: one line, or several joined lines (a CSV record with line
 * breaks inside quotes). Sets *first to its first line. BD_OK, BD_ERR_INVALID (why set),
 * BD_ERR_NOT_FOUND, BD_ERR_IO. */
bd_result bd_reader_read_record(bd_reader *r, const char **rec, size_t *len, uint64_t *first,
                                char *why, size_t whylen);

#endif
