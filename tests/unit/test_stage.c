/* The checking threads of an import (src/ingest/stage.c): a JSON Lines file of several
 * ranges is read by two threads for a dry run or a bulk load, and the writer still gets
 * every row once, in the file's order, with the file's line numbers; a plain import, a bulk
 * load of cards, a compressed or a small file, one thread. And the reader under it (reader.h): a
 * file cut into ranges at line breaks reads as the whole file does. */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "ingest/import_impl.h"
#include "ingest/reader.h"
#include "test.h"

#define BREACH "22222222-2222-4222-8222-222222222222"
#define LINES 7600
#define BAD_JSON 5000 /* a line that is not JSON, in the second range */
#define BAD_EMAIL 5   /* a line whose email is refused, in the first */
#define BLANK 7500    /* a blank line, in the last */

static char path[64];
static uint8_t secret[BD_SECRET_LEN];

/* A 15 MB file of LINES records of about 2 KB (four ranges of 4 MiB), a byte order mark
 * before the first, and the lines above. */
static void write_file(void)
{
    snprintf(path, sizeof path, "/tmp/bd-test-stage-XXXXXX");
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    FILE *f = fdopen(fd, "w");
    static char pad[1901];
    memset(pad, 'x', sizeof pad - 1);
    fputs("\xEF\xBB\xBF", f);
    for (int i = 1; i <= LINES; i++) {
        if (i == BAD_JSON)
            fputs("{\"breach_uuid\": \n", f);
        else if (i == BLANK)
            fputs("   \n", f);
        else
            fprintf(f,
                    "{\"breach_uuid\":\"%s\",\"email\":\"%s%d@example.com\","
                    "\"other_attributes\":\"{\\\"pad\\\":\\\"%s\\\"}\"}\n",
                    BREACH, i == BAD_EMAIL ? "no spaces allowed " : "u", i, pad);
    }
    fclose(f);
}

static const bd_reader_options *reader_options(void)
{
    static bd_reader_options ro;
    ro = (bd_reader_options){.format = BD_FMT_JSONL,
                             .fields = bd_import_field_names(BD_IMPORT_RECORDS),
                             .utf8 = BD_UTF8_STRICT};
    return &ro;
}

typedef struct {
    uint64_t rows, rejected, last_line;
    uint64_t rejected_at[4];
    bool ordered;
} seen;

/* Takes every batch of a stager over path, as the writer does. */
static seen take_all(const bd_import_options *o, bool windows, size_t *lanes)
{
    bd_reader *rd = NULL;
    char why[256];
    CHECK_INT(bd_reader_open_with(path, reader_options(), &rd, why, sizeof why), BD_OK);
    importer proto = {.secret = secret, .o = o};
    bd_stager *sg = NULL;
    CHECK_INT(bd_stager_start(&sg, rd, path, reader_options(), &proto, windows), BD_OK);
    *lanes = bd_stager_lanes(sg);
    seen s = {.ordered = true};
    for (bool last = false; !last;) {
        stage_batch *b = bd_stager_take(sg);
        uint64_t least = UINT64_MAX, most = 0;
        for (size_t i = 0; i < b->n; i++) {
            const staged *row = &b->rows[i]; /* line order: a window's own order aside */
            least = row->line < least ? row->line : least;
            most = row->line > most ? row->line : most;
            s.ordered &= row->line > s.last_line;
            s.last_line = row->line;
            s.rows++;
            if (row->rejected && s.rejected < 4)
                s.rejected_at[s.rejected] = row->line;
            s.rejected += row->rejected;
        }
        last = b->last;
        CHECK(!last || b->end == BD_ERR_NOT_FOUND);
        bd_stager_give_back(sg, b);
    }
    bd_stager_end(sg);
    bd_reader_close(rd);
    return s;
}

/* Every line but the blank one, in order, the two refused at their own numbers. */
static void check_every_line(seen s)
{
    CHECK(s.ordered);
    CHECK_INT(s.rows, LINES - 1);
    CHECK_INT(s.last_line, LINES);
    CHECK_INT(s.rejected, 2);
    CHECK_INT(s.rejected_at[0], BAD_EMAIL);
    CHECK_INT(s.rejected_at[1], BAD_JSON);
}

TEST(test_a_dry_run_of_a_large_file_reads_it_on_two_threads_in_order)
{
    bd_import_options o = {.kind = BD_IMPORT_RECORDS, .dry_run = true};
    size_t lanes = 0;
    check_every_line(take_all(&o, false, &lanes));
    CHECK_INT(lanes, 2);
}

TEST(test_a_bulk_load_of_a_large_file_reads_it_on_two_threads_in_order)
{
    bd_import_options o = {.kind = BD_IMPORT_RECORDS, .bulk = true};
    size_t lanes = 0;
    check_every_line(take_all(&o, true, &lanes));
    CHECK_INT(lanes, 2);
}

TEST(test_a_plain_import_reads_on_one_thread)
{
    bd_import_options o = {.kind = BD_IMPORT_RECORDS};
    size_t lanes = 0;
    check_every_line(take_all(&o, true, &lanes));
    CHECK_INT(lanes, 1);
}

TEST(test_a_bulk_load_of_cards_reads_on_one_thread)
{
    bd_reader *rd = NULL;
    char why[256];
    CHECK_INT(bd_reader_open_with(path, reader_options(), &rd, why, sizeof why), BD_OK);
    bd_import_options o = {.kind = BD_IMPORT_CARDS, .bulk = true};
    importer proto = {.secret = secret, .o = &o};
    bd_stager *sg = NULL;
    CHECK_INT(bd_stager_start(&sg, rd, path, reader_options(), &proto, false), BD_OK);
    CHECK_INT(bd_stager_lanes(sg), 1);
    bd_stager_end(sg);
    bd_reader_close(rd);
}

/* The file in ranges, each read by a reader set to it, gives the lines a reader of the
 * whole file gives, one after the other. */
TEST(test_ranges_cut_at_line_breaks_read_as_the_whole_file)
{
    bd_reader *whole = NULL, *part = NULL;
    char why[256];
    CHECK_INT(bd_reader_open_with(path, reader_options(), &whole, why, sizeof why), BD_OK);
    CHECK_INT(bd_reader_open_with(path, reader_options(), &part, why, sizeof why), BD_OK);
    CHECK(bd_reader_can_range(part));
    uint64_t *bounds = NULL;
    size_t n = 0;
    CHECK_INT(bd_reader_line_bounds(part, 1u << 20, &bounds, &n), BD_OK);
    CHECK(n >= 14 && n <= 15);
    CHECK_INT(bounds[0], 0);
    CHECK_INT(bounds[n], (uint64_t)bd_reader_bytes_total(part));
    uint64_t base = 0, records = 0;
    const bd_fields *a, *b;
    uint64_t la = 0, lb = 0;
    for (size_t r = 0; r < n; r++) {
        CHECK(bounds[r + 1] > bounds[r]);
        CHECK(bd_reader_set_range(part, bounds[r], bounds[r + 1]));
        for (;;) {
            bd_result rb = bd_reader_next(part, &b, &lb, why, sizeof why);
            if (rb == BD_ERR_NOT_FOUND) {
                base += lb;
                break;
            }
            bd_result ra = bd_reader_next(whole, &a, &la, why, sizeof why);
            CHECK_INT(rb, ra);
            CHECK_INT(base + lb, la);
            bd_slice ea = {0}, eb = {0};
            if (ra == BD_OK) {
                CHECK(bd_fields_get(a, "email", &ea) == bd_fields_get(b, "email", &eb));
                CHECK(ea.len == eb.len && memcmp(ea.ptr, eb.ptr, ea.len) == 0);
                CHECK(bd_fields_get(b, "breach_uuid", &eb)); /* the BOM dropped at the start */
                records++;
            }
        }
    }
    CHECK_INT(bd_reader_next(whole, &a, &la, why, sizeof why), BD_ERR_NOT_FOUND);
    CHECK_INT(records, LINES - 2);
    free(bounds);
    bd_reader_close(whole);
    bd_reader_close(part);
}

/* A range that starts past the file's first byte keeps a byte order mark in its first line
 * (it is no JSON there, and one reader of the whole file refuses it too). */
TEST(test_a_byte_order_mark_counts_only_at_the_file_s_start)
{
    char small[64];
    snprintf(small, sizeof small, "/tmp/bd-test-stage-bom-XXXXXX");
    int fd = mkstemp(small);
    CHECK(fd >= 0);
    const char text[] = "\xEF\xBB\xBF{\"a\":1}\n\xEF\xBB\xBF{\"a\":2}\n";
    CHECK(write(fd, text, sizeof text - 1) == (ssize_t)(sizeof text - 1));
    close(fd);
    bd_reader *rd = NULL;
    char why[256];
    bd_reader_options ro = {.format = BD_FMT_JSONL};
    CHECK_INT(bd_reader_open_with(small, &ro, &rd, why, sizeof why), BD_OK);
    const bd_fields *f;
    uint64_t line;
    CHECK(bd_reader_set_range(rd, 0, 11));
    CHECK_INT(bd_reader_next(rd, &f, &line, why, sizeof why), BD_OK);
    CHECK_INT(bd_reader_next(rd, &f, &line, why, sizeof why), BD_ERR_NOT_FOUND);
    CHECK(bd_reader_set_range(rd, 11, sizeof text - 1));
    CHECK_INT(bd_reader_next(rd, &f, &line, why, sizeof why), BD_ERR_INVALID);
    CHECK_INT(line, 1);
    bd_reader_close(rd);
    unlink(small);
}

/* A compressed file cannot be cut: one thread reads it, whatever its size. */
TEST(test_a_compressed_file_is_read_on_one_thread)
{
    char gz[80];
    snprintf(gz, sizeof gz, "%s.gz", path);
    FILE *in = fopen(path, "rb");
    gzFile out = gzopen(gz, "wb1");
    CHECK(in && out);
    char buf[65536];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, in)) > 0)
        CHECK(gzwrite(out, buf, (unsigned)got) == (int)got);
    fclose(in);
    gzclose(out);
    bd_reader *rd = NULL;
    char why[256];
    CHECK_INT(bd_reader_open_with(gz, reader_options(), &rd, why, sizeof why), BD_OK);
    CHECK(!bd_reader_can_range(rd));
    bd_reader_close(rd);
    unlink(gz);
}

int main(void)
{
    if (sodium_init() < 0)
        return 1;
    randombytes_buf(secret, sizeof secret);
    write_file();
    RUN(test_a_dry_run_of_a_large_file_reads_it_on_two_threads_in_order);
    RUN(test_a_bulk_load_of_a_large_file_reads_it_on_two_threads_in_order);
    RUN(test_a_plain_import_reads_on_one_thread);
    RUN(test_a_bulk_load_of_cards_reads_on_one_thread);
    RUN(test_ranges_cut_at_line_breaks_read_as_the_whole_file);
    RUN(test_a_byte_order_mark_counts_only_at_the_file_s_start);
    RUN(test_a_compressed_file_is_read_on_one_thread);
    unlink(path);
    return test_failures != 0;
}
