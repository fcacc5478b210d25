/* The checking threads of an import and the batches between them and the writer (the
 * importer's caller, import.c).
 *
 * Reading and checking a row (parse, normalise, mask, hash) costs about as much CPU as
 * writing it, so a checking thread does it while the writer writes the previous batch: a
 * bounded ring of batches, filled by the checker, emptied by the writer.
 *
 * A bulk load of records or a dry run of a plain JSON Lines file has a second checking
 * thread: the file is cut into ranges of about RANGE_BYTES at line breaks, lane k reads
 * ranges k, k + 2, ... with a reader of its own, and the writer takes each range's batches
 * in the file's order, so duplicates keep their first line and rejected lines their numbers
 * (a range counts its lines from 1; take() adds the lines of the ranges before). At 1M
 * records one checking thread was the bound of a bulk load's first phase (2.5 s of CPU
 * against the writer's 2.0): 2.6 -> 2.3 s with two. Plain imports and bulk loads of cards
 * keep one: their writer is the bound, and their batches are what their memory is sized by. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ingest/import_impl.h"
#include "ingest/reader.h"

#define STAGE_SLOTS 3 /* batches in a ring */
/* Windows of records are 32 times a batch: two of them (one being ordered and filled while
 * the other is written) already keep both threads busy, and a third would take 21 MB more
 * of an import's 1 GiB (10M records --bulk peaked at 1,069,276 KB with three). */
#define WINDOW_SLOTS 2
/* A range: about two thirds of a window of records (some 200 bytes each), so that a range
 * fits one window and a thread can hold two (1M records --bulk, the first phase: 2.40 s with
 * 6 MiB ranges, often two windows each, 2.29 s with 4 MiB) */
#define RANGE_BYTES ((uint64_t)4 << 20)
#define MAX_LANES 2

typedef struct {
    bd_stager *sg;
    size_t index;
    importer im; /* the lane's own: reads rows, never touches the store */
    bd_reader *rd;
    bool own_rd; /* opened here (lane 0 reads with the importer's reader) */
    stage_batch *slot[STAGE_SLOTS];
    size_t filled;                      /* batches handed over and not yet given back */
    size_t put, take;                   /* next slot to fill, next slot to write */
    uint64_t range_start, range_bytes0; /* the range being read, the reader's bytes then */
    pthread_t tid;
    bool started;
} lane;

struct bd_stager {
    lane lane[MAX_LANES];
    size_t lanes, slots;
    uint64_t *bounds; /* ranges: bounds[i] to bounds[i + 1]; NULL: lane 0 reads it all */
    size_t ranges;
    size_t current;     /* the range the writer takes from */
    uint64_t line_base; /* lines of the ranges before it */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop; /* the writer gave up: the checkers stop at their next batch */
};

typedef bd_result (*check_fn)(importer *im, staged *out);

/* Fills b from the lane's reader. In a range, its end closes the batch: range_end set, and
 * last too when the range is the file's last. */
static void fill(lane *ln, stage_batch *b, bool ranged, bool final_range)
{
    static const check_fn check[] = {
        [BD_IMPORT_BREACHES] = bd_import_check_breach,
        [BD_IMPORT_RECORDS] = bd_import_check_record,
        [BD_IMPORT_CARDS] = bd_import_check_card,
    };
    importer *im = &ln->im;
    im->batch = b;
    b->n = 0;
    b->last = false;
    b->range_end = false;
    b->why[0] = '\0';
    bd_buf_reset(&b->arena);
    while (b->n < b->cap && b->arena.len < b->soft) {
        staged *row = &b->rows[b->n];
        memset(row, 0, sizeof *row);
        char rwhy[512] = "";
        bd_result rr = bd_reader_next(ln->rd, &im->f, &row->line, rwhy, sizeof rwhy);
        if (rr == BD_OK) {
            im->why[0] = '\0';
            rr = check[im->o->kind](im, row);
            if (rr == BD_ERR_INVALID)
                snprintf(rwhy, sizeof rwhy, "%s", im->why);
        }
        if (rr == BD_ERR_INVALID) {
            row->rejected = true;
            row->why_at = b->arena.len;
            rr = bd_buf_append(&b->arena, rwhy, strlen(rwhy) + 1);
        }
        if (rr == BD_ERR_NOT_FOUND && ranged) {
            b->range_end = true;
            b->range_lines = row->line; /* at the end: the lines the range started */
            b->last = final_range;
            b->end = rr;
            break;
        }
        if (rr != BD_OK) {
            b->last = true;
            b->end = rr;
            snprintf(b->why, sizeof b->why, "%s", rwhy[0] ? rwhy : bd_result_str(rr));
            break;
        }
        b->n++;
    }
    uint64_t read = bd_reader_bytes_read(ln->rd);
    b->bytes_read = ranged ? ln->range_start + (read - ln->range_bytes0) : read;
    bd_import_place_all(im->o->kind, b);
    if (b->order)
        bd_import_order_window(b);
}

/* Waits for a free slot; false when the writer stopped. */
static bool wait_slot(lane *ln)
{
    bd_stager *sg = ln->sg;
    pthread_mutex_lock(&sg->mu);
    while (ln->filled == sg->slots && !sg->stop)
        pthread_cond_wait(&sg->cv, &sg->mu);
    bool stop = sg->stop;
    pthread_mutex_unlock(&sg->mu);
    return !stop;
}

static void publish(lane *ln)
{
    bd_stager *sg = ln->sg;
    ln->put = (ln->put + 1) % sg->slots;
    pthread_mutex_lock(&sg->mu);
    ln->filled++;
    pthread_cond_broadcast(&sg->cv);
    pthread_mutex_unlock(&sg->mu);
}

static void *checker(void *arg)
{
    lane *ln = arg;
    bd_stager *sg = ln->sg;
    if (!sg->bounds) {
        for (bool last = false; !last && wait_slot(ln);) {
            stage_batch *b = ln->slot[ln->put];
            fill(ln, b, false, false);
            last = b->last;
            publish(ln);
        }
        return NULL;
    }
    for (size_t r = ln->index; r < sg->ranges; r += sg->lanes) {
        bool final_range = r + 1 == sg->ranges, set;
        set = bd_reader_set_range(ln->rd, sg->bounds[r], sg->bounds[r + 1]);
        ln->range_start = sg->bounds[r];
        ln->range_bytes0 = bd_reader_bytes_read(ln->rd);
        for (bool done = false; !done;) {
            if (!wait_slot(ln))
                return NULL;
            stage_batch *b = ln->slot[ln->put];
            if (set) {
                fill(ln, b, true, final_range);
            } else { /* cannot happen for a reader that could range: stops the import */
                b->n = 0;
                b->last = true;
                b->end = BD_ERR_IO;
                snprintf(b->why, sizeof b->why, "could not read a range of the file");
            }
            done = b->range_end || b->last;
            bool stop = b->last;
            publish(ln);
            if (stop)
                return NULL;
        }
    }
    return NULL;
}

/* A batch for a ring: of STAGE_ROWS rows, or of a window's (STAGE_WINDOW_ROWS), written in
 * bd_import_order_window's order when ordered. */
static bd_result stage_alloc(stage_batch **out, bool big, bool ordered)
{
    stage_batch *b = calloc(1, sizeof *b);
    *out = b;
    if (!b)
        return BD_ERR_NOMEM;
    b->cap = big ? STAGE_WINDOW_ROWS : STAGE_ROWS;
    b->soft = big ? STAGE_WINDOW_ARENA_SOFT : STAGE_ARENA_SOFT;
    bd_buf_init(&b->arena, 4 * b->soft);
    b->rows = malloc(b->cap * sizeof *b->rows);
    b->order = ordered ? malloc(b->cap * sizeof *b->order) : NULL;
    return b->rows && (b->order || !ordered) ? BD_OK : BD_ERR_NOMEM;
}

static void stage_free(stage_batch *b)
{
    if (!b)
        return;
    bd_buf_free(&b->arena);
    free(b->rows);
    free(b->order);
    free(b);
}

/* Whether the file is read on two threads: a bulk load of records, or a dry run, of a
 * plain JSON Lines file of at least two ranges, on a machine of two cores or more. A bulk
 * load of cards keeps one: its writer is the bound (owner words, the card row), and its
 * batches would grow from 1,024 rows to a window's. */
static bool parallel(const bd_import_options *o, bd_reader *rd)
{
    bool bulk_records = o->bulk && o->kind == BD_IMPORT_RECORDS;
    return (bulk_records || (o->dry_run && o->kind != BD_IMPORT_BREACHES)) && !o->strict &&
           sysconf(_SC_NPROCESSORS_ONLN) >= 2 && bd_reader_can_range(rd) &&
           bd_reader_bytes_total(rd) >= (int64_t)(2 * RANGE_BYTES);
}

bd_result bd_stager_start(bd_stager **out, bd_reader *rd, const char *path,
                          const bd_reader_options *ro, const importer *proto, bool windows)
{
    bd_stager *sg = calloc(1, sizeof *sg);
    *out = sg;
    if (!sg)
        return BD_ERR_NOMEM;
    pthread_mutex_init(&sg->mu, NULL);
    pthread_cond_init(&sg->cv, NULL);
    sg->lanes = 1;
    bd_result r = BD_OK;
    bd_reader *second = NULL;
    char why[256];
    /* a second reader of the same file; when it cannot be had, one thread reads it all */
    if (parallel(proto->o, rd) &&
        bd_reader_line_bounds(rd, RANGE_BYTES, &sg->bounds, &sg->ranges) == BD_OK &&
        sg->ranges >= 2 && bd_reader_open_with(path, ro, &second, why, sizeof why) == BD_OK &&
        bd_reader_can_range(second))
        sg->lanes = MAX_LANES;
    if (sg->lanes == 1) {
        bd_reader_close(second);
        free(sg->bounds);
        sg->bounds = NULL;
    }
    /* two threads: each holds a range in a batch of a window's size, so that it can check
     * one range while the writer takes the other's */
    bool big = windows || sg->lanes > 1;
    sg->slots = big ? WINDOW_SLOTS : STAGE_SLOTS;
    for (size_t k = 0; k < sg->lanes && r == BD_OK; k++) {
        lane *ln = &sg->lane[k];
        ln->sg = sg;
        ln->index = k;
        ln->im = *proto;
        ln->rd = k ? second : rd;
        ln->own_rd = k > 0;
        for (size_t i = 0; i < sg->slots && r == BD_OK; i++)
            r = stage_alloc(&ln->slot[i], big, windows);
    }
    for (size_t k = 0; k < sg->lanes && r == BD_OK; k++) {
        lane *ln = &sg->lane[k];
        ln->started = pthread_create(&ln->tid, NULL, checker, ln) == 0;
        if (!ln->started)
            r = BD_ERR_NOMEM;
    }
    return r;
}

size_t bd_stager_lanes(const bd_stager *sg)
{
    return sg->lanes;
}

stage_batch *bd_stager_take(bd_stager *sg)
{
    lane *ln = &sg->lane[sg->bounds ? sg->current % sg->lanes : 0];
    pthread_mutex_lock(&sg->mu);
    while (ln->filled == 0)
        pthread_cond_wait(&sg->cv, &sg->mu);
    pthread_mutex_unlock(&sg->mu);
    stage_batch *b = ln->slot[ln->take];
    if (sg->line_base)
        for (size_t i = 0; i < b->n; i++)
            b->rows[i].line += sg->line_base;
    if (b->range_end) {
        sg->line_base += b->range_lines;
        sg->current++;
    }
    return b;
}

void bd_stager_give_back(bd_stager *sg, stage_batch *b)
{
    size_t range = sg->current - (b->range_end ? 1 : 0);
    lane *ln = &sg->lane[sg->bounds ? range % sg->lanes : 0];
    ln->take = (ln->take + 1) % sg->slots;
    pthread_mutex_lock(&sg->mu);
    ln->filled--;
    pthread_cond_broadcast(&sg->cv);
    pthread_mutex_unlock(&sg->mu);
}

void bd_stager_end(bd_stager *sg)
{
    if (!sg)
        return;
    pthread_mutex_lock(&sg->mu);
    sg->stop = true;
    pthread_cond_broadcast(&sg->cv);
    pthread_mutex_unlock(&sg->mu);
    for (size_t k = 0; k < MAX_LANES; k++) {
        lane *ln = &sg->lane[k];
        if (ln->started)
            pthread_join(ln->tid, NULL);
        for (size_t i = 0; i < STAGE_SLOTS; i++)
            stage_free(ln->slot[i]);
        if (ln->own_rd)
            bd_reader_close(ln->rd);
    }
    free(sg->bounds);
    pthread_mutex_destroy(&sg->mu);
    pthread_cond_destroy(&sg->cv);
    free(sg);
}
