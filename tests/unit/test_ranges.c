/* store/ranges: the packed bucket layout and the merge of accumulated hashes. */
#include "store/ranges.h"

#include <stdio.h>

#include "test.h"

typedef struct {
    char text[4096];
    size_t len;
} listing;

static int list_cb(void *ctx, const uint8_t *hash, uint32_t count)
{
    listing *l = ctx;
    char h[41];
    for (int i = 0; i < 20; i++)
        snprintf(h + 2 * i, 3, "%02X", hash[i]);
    l->len += (size_t)snprintf(l->text + l->len, sizeof l->text - l->len, "%s:%u;", h, count);
    return 0;
}

/* The blob's entries as HASH:COUNT; (hashes as 20 bytes), or "malformed". */
static const char *decode(uint32_t key, const bd_buf *b)
{
    static listing l;
    l.len = 0;
    l.text[0] = '\0';
    if (bd_range_decode(key, (const uint8_t *)b->data, b->len, list_cb, &l) != BD_OK)
        return "malformed";
    return l.text;
}

static void hash_of(uint8_t h[20], uint8_t first, uint8_t second, uint8_t third, uint8_t last)
{
    memset(h, 0, 20);
    h[0] = first;
    h[1] = second;
    h[2] = third;
    h[19] = last;
}

/* Merges the accumulator into one bucket blob held in *blob. */
static bd_result flush_into(bd_range_acc *a, bd_buf *blob);

static bd_buf *io_blob;
static bd_result io_read(void *ctx, uint32_t key, const uint8_t **b, size_t *len)
{
    (void)ctx;
    (void)key;
    *b = (const uint8_t *)io_blob->data;
    *len = io_blob->len;
    return BD_OK;
}
static bd_result io_write(void *ctx, uint32_t key, const uint8_t *b, size_t len)
{
    (void)ctx;
    (void)key;
    bd_buf copy;
    bd_buf_init(&copy, 1 << 20);
    bd_result r = bd_buf_append(&copy, b, len);
    bd_buf_free(io_blob);
    *io_blob = copy;
    return r;
}

static bd_result flush_into(bd_range_acc *a, bd_buf *blob)
{
    io_blob = blob;
    bd_range_io io = {.read = io_read, .write = io_write};
    return bd_range_acc_flush(a, &io);
}

TEST(test_merge_adds_breach_passwords_and_keeps_the_larger_download_total)
{
    bd_range_acc a;
    bd_range_acc_init(&a);
    bd_buf blob;
    bd_buf_init(&blob, 1 << 20);
    uint8_t h1[20], h2[20];
    hash_of(h1, 0x5B, 0xAA, 0x61, 0x01);
    hash_of(h2, 0x5B, 0xAA, 0x61, 0x02);
    bd_range_acc_add(&a, BD_RANGE_SHA1, h2, 1, BD_RANGE_ADD);
    bd_range_acc_add(&a, BD_RANGE_SHA1, h1, 1, BD_RANGE_ADD);
    bd_range_acc_add(&a, BD_RANGE_SHA1, h2, 1, BD_RANGE_ADD);
    CHECK_INT(flush_into(&a, &blob), BD_OK);
    CHECK_INT(a.n, 0);
    uint32_t key = BD_RANGE_KEY(BD_RANGE_SHA1, 0x5BAA6);
    CHECK_STR(decode(key, &blob), "5BAA610000000000000000000000000000000001:1;"
                                  "5BAA610000000000000000000000000000000002:2;");
    bd_range_acc_add(&a, BD_RANGE_SHA1, h1, 300, BD_RANGE_MAX);
    bd_range_acc_add(&a, BD_RANGE_SHA1, h2, 1, BD_RANGE_MAX);
    CHECK_INT(flush_into(&a, &blob), BD_OK);
    CHECK_STR(decode(key, &blob), "5BAA610000000000000000000000000000000001:300;"
                                  "5BAA610000000000000000000000000000000002:2;");
    bd_buf_free(&blob);
    bd_range_acc_free(&a);
}

TEST(test_counts_take_one_byte_below_128_and_saturate_at_the_top)
{
    bd_range_entry e[3] = {0};
    hash_of(e[0].hash, 0, 0, 0, 1);
    e[0].count = 127;
    hash_of(e[1].hash, 0, 0, 0, 2);
    e[1].count = 128;
    hash_of(e[2].hash, 0, 0, 0, 3);
    e[2].count = UINT32_MAX;
    bd_buf out;
    bd_buf_init(&out, 1 << 20);
    CHECK_INT(bd_range_merge(0, NULL, 0, e, 3, &out), BD_OK);
    CHECK_INT(out.len, 18 + 1 + 18 + 2 + 18 + 5);
    bd_range_entry more = e[2];
    more.count = 5;
    more.op = BD_RANGE_ADD;
    bd_buf merged;
    bd_buf_init(&merged, 1 << 20);
    CHECK_INT(bd_range_merge(0, (const uint8_t *)out.data, out.len, &more, 1, &merged), BD_OK);
    CHECK_STR(decode(0, &merged), "0000000000000000000000000000000000000001:127;"
                                  "0000000000000000000000000000000000000002:128;"
                                  "0000000000000000000000000000000000000003:4294967295;");
    bd_buf_free(&out);
    bd_buf_free(&merged);
}

TEST(test_ntlm_entries_take_fourteen_bytes_and_a_count)
{
    bd_range_entry e = {.count = 2, .key = BD_RANGE_KEY(BD_RANGE_NTLM, 0x8846F)};
    const uint8_t h[16] = {0x88, 0x46, 0xF7, 0xEA, 0xEE, 0x8F, 0xB1, 0x17,
                           0xAD, 0x06, 0xBD, 0xD8, 0x30, 0xB7, 0x58, 0x6C};
    memcpy(e.hash, h, 16);
    bd_buf out;
    bd_buf_init(&out, 1 << 20);
    CHECK_INT(bd_range_merge(e.key, NULL, 0, &e, 1, &out), BD_OK);
    CHECK_INT(out.len, 15);
    CHECK_STR(decode(e.key, &out), "8846F7EAEE8FB117AD06BDD830B7586C00000000:2;");
    bd_buf_free(&out);
}

TEST(test_a_malformed_blob_is_a_store_error_not_a_crash)
{
    bd_buf b;
    bd_buf_init(&b, 1 << 20);
    bd_buf_append(&b, "\x01\x02\x03", 3); /* shorter than one entry */
    CHECK_STR(decode(0, &b), "malformed");
    bd_buf_reset(&b);
    uint8_t e[23];
    memset(e, 0xFF, sizeof e); /* a count that never ends */
    bd_buf_append(&b, e, sizeof e);
    CHECK_STR(decode(0, &b), "malformed");
    bd_range_entry one = {.count = 1};
    bd_buf out;
    bd_buf_init(&out, 1 << 20);
    CHECK_INT(bd_range_merge(0, (const uint8_t *)b.data, b.len, &one, 1, &out), BD_ERR_STORE);
    bd_buf_free(&b);
    bd_buf_free(&out);
}

int main(void)
{
    RUN(test_merge_adds_breach_passwords_and_keeps_the_larger_download_total);
    RUN(test_counts_take_one_byte_below_128_and_saturate_at_the_top);
    RUN(test_ntlm_entries_take_fourteen_bytes_and_a_count);
    RUN(test_a_malformed_blob_is_a_store_error_not_a_crash);
    return TEST_EXIT();
}
