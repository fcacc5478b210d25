/* store/range_snapshot: the password ranges' local snapshot file written (each bucket's
 * answer as /range/ sends it), mapped, read, swapped while a reader holds the previous one,
 * and refused when it is not whole; a malformed blob refused by the writer. */
#include "store/range_snapshot.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/ranges.h"
#include "test.h"

static char dir[] = "/tmp/bd-test-range-snapshot-XXXXXX";
static char path[256];

/* The bucket's answer and its line count as "TEXT|LINES", or the result's name when it is
 * not BD_OK. */
static const char *get(const bd_range_snapshot *s, bd_range_mode mode, uint32_t prefix)
{
    static char out[4096];
    bd_slice text;
    uint32_t lines;
    bd_result r = bd_range_snapshot_get(s, mode, prefix, &text, &lines);
    if (r != BD_OK)
        return bd_result_str(r);
    snprintf(out, sizeof out, "%.*s|%u", (int)text.len, text.ptr, lines);
    return out;
}

/* A blob of one hash of mode: the prefix's 20 bits, then `last` in the last byte. */
static void blob_of(bd_buf *out, bd_range_mode mode, uint32_t prefix, uint8_t last,
                    uint32_t count)
{
    bd_range_entry e = {.count = count, .key = BD_RANGE_KEY(mode, prefix)};
    e.hash[0] = (uint8_t)(prefix >> 12);
    e.hash[1] = (uint8_t)(prefix >> 4);
    e.hash[2] = (uint8_t)(prefix << 4);
    e.hash[mode == BD_RANGE_SHA1 ? 19 : 15] = last;
    CHECK_INT(bd_range_merge(e.key, NULL, 0, &e, 1, out), BD_OK);
}

/* Writes path with the buckets of version: SHA-1 5BAA6 (one hash ending in `last`, count
 * `count`, and a second one ending in FF, count 12), SHA-1 00000 and the last NTLM bucket,
 * FFFFF. */
static void write_file(uint64_t version, uint8_t last, uint32_t count)
{
    bd_range_snapshot_writer *w;
    CHECK_INT(bd_range_snapshot_writer_open(path, &w), BD_OK);
    bd_buf b;
    bd_buf_init(&b, 1 << 20);
    blob_of(&b, BD_RANGE_SHA1, 0, 1, 9);
    CHECK_INT(bd_range_snapshot_writer_add(w, BD_RANGE_KEY(BD_RANGE_SHA1, 0), (uint8_t *)b.data,
                                           b.len),
              BD_OK);
    blob_of(&b, BD_RANGE_SHA1, 0x5BAA6, last, count);
    bd_range_entry more = {.count = 12, .key = BD_RANGE_KEY(BD_RANGE_SHA1, 0x5BAA6)};
    more.hash[0] = 0x5B;
    more.hash[1] = 0xAA;
    more.hash[2] = 0x60;
    more.hash[19] = 0xFF;
    bd_buf two;
    bd_buf_init(&two, 1 << 20);
    CHECK_INT(bd_range_merge(more.key, (uint8_t *)b.data, b.len, &more, 1, &two), BD_OK);
    bd_buf_free(&b);
    b = two;
    CHECK_INT(bd_range_snapshot_writer_add(w, BD_RANGE_KEY(BD_RANGE_SHA1, 0x5BAA6),
                                           (uint8_t *)b.data, b.len),
              BD_OK);
    blob_of(&b, BD_RANGE_NTLM, 0xFFFFF, 0x42, 300);
    CHECK_INT(bd_range_snapshot_writer_add(w, BD_RANGE_KEY(BD_RANGE_NTLM, 0xFFFFF),
                                           (uint8_t *)b.data, b.len),
              BD_OK);
    bd_buf_free(&b);
    CHECK_INT(bd_range_snapshot_writer_finish(w, version), BD_OK);
}

static off_t file_size(void)
{
    struct stat st;
    return stat(path, &st) == 0 ? st.st_size : -1;
}

/* Overwrites one byte of the file at `at` with its complement. */
static void flip(off_t at)
{
    int fd = open(path, O_RDWR);
    uint8_t c;
    CHECK(pread(fd, &c, 1, at) == 1);
    c = (uint8_t)~c;
    CHECK(pwrite(fd, &c, 1, at) == 1);
    close(fd);
}

#define TABLE_AT 96
#define DATA_AT (TABLE_AT + ((off_t)BD_RANGE_SNAPSHOT_KEYS + 1) * 8 + (off_t)BD_RANGE_SNAPSHOT_KEYS * 4)

TEST(test_written_file_maps_and_answers_each_bucket_as_written)
{
    write_file(7, 0xAB, 3);
    CHECK_INT(access(path, F_OK), 0);
    char tmp[300];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    CHECK(access(tmp, F_OK) != 0); /* renamed into place */
    /* "SUFFIX:COUNT" lines, CRLF between a bucket's: 35 + 2 digits and 27 + 4 */
    CHECK_INT(file_size(), DATA_AT + 37 + (37 + 2 + 38) + 31);
    bd_range_snapshot *s;
    CHECK_INT(bd_range_snapshot_open(path, true, &s), BD_OK);
    CHECK_INT(bd_range_snapshot_version(s), 7);
    CHECK_STR(get(s, BD_RANGE_SHA1, 0x5BAA6),
              "000000000000000000000000000000000AB:3\r\n000000000000000000000000000000000FF:12|2");
    CHECK_STR(get(s, BD_RANGE_SHA1, 0), "00000000000000000000000000000000001:9|1");
    CHECK_STR(get(s, BD_RANGE_NTLM, 0xFFFFF), "000000000000000000000000042:300|1");
    CHECK_STR(get(s, BD_RANGE_SHA1, 0x5BAA7), "|0"); /* no bucket */
    CHECK_STR(get(s, BD_RANGE_NTLM, 0x5BAA6), "|0");
    CHECK_STR(get(s, BD_RANGE_SHA1, 0x100000), bd_result_str(BD_ERR_INVALID));
    bd_range_snapshot_release(s);
}

TEST(test_keys_must_ascend_and_stay_below_the_table)
{
    bd_range_snapshot_writer *w;
    CHECK_INT(bd_range_snapshot_writer_open(path, &w), BD_OK);
    const uint8_t blob[19] = {0};
    CHECK_INT(bd_range_snapshot_writer_add(w, 10, blob, sizeof blob), BD_OK);
    CHECK_INT(bd_range_snapshot_writer_add(w, 10, blob, sizeof blob), BD_ERR_INVALID);
    CHECK_INT(bd_range_snapshot_writer_add(w, 9, blob, sizeof blob), BD_ERR_INVALID);
    CHECK_INT(bd_range_snapshot_writer_add(w, BD_RANGE_SNAPSHOT_KEYS, blob, sizeof blob),
              BD_ERR_INVALID);
    /* a blob that is not whole (a hash cut short) is the store's error, and adds nothing */
    CHECK_INT(bd_range_snapshot_writer_add(w, 11, blob, 7), BD_ERR_STORE);
    bd_range_snapshot_writer_abort(w);
}

TEST(test_an_aborted_write_leaves_the_previous_file_as_it_was)
{
    write_file(7, 0xAB, 3);
    bd_range_snapshot_writer *w;
    CHECK_INT(bd_range_snapshot_writer_open(path, &w), BD_OK);
    bd_range_snapshot_writer_abort(w);
    char tmp[300];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    CHECK(access(tmp, F_OK) != 0);
    bd_range_snapshot *s;
    CHECK_INT(bd_range_snapshot_open(path, true, &s), BD_OK);
    CHECK_INT(bd_range_snapshot_version(s), 7);
    bd_range_snapshot_release(s);
}

TEST(test_a_swap_serves_the_new_file_while_a_reader_finishes_on_the_old)
{
    CHECK(bd_range_snapshot_current() == NULL);
    write_file(7, 0xAB, 3);
    bd_range_snapshot *a;
    CHECK_INT(bd_range_snapshot_open(path, false, &a), BD_OK);
    bd_range_snapshot_publish(a);
    bd_range_snapshot *held = bd_range_snapshot_current(); /* a request in flight */
    CHECK(held == a);
    write_file(8, 0xCD, 5); /* the next version, renamed over the same name */
    bd_range_snapshot *b;
    CHECK_INT(bd_range_snapshot_open(path, false, &b), BD_OK);
    bd_range_snapshot_publish(b);
    bd_range_snapshot *now = bd_range_snapshot_current();
    CHECK(now == b);
    CHECK_INT(bd_range_snapshot_version(now), 8);
    CHECK_STR(get(now, BD_RANGE_SHA1, 0x5BAA6),
              "000000000000000000000000000000000CD:5\r\n000000000000000000000000000000000FF:12|2");
    /* the old map is still whole for the reader holding it */
    CHECK_INT(bd_range_snapshot_version(held), 7);
    CHECK_STR(get(held, BD_RANGE_SHA1, 0x5BAA6),
              "000000000000000000000000000000000AB:3\r\n000000000000000000000000000000000FF:12|2");
    bd_range_snapshot_release(held); /* the last reference: unmapped */
    bd_range_snapshot_release(now);
    bd_range_snapshot_publish(NULL);
    CHECK(bd_range_snapshot_current() == NULL);
}

TEST(test_a_file_that_is_not_whole_is_refused)
{
    bd_range_snapshot *s = (bd_range_snapshot *)1;
    unlink(path);
    CHECK_INT(bd_range_snapshot_open(path, true, &s), BD_ERR_NOT_FOUND);
    CHECK(s == NULL);
    /* truncated: one blob byte short, then no table at all */
    write_file(7, 0xAB, 3);
    CHECK_INT(truncate(path, file_size() - 1), 0);
    CHECK_INT(bd_range_snapshot_open(path, false, &s), BD_ERR_STORE);
    CHECK_INT(truncate(path, 50), 0);
    CHECK_INT(bd_range_snapshot_open(path, false, &s), BD_ERR_STORE);
    /* the magic */
    write_file(7, 0xAB, 3);
    flip(0);
    CHECK_INT(bd_range_snapshot_open(path, false, &s), BD_ERR_STORE);
    /* the version in the header, covered by its digest */
    write_file(7, 0xAB, 3);
    flip(16);
    CHECK_INT(bd_range_snapshot_open(path, false, &s), BD_ERR_STORE);
    /* an offset of the table (that of the bucket after 5BAA6) */
    write_file(7, 0xAB, 3);
    flip(TABLE_AT + ((off_t)BD_RANGE_KEY(BD_RANGE_SHA1, 0x5BAA6) + 1) * 8);
    CHECK_INT(bd_range_snapshot_open(path, false, &s), BD_ERR_STORE);
    /* a line count (that of 5BAA6) */
    write_file(7, 0xAB, 3);
    flip(TABLE_AT + ((off_t)BD_RANGE_SNAPSHOT_KEYS + 1) * 8 +
         (off_t)BD_RANGE_KEY(BD_RANGE_SHA1, 0x5BAA6) * 4);
    CHECK_INT(bd_range_snapshot_open(path, false, &s), BD_ERR_STORE);
    /* a byte of the text: found when the text is verified (a file an earlier run left) */
    write_file(7, 0xAB, 3);
    flip(DATA_AT + 5);
    CHECK_INT(bd_range_snapshot_open(path, true, &s), BD_ERR_STORE);
    CHECK(s == NULL);
    CHECK_INT(bd_range_snapshot_open(path, false, &s), BD_OK);
    bd_range_snapshot_release(s);
}

int main(void)
{
    if (!mkdtemp(dir))
        return 1;
    snprintf(path, sizeof path, "%s/%s", dir, BD_RANGE_SNAPSHOT_FILE);
    RUN(test_written_file_maps_and_answers_each_bucket_as_written);
    RUN(test_keys_must_ascend_and_stay_below_the_table);
    RUN(test_an_aborted_write_leaves_the_previous_file_as_it_was);
    RUN(test_a_swap_serves_the_new_file_while_a_reader_finishes_on_the_old);
    RUN(test_a_file_that_is_not_whole_is_refused);
    unlink(path);
    rmdir(dir);
    return TEST_EXIT();
}
