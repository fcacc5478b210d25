/* Import: the writer (the caller), fed batches of checked rows by the checking threads
 * (stage.c). The checking of each row is in check.c. */
#include "ingest/import_impl.h"

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

/* How many rows ahead of the one it writes the writer names a record to the store: enough
 * for memory to answer meanwhile (a row takes about 2 us), as the identity tally's prefetch
 * (tally.c). */
#define HINT_AHEAD 8

/* Names a record the writer will put soon to the store (bd_store_record_hint): a bulk load's
 * set of the keys it put is larger than the caches. */
static void hint_row(importer *im, const staged *row)
{
    if (im->o->kind == BD_IMPORT_RECORDS && !row->rejected)
        bd_store_record_hint(im->s, &row->u.record);
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

    /* Records are written in windows, each in its own order (stage_order.c); a checking
     * thread orders one while the writer writes another. A dry run writes nothing, and
     * looks up each run of one breach's records once; --strict stops at the file's first
     * bad line, whichever side refuses it: both in the file's order. */
    bool windows = o->kind == BD_IMPORT_RECORDS && write && !o->strict;
    bd_stager *sg = NULL;
    bool started = false;
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
    if (r == BD_OK) {
        importer proto = {.secret = secret, .o = o};
        r = bd_stager_start(&sg, rd, path, &ro, &proto, windows);
        started = r == BD_OK;
    }
    if (r != BD_OK)
        snprintf(why, whylen, "%s: could not start the import: %s", path, bd_result_str(r));
    bool eof = !started;
    while (r == BD_OK && !eof) {
        stage_batch *b = bd_stager_take(sg);
        for (size_t i = 0; i < b->n && r == BD_OK; i++) {
            const staged *row = b->order ? b->order[i] : &b->rows[i];
            if (write && i + HINT_AHEAD < b->n)
                hint_row(&im, b->order ? b->order[i + HINT_AHEAD] : &b->rows[i + HINT_AHEAD]);
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
        bd_stager_give_back(sg, b);
    }
    bd_stager_end(sg);
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
