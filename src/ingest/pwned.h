/* Import of a Pwned Passwords download into the store's password ranges: "HASH:COUNT" lines
 * (40 hex digits: SHA-1, 32: NTLM), one file (".gz" decompressed by a gzip child) or a
 * directory in the per-prefix layout (files named by their 5-hex prefix, optionally with
 * ".txt", holding "SUFFIX:COUNT" lines). The counts are totals: a hash already stored keeps
 * the larger count, so loading a download twice changes nothing (bd_store_range_load). */
#ifndef BD_INGEST_PWNED_H
#define BD_INGEST_PWNED_H

#include <stdint.h>
#include <stdio.h>

#include "core/result.h"
#include "core/slice.h"
#include "ingest/import.h"
#include "store/store.h"

#define BD_PWNED_DETECT (-1) /* the mode of the first good line decides the file's */

/* Parses one line, without its line break (a trailing \r, spaces and tabs are allowed).
 * prefix is the 5-hex prefix of a per-prefix file (0..0xFFFFF; the line then holds the
 * suffix: 35 hex digits for SHA-1, 27 for NTLM), or -1 for a whole hash. *mode is the
 * mode the hash's length says. Returns BD_OK with *mode, hash (20 or 16 bytes) and *count
 * (1..2^32-1) set, or BD_ERR_INVALID with *why, a reason that never quotes the line. */
bd_result bd_pwned_parse_line(bd_slice line, int32_t prefix, bd_range_mode *mode, uint8_t hash[20],
                              uint32_t *count, const char **why);

typedef struct {
    int mode;          /* BD_PWNED_DETECT, or a bd_range_mode every line must have */
    FILE *progress;    /* redraw a progress line here (a terminal), or NULL */
    FILE *report;      /* rejected lines are reported here, or NULL: not reported */
    unsigned batch;    /* hashes per transaction; 0: the default */
    bool follow_links; /* read a file that is a symbolic link: without it a link in the
                          directory is passed over (said on report, counted in
                          links_skipped) and a named one refused (bd_source_open_path) */
} bd_pwned_options;

/* Loads a file or a per-prefix directory. Counts accumulate into *c (imported: hashes
 * loaded; rejected: bad lines, reported and skipped). Batches commit atomically; a failure
 * keeps the batches committed before it (a re-run adds nothing twice). Returns BD_OK when
 * all of it was read, else BD_ERR_IO or a store error with why set. */
bd_result bd_pwned_import(bd_store *s, const char *path, const bd_pwned_options *o,
                          bd_import_counts *c, char *why, size_t whylen);

#endif
