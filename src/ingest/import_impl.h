/* Private to the importer (src/ingest/import.c, check.c, check_card.c): the rows a checking
 * thread reads and checks, the batches that carry them to the writing thread, and the field
 * readers the checks share. */
#ifndef BD_INGEST_IMPORT_IMPL_H
#define BD_INGEST_IMPORT_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/u64set.h"
#include "ingest/fields.h"
#include "ingest/import.h"
#include "ingest/reader.h"

#define MAX_TEXT 4096        /* names, descriptions and other free text */
#define MAX_ATTRIBUTES 65536 /* other_attributes JSON */
#define MAX_REPORTED 100     /* rejected lines printed per file */

typedef struct {
    bd_store *s;
    const uint8_t *secret;
    const bd_import_options *o;
    const bd_fields *f;
    char why[512];
    /* breaches touched by a records import, to settle their identity counts at the end
     * (tally.c), with what the import wrote into each */
    char (*touched)[BD_UUID_LEN + 1];
    bd_breach_tally *tally;
    size_t ntouched, cap_touched;
    size_t *touched_at;     /* open-addressed index of touched by uuid hash: i + 1, 0 free */
    size_t touched_slots;   /* a power of two, at least twice ntouched (rows interleave breaches) */
    int64_t last_id_before; /* the store's greatest record id when the import began */
    bd_u64set idents;       /* (breach, identity) pairs of the inserted records */
    /* the last TALLY_AHEAD pairs, added to idents that many records later, once the CPU has
     * loaded where they go (tally.c) */
    uint64_t ahead_key[8];
    size_t ahead_breach[8];
    size_t nahead, ahead_first;
    bool counting;                    /* idents holds them all (it stops at its limit) */
    uint8_t ident_key[16];            /* SipHash key of idents, random per import */
    struct stage_batch *batch;        /* where the checking thread puts checked rows */
    char dry_breach[BD_UUID_LEN + 1]; /* a dry run: the breach looked up last */
    bool dry_breach_exists;
} importer;

/* A row checked by the reading thread, on its way to the store: its values live in the
 * batch's arena, so the reader's buffers and the checker's stack can move on. */
typedef struct {
    uint64_t line;
    bool rejected;  /* why_at then holds the reason */
    bool generated; /* breaches: the uuid was derived from the row, to be reported */
    size_t why_at;
    union {
        bd_breach_in breach;
        bd_record_in record;
        bd_card_in card;
    } u;
} staged;

#define STAGE_ROWS 1024
#define STAGE_ARENA_SOFT (8u << 20) /* a batch closes early past this many bytes of values */
/* A records import writes in windows: batches of this many rows, each written in the order
 * of bd_import_order_window (stage_order.c). */
#define STAGE_WINDOW_ROWS 32768
#define STAGE_WINDOW_ARENA_SOFT (32u << 20)

typedef struct stage_batch {
    staged *rows;         /* cap of them */
    const staged **order; /* when not NULL: the rows in the order they are written */
    size_t cap, n;
    size_t soft; /* the batch closes once its arena holds this many bytes */
    bd_buf arena;
    uint64_t bytes_read;  /* the reader's position after the batch, for progress */
    bool last;            /* the reader is done; end says how */
    bool range_end;       /* the last batch of its range of the file (stage.c) */
    uint64_t range_lines; /* with range_end: the physical lines of the range */
    bd_result end;        /* BD_ERR_NOT_FOUND at the end of the input, else the reader's error */
    char why[512];
} stage_batch;

/* stage.c: the checking threads and the batches they hand the writer, in the file's order.
 * Starts them on rd (opened on path with ro: a second thread opens a reader of its own),
 * each checking with a copy of proto; batches are windows of records when windows. */
typedef struct bd_stager bd_stager;
bd_result bd_stager_start(bd_stager **out, struct bd_reader *rd, const char *path,
                          const bd_reader_options *ro, const importer *proto, bool windows);
/* The checking threads it runs (1, or 2 for a file read in ranges). */
size_t bd_stager_lanes(const bd_stager *sg);
/* The next batch, waiting for it; its rows' line numbers are the file's. */
stage_batch *bd_stager_take(bd_stager *sg);
/* Gives the batch taken last back to its thread. */
void bd_stager_give_back(bd_stager *sg, stage_batch *b);
/* Stops the threads and frees everything; NULL is a no-op. */
void bd_stager_end(bd_stager *sg);

/* Checks the row the reader holds (im->f) as a breach, record or card and stages its values
 * in im->batch: BD_OK, BD_ERR_INVALID with im->why set for a rejected row, or a failure. */
bd_result bd_import_check_breach(importer *im, staged *out);
bd_result bd_import_check_record(importer *im, staged *out);
bd_result bd_import_check_card(importer *im, staged *out);
/* Turns the arena offsets of every row of a full batch into pointers, once the arena is
 * final. */
void bd_import_place_all(bd_import_kind kind, stage_batch *b);
/* Sets b->order (allocated for b->cap rows) to the order a window of records is written in
 * (stage_order.c). */
void bd_import_order_window(stage_batch *b);

/* check.c, the field readers shared by the checks of each kind (check.c, check_card.c). */
/* Sets im->why to the rejection reason; always returns BD_ERR_INVALID. */
bd_result bd_check_reject(importer *im, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A field's value with surrounding whitespace trimmed; false when absent, null or empty. */
bool bd_check_get(const importer *im, const char *name, bd_slice *v);
/* Rejects a row holding a field not in the NULL-terminated allowed. */
bd_result bd_check_names(importer *im, const char *const *allowed);
/* Free text: at most MAX_TEXT bytes, no NUL bytes; absent gives a NULL slice. */
bd_result bd_check_text(importer *im, const char *name, bd_slice *out);
/* A whole number of at least 0; absent gives -1. */
bd_result bd_check_integer(importer *im, const char *name, int64_t *out);
/* Copies the values of the checked row into the batch's arena (offsets until placed). */
bd_result bd_check_stage(importer *im, staged *row);
/* Rows per transaction of a plain import into a store holding `rows` rows (import.c). */
unsigned bd_import_batch_rows(int64_t rows);

/* tally.c: starts counting identities (last_id: bd_store_records_last_id before the first
 * row); notes the breach of a record that was written and, when it was inserted, the record
 * in the breach's tally; settles every touched breach's count; frees what it kept. */
void bd_import_tally_begin(importer *im, int64_t last_id);
void bd_import_tally_record(importer *im, const bd_record_in *r, bool inserted);
bd_result bd_import_tally_settle(importer *im);
void bd_import_tally_end(importer *im);

#endif
