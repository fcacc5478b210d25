/* Import: one reader and checker thread, one writer (the caller), batches between them.
 * The checking of each row is in check.c. */
#include "ingest/import_impl.h"

#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/term.h"
#include "ingest/reader.h"
#include "ingest/watch_match.h"
#include "store/pastes.h"

/* Rows per transaction of a plain import: an eighth of the rows the store holds, at least
 * 50,000 and at most 1,000,000. Every commit writes each index page the batch dirtied to
 * the WAL (and the checkpoint writes it again), and with random keys a batch of a few
 * thousand rows already dirties most leaf pages of every index, so a commit costs about
 * the size of the indexes whatever its rows: 1M records into a fresh store took 48.7 s and
 * wrote 23 GB in batches of 5,000, 23.0 s and 3.4 GB in batches of 50,000; at 10M records
 * in batches of 50,000 the import wrote 420 MB/s and took 620 s. A batch in proportion to
 * the store keeps the writes in proportion to the rows. A kill loses at most one batch; a
 * re-run adds it. */
#define MIN_BATCH 50000
#define MAX_BATCH 1000000

unsigned bd_import_batch_rows(int64_t rows)
{
    int64_t n = rows / 8;
    return n < MIN_BATCH ? MIN_BATCH : n > MAX_BATCH ? MAX_BATCH : (unsigned)n;
}

/* ---- the checking thread ----------------------------------------------------------- */

/* Reading and checking a row (parse, normalise, mask, hash) costs about as much CPU as
 * writing it, so a second thread does it while the caller's thread writes the previous
 * batch: a bounded ring of batches, filled by the checker, emptied by the writer. */
#define STAGE_SLOTS 3
/* Windows of records are 32 times a batch: two of them (one being ordered and filled while
 * the other is written) already keep both threads busy, and a third would take 21 MB more
 * of an import's 1 GiB (10M records --bulk peaked at 1,069,276 KB with three). */
#define WINDOW_SLOTS 2

typedef struct {
    importer im; /* the checker's own: reads rows, never touches the store */
    bd_reader *rd;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    stage_batch *slot[STAGE_SLOTS];
    size_t slots;     /* in the ring: STAGE_SLOTS, or WINDOW_SLOTS of windows */
    size_t filled;    /* batches handed over and not yet given back */
    size_t put, take; /* next slot to fill, next slot to write */
    bool stop;        /* the writer gave up: the checker stops at its next batch */
} stager;

typedef bd_result (*check_fn)(importer *im, staged *out);

static void fill(stager *sg, stage_batch *b)
{
    static const check_fn check[] = {
        [BD_IMPORT_BREACHES] = bd_import_check_breach,
        [BD_IMPORT_RECORDS] = bd_import_check_record,
        [BD_IMPORT_CARDS] = bd_import_check_card,
    };
    importer *im = &sg->im;
    im->batch = b;
    b->n = 0;
    b->last = false;
    b->why[0] = '\0';
    bd_buf_reset(&b->arena);
    while (b->n < b->cap && b->arena.len < b->soft) {
        staged *row = &b->rows[b->n];
        memset(row, 0, sizeof *row);
        char rwhy[512] = "";
        bd_result rr = bd_reader_next(sg->rd, &im->f, &row->line, rwhy, sizeof rwhy);
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
        if (rr != BD_OK) {
            b->last = true;
            b->end = rr;
            snprintf(b->why, sizeof b->why, "%s", rwhy[0] ? rwhy : bd_result_str(rr));
            break;
        }
        b->n++;
    }
    b->bytes_read = bd_reader_bytes_read(sg->rd);
    bd_import_place_all(im->o->kind, b);
    if (b->order)
        bd_import_order_window(b);
}

static void *checker(void *arg)
{
    stager *sg = arg;
    for (bool last = false; !last;) {
        pthread_mutex_lock(&sg->mu);
        while (sg->filled == sg->slots && !sg->stop)
            pthread_cond_wait(&sg->cv, &sg->mu);
        bool stop = sg->stop;
        pthread_mutex_unlock(&sg->mu);
        if (stop)
            break;
        stage_batch *b = sg->slot[sg->put];
        fill(sg, b);
        last = b->last;
        sg->put = (sg->put + 1) % sg->slots;
        pthread_mutex_lock(&sg->mu);
        sg->filled++;
        pthread_cond_broadcast(&sg->cv);
        pthread_mutex_unlock(&sg->mu);
    }
    return NULL;
}

/* A batch for the ring: of STAGE_ROWS rows, or a window of records (STAGE_WINDOW_ROWS,
 * written in bd_import_order_window's order). */
static bd_result stage_alloc(stage_batch **out, bool window)
{
    stage_batch *b = calloc(1, sizeof *b);
    *out = b;
    if (!b)
        return BD_ERR_NOMEM;
    b->cap = window ? STAGE_WINDOW_ROWS : STAGE_ROWS;
    b->soft = window ? STAGE_WINDOW_ARENA_SOFT : STAGE_ARENA_SOFT;
    bd_buf_init(&b->arena, 4 * b->soft);
    b->rows = malloc(b->cap * sizeof *b->rows);
    b->order = window ? malloc(b->cap * sizeof *b->order) : NULL;
    return b->rows && (b->order || !window) ? BD_OK : BD_ERR_NOMEM;
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

/* The next checked batch, waiting for the checker when it is behind. */
static stage_batch *take(stager *sg)
{
    pthread_mutex_lock(&sg->mu);
    while (sg->filled == 0)
        pthread_cond_wait(&sg->cv, &sg->mu);
    pthread_mutex_unlock(&sg->mu);
    return sg->slot[sg->take];
}

/* Gives a written batch back to the checker. */
static void give_back(stager *sg)
{
    sg->take = (sg->take + 1) % sg->slots;
    pthread_mutex_lock(&sg->mu);
    sg->filled--;
    pthread_cond_broadcast(&sg->cv);
    pthread_mutex_unlock(&sg->mu);
}

/* ---- the writer -------------------------------------------------------------------- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void progress(FILE *out, uint64_t bytes, int64_t total, const char *path, uint64_t rows,
                     double start)
{
    double el = now_s() - start;
    double mib = (double)bytes / 1048576.0;
    if (total > 0)
        fprintf(out, "\r\033[K%s: %llu rows, %.0f rows/s, %.1f of %.1f MiB", path,
                (unsigned long long)rows, el > 0 ? (double)rows / el : 0.0, mib,
                (double)total / 1048576.0);
    else
        fprintf(out, "\r\033[K%s: %llu rows, %.0f rows/s, %.1f MiB", path, (unsigned long long)rows,
                el > 0 ? (double)rows / el : 0.0, mib);
}

/* Writes one checked row. BD_ERR_INVALID (why set) when the store refuses it as bad input. */
static bd_result write_row(importer *im, const staged *row, bool *inserted, char *why,
                           size_t whylen)
{
    bd_result r;
    switch (im->o->kind) {
    case BD_IMPORT_BREACHES: {
        const bd_breach_in *b = &row->u.breach;
        r = bd_store_breach_put(im->s, b, inserted);
        if (r == BD_OK && *inserted && row->generated && im->o->ids) {
            fprintf(im->o->ids, "%s\t", b->uuid); /* the name is escaped for a terminal */
            bd_term_write(im->o->ids, b->source_name.ptr, b->source_name.len);
            fputc('\n', im->o->ids);
        }
        return r;
    }
    case BD_IMPORT_RECORDS:
        r = bd_store_record_put(im->s, &row->u.record, inserted);
        if (r == BD_ERR_NOT_FOUND) {
            snprintf(why, whylen, "breach %s does not exist; import the breach first",
                     row->u.record.breach_uuid);
            return BD_ERR_INVALID;
        }
        if (r == BD_OK)
            bd_import_tally_record(im, &row->u.record, *inserted);
        return r;
    case BD_IMPORT_CARDS:
        return bd_store_card_put(im->s, &row->u.card, inserted);
    }
    return BD_ERR_INVALID;
}

/* A dry run's row: what write_row would say without writing. A record's breach must exist
 * (looked up once per run of rows of one breach); duplicates are not looked up, so every
 * valid row counts as imported. */
static bd_result dry_row(importer *im, const staged *row, bool *inserted, char *why, size_t whylen)
{
    *inserted = true;
    if (im->o->kind != BD_IMPORT_RECORDS)
        return BD_OK;
    const char *uuid = row->u.record.breach_uuid;
    if (strcmp(im->dry_breach, uuid) != 0) {
        bool exists = false;
        bd_result r = bd_store_breach_exists(im->s, uuid, &exists);
        if (r != BD_OK)
            return r;
        memcpy(im->dry_breach, uuid, BD_UUID_LEN + 1);
        im->dry_breach_exists = exists;
    }
    if (!im->dry_breach_exists) {
        snprintf(why, whylen, "breach %s does not exist; import the breach first", uuid);
        return BD_ERR_INVALID;
    }
    return BD_OK;
}

/* Rows the store accepted but its commit found to be duplicates (a backend that streams
 * rows decides at commit): they count as duplicates, not imported. */
static void late_duplicates(bd_store *s, bd_import_counts *c)
{
    int64_t n = bd_store_take_late_duplicates(s);
    c->imported -= (uint64_t)n;
    c->duplicates += (uint64_t)n;
}

bd_result bd_import_file(bd_store *s, const uint8_t secret[BD_SECRET_LEN], const char *path,
                         const bd_import_options *o, bd_import_counts *c, char *why, size_t whylen)
{
    if (sodium_init() < 0)
        return BD_ERR_CRYPTO;
    bd_reader *rd;
    bd_reader_options ro = {.format = o->format,
                            .separator = o->separator,
                            .map = o->map,
                            .columns = o->columns,
                            .drop_unmapped = o->drop_unmapped,
                            .fields = bd_import_field_names(o->kind),
                            .memory_limit = o->memory_limit,
                            .follow_links = o->follow_links,
                            .utf8 = o->lossy                        ? BD_UTF8_LOSSY
                                    : o->kind == BD_IMPORT_BREACHES ? BD_UTF8_KEEP
                                                                    : BD_UTF8_STRICT};
    bd_result r = bd_reader_open_with(path, &ro, &rd, why, whylen);
    if (r != BD_OK)
        return r;
    importer im = {.s = s, .secret = secret, .o = o};
    bool bulk = o->bulk && o->kind != BD_IMPORT_BREACHES && !o->dry_run;
    bool write = !o->dry_run;
    bd_bulk_kind bulk_kind = o->kind == BD_IMPORT_CARDS ? BD_BULK_CARDS : BD_BULK_RECORDS;
    bool grow = !o->strict && !bulk && !o->batch; /* the batch follows the store's size */
    unsigned batch = o->strict || bulk ? UINT32_MAX : o->batch ? o->batch : MIN_BATCH;
    unsigned in_batch = 0;
    uint64_t reported = 0;
    int64_t total = bd_reader_bytes_total(rd);
    double start = now_s(), last_progress = start;
    bd_import_counts local = {0};

    stager *sg = calloc(1, sizeof *sg);
    bool started = false;
    if (!sg) {
        r = BD_ERR_NOMEM;
    } else {
        sg->im = (importer){.secret = secret, .o = o};
        sg->rd = rd;
        pthread_mutex_init(&sg->mu, NULL);
        pthread_cond_init(&sg->cv, NULL);
        /* Records are written in windows, each in its own order (stage_order.c); the
         * checking thread orders one while the writer writes another. A dry run writes
         * nothing, and looks up each run of one breach's records once; --strict stops at the
         * file's first bad line, whichever side refuses it: both in the file's order. */
        bool windows = o->kind == BD_IMPORT_RECORDS && write && !o->strict;
        sg->slots = windows ? WINDOW_SLOTS : STAGE_SLOTS;
        for (size_t i = 0; i < sg->slots && r == BD_OK; i++)
            r = stage_alloc(&sg->slot[i], windows);
    }
    if (r == BD_OK && write)
        r = bd_store_begin(s);
    /* A dry run looks its records' breaches up: in one read, not a lock taken and dropped
     * per lookup (a SQLite store's file locks were a sixth of a 1M-record dry run) */
    bool reading = r == BD_OK && !write;
    if (reading)
        r = bd_store_read_begin(s);
    if (r == BD_OK && write && o->kind == BD_IMPORT_RECORDS) {
        int64_t last_id = 0;
        r = bd_store_records_last_id(s, &last_id);
        bd_import_tally_begin(&im, last_id);
        if (grow)
            batch = bd_import_batch_rows(last_id);
    }
    bd_watch_matcher *watches = NULL; /* alerts are written in the batch that matched */
    if (r == BD_OK && o->kind != BD_IMPORT_BREACHES)
        r = bd_watch_matcher_open(s, &watches);
    if (r == BD_OK && bulk)
        r = bd_store_bulk_begin(s, bulk_kind);
    pthread_t tid;
    if (r == BD_OK) {
        started = pthread_create(&tid, NULL, checker, sg) == 0;
        if (!started)
            r = BD_ERR_NOMEM;
    }
    if (r != BD_OK)
        snprintf(why, whylen, "%s: could not start the import: %s", path, bd_result_str(r));
    bool eof = !started;
    while (r == BD_OK && !eof) {
        stage_batch *b = take(sg);
        for (size_t i = 0; i < b->n && r == BD_OK; i++) {
            const staged *row = b->order ? b->order[i] : &b->rows[i];
            char rwhy[512];
            bool inserted = false;
            bd_result rr;
            local.read++;
            if (row->rejected) {
                snprintf(rwhy, sizeof rwhy, "%s", b->arena.data + row->why_at);
                rr = BD_ERR_INVALID;
            } else if (write) {
                rr = write_row(&im, row, &inserted, rwhy, sizeof rwhy);
            } else {
                rr = dry_row(&im, row, &inserted, rwhy, sizeof rwhy);
            }
            if (rr == BD_ERR_INVALID) {
                local.rejected++;
                if (o->strict) {
                    snprintf(why, whylen, "%s:%llu: %s (--strict: nothing from this file imported)",
                             path, (unsigned long long)row->line, rwhy);
                    r = BD_ERR_INVALID;
                    break;
                }
                if (o->report && reported++ < MAX_REPORTED) { /* reasons quote names: escaped */
                    bd_term_printf(o->report, "%s:%llu: rejected: %s", path,
                                   (unsigned long long)row->line, rwhy);
                    fputc('\n', o->report);
                } else if (o->report && reported == MAX_REPORTED + 1) {
                    fprintf(o->report, "%s: further rejected lines are counted but not listed\n",
                            path);
                }
                continue;
            }
            if (rr != BD_OK) {
                snprintf(why, whylen, "%s:%llu: the store failed: %s", path,
                         (unsigned long long)row->line, bd_result_str(rr));
                r = rr;
                break;
            }
            if (inserted)
                local.imported++;
            else
                local.duplicates++;
            if (write && ++in_batch >= batch) {
                in_batch = 0;
                r = watches ? bd_watch_matcher_write(watches) : BD_OK;
                if (r == BD_OK)
                    r = bd_store_commit(s);
                if (r == BD_OK)
                    late_duplicates(s, &local);
                if (r == BD_OK)
                    r = bd_store_begin(s);
                if (r == BD_OK && watches)
                    r = bd_watch_matcher_refresh(watches);
                if (grow) /* cards: the rows of this import stand for the store's */
                    batch = bd_import_batch_rows(im.last_id_before + (int64_t)local.imported);
            }
        }
        eof = b->last;
        if (r == BD_OK && b->last && b->end != BD_ERR_NOT_FOUND) {
            snprintf(why, whylen, "%s: %s", path, b->why);
            r = b->end;
        }
        if (o->progress && now_s() - last_progress > 0.5) {
            last_progress = now_s();
            progress(o->progress, b->bytes_read, total, path, local.read, start);
        }
        give_back(sg);
    }
    if (started) {
        pthread_mutex_lock(&sg->mu);
        sg->stop = true;
        pthread_cond_broadcast(&sg->cv);
        pthread_mutex_unlock(&sg->mu);
        pthread_join(tid, NULL);
    }
    if (sg) {
        for (size_t i = 0; i < STAGE_SLOTS; i++)
            stage_free(sg->slot[i]);
        pthread_mutex_destroy(&sg->mu);
        pthread_cond_destroy(&sg->cv);
        free(sg);
    }
    if (r == BD_OK && write) {
        if (bulk) {
            if (o->progress)
                fprintf(o->progress, "\r\033[K%s: building indexes", path);
            r = bd_store_bulk_end(s, bulk_kind);
        }
        if (r == BD_OK)
            r = bd_import_tally_settle(&im);
        /* the HIBP range's email hashes of a bulk load, in the load's transaction: into an
         * empty SQLite store they are then written once, into the store, where a transaction
         * of their own after it (breachctl does one for every import) wrote them through the
         * WAL and again at its checkpoint */
        int64_t hashed;
        if (r == BD_OK && bulk && o->kind == BD_IMPORT_RECORDS)
            r = bd_store_email_hashes_sync(s, &hashed);
        if (r == BD_OK && watches)
            r = bd_watch_matcher_write(watches);
        if (r == BD_OK)
            r = bd_store_commit(s);
        if (r == BD_OK)
            late_duplicates(s, &local);
        if (r == BD_OK && o->kind != BD_IMPORT_BREACHES)
            bd_store_loaded(s, bulk_kind, (int64_t)local.imported);
        if (r != BD_OK)
            snprintf(why, whylen, "%s: the store failed to commit: %s", path, bd_result_str(r));
    }
    if (r != BD_OK && write) {
        bd_store_rollback(s);
        /* Batches already committed stay: they are complete rows, and a re-run skips them.
         * A strict or bulk load is one transaction: nothing of it stays. */
        if (o->strict || bulk) {
            local.imported = 0;
            local.duplicates = 0;
        }
    }
    bd_watch_matcher_close(watches);
    if (reading)
        bd_store_read_end(s);
    if (o->progress)
        fputs("\r\033[K", o->progress);
    c->read += local.read;
    c->imported += local.imported;
    c->duplicates += local.duplicates;
    c->rejected += local.rejected;
    bd_import_tally_end(&im);
    bd_reader_close(rd);
    return r;
}
