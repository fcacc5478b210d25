/* Import of breaches, breach records and cards from JSON Lines or CSV files into the store:
 * validation, normalisation, masking and keyed hashing happen here, so the store only ever
 * receives masked values and HMACs. Rows are committed in batches; each batch lands whole
 * or not at all, and content hashes make a re-run of the same file insert nothing twice. */
#ifndef BD_INGEST_IMPORT_H
#define BD_INGEST_IMPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "auth/secret.h"
#include "ingest/reader.h"
#include "store/store.h"

typedef enum { BD_IMPORT_BREACHES, BD_IMPORT_RECORDS, BD_IMPORT_CARDS } bd_import_kind;

typedef struct {
    bd_import_kind kind;
    bd_format format;
    const char *breach_uuid; /* records: the breach when the file has no breach_uuid column */
    bool strict;             /* stop at the first bad line and import nothing from the file */
    FILE *progress;          /* redraw a progress line here (a terminal), or NULL */
    FILE *report;            /* rejected lines are reported here, or NULL: not reported */
    FILE *ids;               /* breaches: "uuid<TAB>source_name" of generated uuids, or NULL */
    unsigned batch;          /* rows per transaction; 0: the default */
    bool bulk;               /* records and cards: the whole file in one transaction, with
                                the lookup indexes rebuilt at its end (bd_store_bulk_begin) */
    bool no_password_ranges; /* records: do not count plaintext passwords in the Pwned
                                Passwords ranges (breachctl import sets it unless given
                                --password-ranges; the demo corpus leaves it false) */
    char separator;          /* combo lists: the separator, 0 to detect it per file */
    const bd_colmap *map;    /* CSV/TSV: --map, or NULL */
    const char *columns;     /* CSV/TSV: --columns of a headerless file, or NULL */
    bool drop_unmapped;      /* CSV/TSV: --drop-unmapped */
    bool lossy;              /* repair text that is not UTF-8 (U+FFFD) instead of rejecting
                                the row; without it records and cards reject such rows and
                                breaches are stored repaired (as always) */
    bool dry_run;            /* read and check every row, write nothing: counts say what would
                                be imported (records: the breach is looked up, read-only) */
    uint64_t memory_limit;   /* compressed input: what the decoder may use, in bytes
                                (source.h); 0: the default */
    bool follow_links;       /* read a path that is a symbolic link to a file (without it
                                only a link to a pipe or socket is read: bd_reader_open) */
} bd_import_options;

typedef struct {
    uint64_t read, imported, duplicates, rejected;
    uint64_t links_skipped; /* pwned-passwords: symbolic links in a directory passed over */
} bd_import_counts;

/* The field names rows of kind may carry, NULL-terminated (static). */
const char *const *bd_import_field_names(bd_import_kind kind);

/* Imports one file ("-" is standard input). Counts accumulate into *c. Returns BD_OK when
 * the file was read to its end (some lines may have been rejected), BD_ERR_INVALID when
 * --strict stopped at a bad line, BD_ERR_IO or a store error otherwise; why then says what
 * happened. */
bd_result bd_import_file(bd_store *s, const uint8_t secret[BD_SECRET_LEN], const char *path,
                         const bd_import_options *o, bd_import_counts *c, char *why, size_t whylen);

#endif
