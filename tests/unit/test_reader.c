/* Tests for the streaming import reader: line numbers, skipping, CSV/TSV records, compressed
 * input, combo and stealer lines, UTF-8 rules, column maps. */
#include "ingest/reader.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"

static char dir[] = "/tmp/bd_test_reader_XXXXXX";
static char why[512];

/* Writes len bytes to dir/name and returns the path (static storage, one per call site use). */
static const char *write_file(const char *name, const char *data, size_t len)
{
    static char path[8][256];
    static int next;
    char *p = path[next++ % 8];
    snprintf(p, 256, "%s/%s", dir, name);
    FILE *fp = fopen(p, "wb");
    if (!fp || fwrite(data, 1, len, fp) != len || fclose(fp) != 0)
        TEST_FAIL("cannot write %s", p);
    return p;
}

static const char *write_str(const char *name, const char *data)
{
    return write_file(name, data, strlen(data));
}

/* Compresses dir/name into dir/name.gz with the gzip program. */
static void gzip_file(const char *name)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "gzip -n -f '%s/%s'", dir, name);
    if (system(cmd) != 0)
        TEST_FAIL("gzip failed: %s", cmd);
}

static bd_reader *open_ok(const char *path, bd_format fmt)
{
    bd_reader *r = NULL;
    why[0] = '\0';
    bd_result res = bd_reader_open(path, fmt, &r, why, sizeof why);
    if (res != BD_OK)
        TEST_FAIL("open %s: %d %s", path, res, why);
    return r;
}

/* Reads one record: its result, line, and field `name` (or "(absent)"). */
typedef struct {
    bd_result res;
    uint64_t line;
    char value[64];
} got;

static got next(bd_reader *r, const char *name)
{
    got g = {0, 0, ""};
    const bd_fields *rec = NULL;
    why[0] = '\0';
    g.res = bd_reader_next(r, &rec, &g.line, why, sizeof why);
    bd_slice v;
    if (g.res == BD_OK && bd_fields_get(rec, name, &v))
        snprintf(g.value, sizeof g.value, "%.*s", (int)v.len, v.ptr);
    else
        snprintf(g.value, sizeof g.value, "(absent)");
    return g;
}

TEST(test_jsonl_bad_line_in_the_middle_is_reported_with_its_line_number)
{
    const char *p = write_str("mid.jsonl", "{\"email\":\"a@example.com\"}\n"
                                           "\n"
                                           "{\"email\": oops}\n"
                                           "{\"email\":\"b@example.com\"}\n");
    bd_reader *r = open_ok(p, BD_FMT_AUTO);
    if (!r)
        return;
    got g = next(r, "email");
    CHECK_INT(g.res, BD_OK);
    CHECK_INT(g.line, 1);
    CHECK_STR(g.value, "a@example.com");
    g = next(r, "email");
    CHECK_INT(g.res, BD_ERR_INVALID);
    CHECK_INT(g.line, 3);
    CHECK_STR(why, "not valid JSON in the value of \"email\": a word that is not JSON (text "
                   "needs double quotes)");
    g = next(r, "email");
    CHECK_INT(g.res, BD_OK);
    CHECK_INT(g.line, 4);
    CHECK_STR(g.value, "b@example.com");
    CHECK_INT(next(r, "email").res, BD_ERR_NOT_FOUND);
    CHECK_INT(next(r, "email").res, BD_ERR_NOT_FOUND);
    bd_reader_close(r);
}

TEST(test_jsonl_whitespace_only_lines_are_skipped)
{
    const char *p = write_str("blank.jsonl", " \t\r\n\n{\"a\":\"1\"}\n   \n");
    bd_reader *r = open_ok(p, BD_FMT_JSONL);
    if (!r)
        return;
    got g = next(r, "a");
    CHECK_INT(g.res, BD_OK);
    CHECK_INT(g.line, 3);
    CHECK_INT(next(r, "a").res, BD_ERR_NOT_FOUND);
    bd_reader_close(r);
}

TEST(test_jsonl_final_line_without_newline_is_a_record)
{
    const char *p = write_str("last.jsonl", "{\"a\":\"1\"}\n{\"a\":\"2\"}");
    bd_reader *r = open_ok(p, BD_FMT_JSONL);
    if (!r)
        return;
    CHECK_STR(next(r, "a").value, "1");
    got g = next(r, "a");
    CHECK_INT(g.res, BD_OK);
    CHECK_INT(g.line, 2);
    CHECK_STR(g.value, "2");
    CHECK_INT(next(r, "a").res, BD_ERR_NOT_FOUND);
    bd_reader_close(r);
}

TEST(test_jsonl_crlf_lines_and_a_bom_are_accepted)
{
    const char *p = write_str("crlf.jsonl", "\xEF\xBB\xBF{\"a\":\"1\"}\r\n{\"a\":\"2\"}\r\n");
    bd_reader *r = open_ok(p, BD_FMT_JSONL);
    if (!r)
        return;
    CHECK_STR(next(r, "a").value, "1");
    CHECK_STR(next(r, "a").value, "2");
    CHECK_INT(next(r, "a").res, BD_ERR_NOT_FOUND);
    bd_reader_close(r);
}

/* A JSONL line {"a":"xxx..."} of exactly len bytes. */
static char *long_line(size_t len)
{
    char *s = malloc(len + 1);
    if (!s)
        return NULL;
    memcpy(s, "{\"a\":\"", 6);
    memset(s + 6, 'x', len - 8);
    memcpy(s + len - 2, "\"}", 3);
    return s;
}

TEST(test_over_long_line_is_reported_and_skipped)
{
    size_t n = BD_READER_LINE_MAX + 1;
    char *big = long_line(n);
    char *data = malloc(n + 64);
    if (!big || !data)
        return;
    size_t k = 0;
    memcpy(data + k, "{\"a\":\"1\"}\n", 10);
    k += 10;
    memcpy(data + k, big, n);
    k += n;
    memcpy(data + k, "\n{\"a\":\"3\"}\n", 11);
    k += 11;
    const char *p = write_file("long.jsonl", data, k);
    free(big);
    free(data);
    bd_reader *r = open_ok(p, BD_FMT_JSONL);
    if (!r)
        return;
    CHECK_STR(next(r, "a").value, "1");
    got g = next(r, "a");
    CHECK_INT(g.res, BD_ERR_INVALID);
    CHECK_INT(g.line, 2);
    CHECK_STR(why, "line longer than 1 MiB");
    g = next(r, "a");
    CHECK_INT(g.res, BD_OK);
    CHECK_INT(g.line, 3);
    CHECK_STR(g.value, "3");
    CHECK_INT(next(r, "a").res, BD_ERR_NOT_FOUND);
    CHECK_INT(bd_reader_bytes_read(r), (uint64_t)k);
    bd_reader_close(r);
}

TEST(test_line_of_exactly_1_mib_is_accepted)
{
    size_t n = BD_READER_LINE_MAX;
    char *big = long_line(n);
    if (!big)
        return;
    big[n] = '\n';
    const char *p = write_file("exact.jsonl", big, n + 1);
    free(big);
    bd_reader *r = open_ok(p, BD_FMT_JSONL);
    if (!r)
        return;
    got g = next(r, "a");
    CHECK_INT(g.res, BD_OK);
    CHECK_INT(g.line, 1);
    CHECK_INT(next(r, "a").res, BD_ERR_NOT_FOUND);
    bd_reader_close(r);
}

TEST(test_over_long_last_line_without_newline_is_reported)
{
    size_t n = 3 * BD_READER_LINE_MAX; /* longer than the whole read buffer */
    char *big = long_line(n);
    if (!big)
        return;
    const char *p = write_file("longlast.jsonl", big, n);
    free(big);
    bd_reader *r = open_ok(p, BD_FMT_JSONL);
    if (!r)
        return;
    got g = next(r, "a");
    CHECK_INT(g.res, BD_ERR_INVALID);
    CHECK_INT(g.line, 1);
    CHECK_INT(next(r, "a").res, BD_ERR_NOT_FOUND);
    bd_reader_close(r);
}

TEST(test_bytes_total_is_the_file_size_and_bytes_read_reaches_it)
{
    const char *p = write_str("size.jsonl", "{\"a\":\"1\"}\n{\"a\":\"2\"}\n");
    bd_reader *r = open_ok(p, BD_FMT_JSONL);
    if (!r)
        return;
    CHECK_INT(bd_reader_bytes_total(r), 20);
    while (next(r, "a").res == BD_OK)
        ;
    CHECK_INT(bd_reader_bytes_read(r), 20);
    bd_reader_close(r);
}

TEST(test_csv_multi_line_quoted_field_keeps_line_numbers_right)
{
    const char *p = write_str("multi.csv", "email,note\n"
                                           "a@example.com,\"first line\n"
                                           "second line\"\n"
                                           "b@example.com,plain\n");
    bd_reader *r = open_ok(p, BD_FMT_AUTO);
    if (!r)
        return;
    CHECK_INT(bd_reader_format(r), BD_FMT_CSV);
    got g = next(r, "note");
    CHECK_INT(g.res, BD_OK);
    CHECK_INT(g.line, 2);
    CHECK_STR(g.value, "first line\nsecond line");
    g = next(r, "email");
    CHECK_INT(g.res, BD_OK);
    CHECK_INT(g.line, 4);
    CHECK_STR(g.value, "b@example.com");
    CHECK_INT(next(r, "email").res, BD_ERR_NOT_FOUND);
    bd_reader_close(r);
}

TEST(test_csv_crlf_file_with_bom_reads_header_and_rows)
{
    const char *p = write_str("crlf.csv", "\xEF\xBB\xBF"
                                          "email,note\r\n"
                                          "a@example.com,\"x\r\ny\"\r\n"
                                          "b@example.com,z\r\n");
    bd_reader *r = open_ok(p, BD_FMT_CSV);
    if (!r)
        return;
    CHECK_STR(bd_csv_header_name(bd_reader_csv_header(r), 0), "email");
    got g = next(r, "note");
    CHECK_STR(g.value, "x\r\ny");
    g = next(r, "note");
    CHECK_INT(g.line, 4);
    CHECK_STR(g.value, "z");
    bd_reader_close(r);
}

TEST(test_csv_bad_row_is_reported_and_reading_goes_on)
{
    const char *p = write_str("badrow.csv", "a,b\n1,2\n1,2,3\n\n4,5\n");
    bd_reader *r = open_ok(p, BD_FMT_CSV);
    if (!r)
        return;
    CHECK_STR(next(r, "b").value, "2");
    got g = next(r, "b");
    CHECK_INT(g.res, BD_ERR_INVALID);
    CHECK_INT(g.line, 3);
    CHECK_STR(why, "the record has 3 cells but the header has 2 columns");
    g = next(r, "b");
    CHECK_INT(g.res, BD_OK);
    CHECK_INT(g.line, 5); /* the empty line 4 is skipped */
    CHECK_STR(g.value, "5");
    CHECK_INT(next(r, "b").res, BD_ERR_NOT_FOUND);
    bd_reader_close(r);
}

/* Reads the next record and checks its result, line and the value of column "b". */
static void expect(bd_reader *r, bd_result res, uint64_t line, const char *b)
{
    got g = next(r, "b");
    CHECK_INT(g.res, res);
    CHECK_INT(g.line, line);
    if (res == BD_OK)
        CHECK_STR(g.value, b);
    else if (res == BD_ERR_INVALID)
        CHECK_STR(why, b);
}

static const char UNCLOSED_EOF[] = "unclosed quote: a quoted cell starts on this line and is not "
                                   "closed before the end of the input; reading resumes at the "
                                   "next line";
static const char UNCLOSED_1MIB[] = "unclosed quote: a quoted cell starts on this line and is "
                                    "still open after 1 MiB; reading resumes at the next line";
static const char CELLS_1_OF_2[] = "the record has 1 cells but the header has 2 columns";

TEST(test_csv_unclosed_quote_at_end_costs_only_its_first_line)
{
    const char *p = write_str("open.csv", "a,b\n1,2\n3,\"never\nclosed\n");
    bd_reader *r = open_ok(p, BD_FMT_CSV);
    if (!r)
        return;
    expect(r, BD_OK, 2, "2");
    expect(r, BD_ERR_INVALID, 3, UNCLOSED_EOF);
    expect(r, BD_ERR_INVALID, 4, CELLS_1_OF_2); /* "closed" is read again, on its own */
    CHECK_INT(next(r, "a").res, BD_ERR_NOT_FOUND);
    bd_reader_close(r);
}

TEST(test_csv_unclosed_quote_on_line_2_of_1001_loses_only_line_2)
{
    size_t cap = 16 * 1024, k = 0;
    char *data = malloc(cap);
    if (!data)
        return;
    k += (size_t)snprintf(data + k, cap - k, "a,b\n1,\"never closed\n");
    for (int i = 3; i <= 1001; i++)
        k += (size_t)snprintf(data + k, cap - k, "%d,v%d\n", i, i);
    const char *p = write_file("line2.csv", data, k);
    free(data);
    bd_reader *r = open_ok(p, BD_FMT_CSV);
    if (!r)
        return;
    expect(r, BD_ERR_INVALID, 2, UNCLOSED_EOF);
    int ok = 0;
    for (int i = 3; i <= 1001; i++) {
        char want[16];
        snprintf(want, sizeof want, "v%d", i);
        got g = next(r, "b");
        ok += g.res == BD_OK && g.line == (uint64_t)i && strcmp(g.value, want) == 0;
    }
    CHECK_INT(ok, 999);
    CHECK_INT(next(r, "a").res, BD_ERR_NOT_FOUND);
    bd_reader_close(r);
}

TEST(test_csv_stray_quote_closed_with_text_after_it_costs_only_its_line)
{
    const char *p = write_str("stray.csv", "a,b\n1,\"stray\n2,x\n3,\"y\"z\n4,w\n");
    bd_reader *r = open_ok(p, BD_FMT_CSV);
    if (!r)
        return;
    expect(r, BD_ERR_INVALID, 2,
           "unclosed quote: a quoted cell starts on this line and closes on a later line with "
           "text after the quote; reading resumes at the next line");
    expect(r, BD_OK, 3, "x");
    expect(r, BD_ERR_INVALID, 4,
           "the record is not valid CSV: a closing quote must be followed by a comma or the "
           "end of the record");
    expect(r, BD_OK, 5, "w");
    CHECK_INT(next(r, "a").res, BD_ERR_NOT_FOUND);
    bd_reader_close(r);
}

TEST(test_csv_unclosed_quote_inside_replayed_lines_recovers_again)
{
    const char *p = write_str("twice.csv", "a,b\n1,\"open\n2,\"also open\n3,z\n");
    bd_reader *r = open_ok(p, BD_FMT_CSV);
    if (!r)
        return;
    expect(r, BD_ERR_INVALID, 2,
           "unclosed quote: a quoted cell starts on this line and closes on a later line with "
           "text after the quote; reading resumes at the next line");
    expect(r, BD_ERR_INVALID, 3, UNCLOSED_EOF);
    expect(r, BD_OK, 4, "z");
    CHECK_INT(next(r, "a").res, BD_ERR_NOT_FOUND);
    bd_reader_close(r);
}

TEST(test_csv_closed_multi_line_record_with_a_wrong_cell_count_is_one_rejection)
{
    const char *p = write_str("count.csv", "a,b\n1,\"x\ny\",3\n4,5\n");
    bd_reader *r = open_ok(p, BD_FMT_CSV);
    if (!r)
        return;
    expect(r, BD_ERR_INVALID, 2, "the record has 3 cells but the header has 2 columns");
    expect(r, BD_OK, 4, "5");
    bd_reader_close(r);
}

TEST(test_csv_over_long_line_is_skipped_alone_even_inside_a_quote)
{
    size_t n = BD_READER_LINE_MAX + 10;
    char *data = malloc(n + 100);
    if (!data)
        return;
    size_t k = 0;
    memcpy(data + k, "a,b\n1,\"", 7);
    k += 7;
    memset(data + k, 'x', n); /* line 2 is over-long and leaves a quote open */
    k += n;
    memcpy(data + k, "\nstill, \"\"quoted\n\",end\n7,8\n", 27);
    k += 27;
    const char *p = write_file("longq.csv", data, k);
    free(data);
    bd_reader *r = open_ok(p, BD_FMT_CSV);
    if (!r)
        return;
    expect(r, BD_ERR_INVALID, 2, "line longer than 1 MiB");
    expect(r, BD_OK, 3, " \"\"quoted"); /* a line of its own: the quote died with line 2 */
    expect(r, BD_ERR_INVALID, 4, UNCLOSED_EOF);
    expect(r, BD_OK, 5, "8");
    CHECK_INT(next(r, "a").res, BD_ERR_NOT_FOUND);
    bd_reader_close(r);
}

TEST(test_csv_quote_open_past_1_mib_costs_its_line_and_the_rest_is_read_again)
{
    size_t line = 600 * 1024;
    char *data = malloc(2 * line + 100);
    if (!data)
        return;
    size_t k = 0;
    memcpy(data + k, "a,b\n1,\"", 7);
    k += 7;
    memset(data + k, 'x', line);
    k += line;
    data[k++] = '\n';
    memset(data + k, 'y', line);
    k += line;
    memcpy(data + k, "\nz\"\n7,8\n", 8);
    k += 8;
    const char *p = write_file("longrec.csv", data, k);
    free(data);
    bd_reader *r = open_ok(p, BD_FMT_CSV);
    if (!r)
        return;
    expect(r, BD_ERR_INVALID, 2, UNCLOSED_1MIB);
    expect(r, BD_ERR_INVALID, 3, CELLS_1_OF_2);
    expect(r, BD_ERR_INVALID, 4, CELLS_1_OF_2); /* z" : a quote inside a cell is literal */
    expect(r, BD_OK, 5, "8");
    CHECK_INT(next(r, "a").res, BD_ERR_NOT_FOUND);
    bd_reader_close(r);
}

TEST(test_csv_over_long_line_after_an_open_quote_is_reported_in_its_turn)
{
    size_t n = BD_READER_LINE_MAX + 5;
    char *data = malloc(n + 64);
    if (!data)
        return;
    size_t k = 0;
    memcpy(data + k, "a,b\n1,\"open\n2,b2\n", 17);
    k += 17;
    memset(data + k, 'x', n);
    k += n;
    memcpy(data + k, "\n5,6\n", 5);
    k += 5;
    const char *p = write_file("pending.csv", data, k);
    free(data);
    bd_reader *r = open_ok(p, BD_FMT_CSV);
    if (!r)
        return;
    expect(r, BD_ERR_INVALID, 2,
           "unclosed quote: a quoted cell starts on this line and is still open at a line longer "
           "than 1 MiB; reading resumes at the next line");
    expect(r, BD_OK, 3, "b2");
    expect(r, BD_ERR_INVALID, 4, "line longer than 1 MiB");
    expect(r, BD_OK, 5, "6");
    CHECK_INT(next(r, "a").res, BD_ERR_NOT_FOUND);
    bd_reader_close(r);
}

TEST(test_csv_duplicate_header_fails_open)
{
    const char *p = write_str("dup.csv", "a,b,a\n1,2,3\n");
    bd_reader *r = (bd_reader *)1;
    CHECK_INT(bd_reader_open(p, BD_FMT_AUTO, &r, why, sizeof why), BD_ERR_INVALID);
    CHECK(r == NULL);
    CHECK_STR(why, "columns 1 and 3 of the header have the same name");
}

TEST(test_csv_empty_file_fails_open)
{
    const char *p = write_str("empty.csv", "");
    bd_reader *r = NULL;
    CHECK_INT(bd_reader_open(p, BD_FMT_AUTO, &r, why, sizeof why), BD_ERR_IO);
    CHECK(strstr(why, "is empty: a CSV file must start with a header row") != NULL);
}

TEST(test_missing_file_fails_open_with_io_error)
{
    bd_reader *r = NULL;
    char p[300];
    snprintf(p, sizeof p, "%s/missing.jsonl", dir);
    CHECK_INT(bd_reader_open(p, BD_FMT_AUTO, &r, why, sizeof why), BD_ERR_IO);
    CHECK(strstr(why, "cannot open") != NULL);
    CHECK(strstr(why, "No such file or directory") != NULL);
}

TEST(test_directory_fails_open_with_io_error)
{
    bd_reader *r = NULL;
    CHECK_INT(bd_reader_open(dir, BD_FMT_JSONL, &r, why, sizeof why), BD_ERR_IO);
    CHECK(strstr(why, "it is a directory") != NULL);
}

/* A file swapped for a link after breachctl listed it is refused by the open itself
 * (O_NOFOLLOW); a link to a pipe (the shell's <(...)) is read; --follow-links reads all. */
TEST(test_a_symbolic_link_is_opened_only_when_following_links_or_to_a_pipe)
{
    const char *target = write_str("target.txt", "ann@example.com:pw1\n");
    char link[300], fifo_link[300];
    snprintf(link, sizeof link, "%s/link.txt", dir);
    CHECK_INT(symlink(target, link), 0);
    bd_reader_options o = {.format = BD_FMT_COMBO, .separator = ':'};
    bd_reader *r = (bd_reader *)1;
    CHECK_INT(bd_reader_open_with(link, &o, &r, why, sizeof why), BD_ERR_IO);
    CHECK(r == NULL);
    char want[400];
    snprintf(want, sizeof want,
             "cannot open %s: it is a symbolic link (--follow-links follows links)", link);
    CHECK_STR(why, want);
    o.follow_links = true;
    CHECK_INT(bd_reader_open_with(link, &o, &r, why, sizeof why), BD_OK);
    got g = next(r, "password");
    CHECK_INT(g.res, BD_OK);
    CHECK_STR(g.value, "pw1");
    bd_reader_close(r);
    int fds[2];
    CHECK_INT(pipe(fds), 0);
    CHECK_INT(write(fds[1], "bob:pw2\n", 8), 8);
    close(fds[1]);
    snprintf(fifo_link, sizeof fifo_link, "/dev/fd/%d", fds[0]); /* a link to the pipe */
    o.follow_links = false;
    CHECK_INT(bd_reader_open_with(fifo_link, &o, &r, why, sizeof why), BD_OK);
    g = next(r, "password");
    CHECK_INT(g.res, BD_OK);
    CHECK_STR(g.value, "pw2");
    bd_reader_close(r);
    close(fds[0]);
    unlink(link);
}

TEST(test_gz_jsonl_file_is_decompressed)
{
    write_str("records.jsonl", "{\"a\":\"1\"}\n\n{\"a\":\"3\"}\n");
    gzip_file("records.jsonl");
    char p[300];
    snprintf(p, sizeof p, "%s/records.jsonl.gz", dir);
    bd_reader *r = open_ok(p, BD_FMT_AUTO);
    if (!r)
        return;
    CHECK_INT(bd_reader_format(r), BD_FMT_JSONL);
    struct stat st;
    CHECK_INT(stat(p, &st), 0);
    CHECK_INT(bd_reader_bytes_total(r), (int64_t)st.st_size); /* compressed bytes */
    got g = next(r, "a");
    CHECK_INT(g.res, BD_OK);
    CHECK_STR(g.value, "1");
    g = next(r, "a");
    CHECK_INT(g.line, 3);
    CHECK_STR(g.value, "3");
    CHECK_INT(next(r, "a").res, BD_ERR_NOT_FOUND);
    CHECK_INT(bd_reader_bytes_read(r), (uint64_t)st.st_size);
    bd_reader_close(r);
}

TEST(test_gz_csv_file_is_detected_and_decompressed)
{
    write_str("cards.csv", "number,owner\n4111111111111111,\"Doe, J\"\n");
    gzip_file("cards.csv");
    char p[300];
    snprintf(p, sizeof p, "%s/cards.csv.gz", dir);
    bd_reader *r = open_ok(p, BD_FMT_AUTO);
    if (!r)
        return;
    CHECK_INT(bd_reader_format(r), BD_FMT_CSV);
    got g = next(r, "owner");
    CHECK_INT(g.res, BD_OK);
    CHECK_INT(g.line, 2);
    CHECK_STR(g.value, "Doe, J");
    CHECK_INT(next(r, "owner").res, BD_ERR_NOT_FOUND);
    bd_reader_close(r);
}

TEST(test_a_plain_file_named_gz_is_read_plain)
{
    const char *p = write_str("plain.jsonl.gz", "{\"a\":\"plain\"}\n");
    bd_reader *r = open_ok(p, BD_FMT_AUTO);
    if (!r)
        return;
    got g = next(r, "a");
    CHECK_INT(g.res, BD_OK);
    CHECK_STR(g.value, "plain");
    CHECK_INT(next(r, "a").res, BD_ERR_NOT_FOUND);
    bd_reader_close(r);
}

TEST(test_corrupt_gz_data_is_an_io_error_naming_the_decoder)
{
    /* a gzip header, then bytes that are no deflate stream */
    const char bad[] = "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xff\xff\xff\xff\xff\xff";
    const char *p = write_file("bad.jsonl", bad, sizeof bad - 1);
    bd_reader *r = open_ok(p, BD_FMT_AUTO);
    if (!r)
        return;
    got g = next(r, "a");
    CHECK_INT(g.res, BD_ERR_IO);
    CHECK(strstr(why, "decompression failed: the gzip data is corrupt") != NULL);
    CHECK_INT(next(r, "a").res, BD_ERR_IO);
    bd_reader_close(r);
}

TEST(test_truncated_gz_file_is_an_io_error_after_its_records)
{
    /* compress a file big enough that truncation leaves whole lines before the cut */
    size_t lines = 20000;
    char *data = malloc(lines * 16);
    if (!data)
        return;
    size_t k = 0;
    for (size_t i = 0; i < lines; i++)
        k += (size_t)snprintf(data + k, 16, "{\"a\":\"%zu\"}\n", i % 10);
    write_file("trunc.jsonl", data, k);
    free(data);
    gzip_file("trunc.jsonl");
    char p[300], cmd[1400];
    snprintf(p, sizeof p, "%s/trunc.jsonl.gz", dir);
    snprintf(cmd, sizeof cmd, "head -c 200 '%s' > '%s.cut' && mv '%s.cut' '%s'", p, p, p, p);
    if (system(cmd) != 0) {
        TEST_FAIL("cannot truncate %s", p);
        return;
    }
    bd_reader *r = open_ok(p, BD_FMT_AUTO);
    if (!r)
        return;
    bd_result res;
    while ((res = next(r, "a").res) == BD_OK || res == BD_ERR_INVALID)
        ;
    CHECK_INT(res, BD_ERR_IO);
    CHECK(strstr(why, "unexpected end of file") != NULL);
    bd_reader_close(r);
}

TEST(test_closing_a_gz_reader_early_leaves_no_child)
{
    size_t lines = 200000; /* more than one read of the decoder holds */
    char *data = malloc(lines * 16);
    if (!data)
        return;
    size_t k = 0;
    for (size_t i = 0; i < lines; i++)
        k += (size_t)snprintf(data + k, 16, "{\"a\":\"%zu\"}\n", i % 10);
    write_file("early.jsonl", data, k);
    free(data);
    gzip_file("early.jsonl");
    char p[300];
    snprintf(p, sizeof p, "%s/early.jsonl.gz", dir);
    bd_reader *r = open_ok(p, BD_FMT_AUTO);
    if (!r)
        return;
    CHECK_INT(next(r, "a").res, BD_OK);
    bd_reader_close(r);
    CHECK(waitpid(-1, NULL, WNOHANG) < 0); /* no child left, not even a zombie */
}

static bd_reader *open_with(const char *path, const bd_reader_options *o)
{
    bd_reader *r = NULL;
    why[0] = '\0';
    bd_result res = bd_reader_open_with(path, o, &r, why, sizeof why);
    if (res != BD_OK)
        TEST_FAIL("open %s: %d %s", path, res, why);
    return r;
}

TEST(test_combo_with_bom_crlf_and_a_detected_separator)
{
    const char *p = write_str("c.txt", "\xEF\xBB\xBF"
                                       "ann@example.com;pa;ss\r\n"
                                       "\r\n"
                                       "bob;pw\r\n"
                                       "nosep\r\n");
    bd_reader_options o = {.format = BD_FMT_COMBO, .utf8 = BD_UTF8_STRICT};
    bd_reader *r = open_with(p, &o);
    if (!r)
        return;
    got g = next(r, "email");
    CHECK_INT(g.line, 1);
    CHECK_STR(g.value, "ann@example.com");
    g = next(r, "user_name");
    CHECK_INT(g.line, 3);
    CHECK_STR(g.value, "bob");
    g = next(r, "password");
    CHECK_INT(g.res, BD_ERR_INVALID);
    CHECK_INT(g.line, 4);
    CHECK_STR(why, "no separator on the line (login, separator, password expected)");
    CHECK_INT(next(r, "email").res, BD_ERR_NOT_FOUND);
    bd_reader_close(r);
}

TEST(test_combo_without_any_separator_fails_open)
{
    const char *p = write_str("nosep.txt", "alpha\nbeta\n");
    bd_reader_options o = {.format = BD_FMT_COMBO};
    bd_reader *r = NULL;
    CHECK_INT(bd_reader_open_with(p, &o, &r, why, sizeof why), BD_ERR_INVALID);
    CHECK(strstr(why, "cannot tell the separator of") != NULL);
}

TEST(test_stealer_line_gives_login_password_and_site)
{
    const char *p = write_str("s.txt", "https://Shop.Example.com:8443/login|bob@x.com|p|w\n");
    bd_reader_options o = {.format = BD_FMT_STEALER};
    bd_reader *r = open_with(p, &o);
    if (!r)
        return;
    const bd_fields *rec;
    uint64_t line;
    CHECK_INT(bd_reader_next(r, &rec, &line, why, sizeof why), BD_OK);
    bd_slice v;
    CHECK(bd_fields_get(rec, "email", &v) && strcmp(v.ptr, "bob@x.com") == 0);
    CHECK(bd_fields_get(rec, "password", &v) && strcmp(v.ptr, "p|w") == 0);
    CHECK(bd_fields_get(rec, "other_attributes", &v) &&
          strcmp(v.ptr, "{\"site\":\"shop.example.com\"}") == 0);
    bd_reader_close(r);
}

TEST(test_invalid_utf8_is_rejected_by_field_or_repaired_when_lossy)
{
    const char *p = write_str("u.txt", "ann@example.com:pw\xff\xfe\nbob:ok\n");
    bd_reader_options o = {.format = BD_FMT_COMBO, .separator = ':', .utf8 = BD_UTF8_STRICT};
    bd_reader *r = open_with(p, &o);
    if (!r)
        return;
    got g = next(r, "password");
    CHECK_INT(g.res, BD_ERR_INVALID);
    CHECK_INT(g.line, 1);
    CHECK_STR(why, "password is not valid UTF-8 (--lossy stores it with U+FFFD)");
    CHECK_STR(next(r, "password").value, "ok");
    bd_reader_close(r);
    o.utf8 = BD_UTF8_LOSSY;
    r = open_with(p, &o);
    if (!r)
        return;
    CHECK_STR(next(r, "password").value, "pw\xEF\xBF\xBD\xEF\xBF\xBD");
    bd_reader_close(r);
}

TEST(test_tsv_keeps_quotes_and_headerless_columns_come_from_the_option)
{
    const char *p = write_str("t.tsv", "a@x.com\t\"quoted\" pw\r\nb@x.com\tplain\n");
    bd_reader_options o = {.format = BD_FMT_AUTO, .columns = "email,password"};
    bd_reader *r = open_with(p, &o);
    if (!r)
        return;
    CHECK_INT(bd_reader_format(r), BD_FMT_TSV);
    got g = next(r, "password");
    CHECK_INT(g.line, 1);
    CHECK_STR(g.value, "\"quoted\" pw");
    g = next(r, "email");
    CHECK_INT(g.line, 2);
    CHECK_STR(g.value, "b@x.com");
    bd_reader_close(r);
}

TEST(test_csv_through_a_map_renames_and_gathers_the_rest)
{
    static const char *const fields[] = {"email", "password", "other_attributes", NULL};
    const char *p = write_str("m.csv", "Mail,Pass,City\na@x.com,pw,Paris\n");
    bd_colmap *m = NULL;
    CHECK_INT(bd_colmap_parse("Mail=email,Pass=password", &m, why, sizeof why), BD_OK);
    bd_reader_options o = {.format = BD_FMT_CSV, .map = m, .fields = fields};
    bd_reader *r = open_with(p, &o);
    if (r) {
        const bd_fields *rec;
        uint64_t line;
        CHECK_INT(bd_reader_next(r, &rec, &line, why, sizeof why), BD_OK);
        bd_slice v;
        CHECK(bd_fields_get(rec, "email", &v) && strcmp(v.ptr, "a@x.com") == 0);
        CHECK(bd_fields_get(rec, "password", &v) && strcmp(v.ptr, "pw") == 0);
        CHECK(bd_fields_get(rec, "other_attributes", &v) &&
              strcmp(v.ptr, "{\"City\":\"Paris\"}") == 0);
        CHECK_INT(line, 2);
        bd_reader_close(r);
    }
    o.format = BD_FMT_JSONL;
    r = NULL;
    CHECK_INT(bd_reader_open_with(p, &o, &r, why, sizeof why), BD_ERR_INVALID);
    CHECK_STR(why, "--map, --columns and --drop-unmapped are for CSV and TSV files");
    bd_colmap_free(m);
}

static void remove_dir(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    RUN(test_jsonl_bad_line_in_the_middle_is_reported_with_its_line_number);
    RUN(test_jsonl_whitespace_only_lines_are_skipped);
    RUN(test_jsonl_final_line_without_newline_is_a_record);
    RUN(test_jsonl_crlf_lines_and_a_bom_are_accepted);
    RUN(test_over_long_line_is_reported_and_skipped);
    RUN(test_line_of_exactly_1_mib_is_accepted);
    RUN(test_over_long_last_line_without_newline_is_reported);
    RUN(test_bytes_total_is_the_file_size_and_bytes_read_reaches_it);
    RUN(test_csv_multi_line_quoted_field_keeps_line_numbers_right);
    RUN(test_csv_crlf_file_with_bom_reads_header_and_rows);
    RUN(test_csv_bad_row_is_reported_and_reading_goes_on);
    RUN(test_csv_unclosed_quote_at_end_costs_only_its_first_line);
    RUN(test_csv_unclosed_quote_on_line_2_of_1001_loses_only_line_2);
    RUN(test_csv_stray_quote_closed_with_text_after_it_costs_only_its_line);
    RUN(test_csv_unclosed_quote_inside_replayed_lines_recovers_again);
    RUN(test_csv_closed_multi_line_record_with_a_wrong_cell_count_is_one_rejection);
    RUN(test_csv_over_long_line_is_skipped_alone_even_inside_a_quote);
    RUN(test_csv_quote_open_past_1_mib_costs_its_line_and_the_rest_is_read_again);
    RUN(test_csv_over_long_line_after_an_open_quote_is_reported_in_its_turn);
    RUN(test_csv_duplicate_header_fails_open);
    RUN(test_csv_empty_file_fails_open);
    RUN(test_missing_file_fails_open_with_io_error);
    RUN(test_directory_fails_open_with_io_error);
    RUN(test_a_symbolic_link_is_opened_only_when_following_links_or_to_a_pipe);
    RUN(test_gz_jsonl_file_is_decompressed);
    RUN(test_gz_csv_file_is_detected_and_decompressed);
    RUN(test_a_plain_file_named_gz_is_read_plain);
    RUN(test_combo_with_bom_crlf_and_a_detected_separator);
    RUN(test_combo_without_any_separator_fails_open);
    RUN(test_stealer_line_gives_login_password_and_site);
    RUN(test_invalid_utf8_is_rejected_by_field_or_repaired_when_lossy);
    RUN(test_tsv_keeps_quotes_and_headerless_columns_come_from_the_option);
    RUN(test_csv_through_a_map_renames_and_gathers_the_rest);
    RUN(test_corrupt_gz_data_is_an_io_error_naming_the_decoder);
    RUN(test_truncated_gz_file_is_an_io_error_after_its_records);
    RUN(test_closing_a_gz_reader_early_leaves_no_child);
    remove_dir();
    return TEST_EXIT();
}
