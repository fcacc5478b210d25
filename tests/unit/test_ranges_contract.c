/* The store contract of password ranges (store.h) on every backend: records count their
 * passwords only when they go in, a download's totals keep the larger count, and a range
 * read returns one prefix's hashes in order. Each test runs on a SQLite store and, when
 * BREACHD_TEST_PG_URI names a server, on a PostgreSQL store (store_fixture.h). */
#include "core/pwhash.h"
#include "record_fixture.h"

/* "SUFFIX:COUNT;" for each hash of the range, in hex as the API writes it. */
typedef struct {
    char text[8192];
    size_t len;
    size_t digits;
} listing;

static int list_cb(void *ctx, const uint8_t *hash, uint32_t count)
{
    listing *l = ctx;
    char h[41];
    for (size_t i = 0; i < 20; i++)
        snprintf(h + 2 * i, 3, "%02X", hash[i]);
    h[5 + l->digits] = '\0';
    l->len += (size_t)snprintf(l->text + l->len, sizeof l->text - l->len, "%s:%u;", h + 5, count);
    return 0;
}

static const char *range(bd_store *s, bd_range_mode mode, uint32_t prefix)
{
    static listing l;
    l.len = 0;
    l.text[0] = '\0';
    l.digits = mode == BD_RANGE_SHA1 ? 35 : 27;
    CHECK_INT(bd_store_range_get(s, mode, prefix, list_cb, &l), BD_OK);
    return l.text;
}

/* A record of breach whose password is pw (n: its content, as record()). */
static bd_record_in with_password(const char *breach, const char *email, int n, const char *pw)
{
    bd_record_in r = record(breach, email, n);
    r.has_ranges = true;
    bd_pw_sha1(bd_slice_from(pw), r.password_sha1);
    bd_pw_ntlm(bd_slice_from(pw), r.password_ntlm);
    return r;
}

static void load(bd_store *s, bd_range_mode mode, const char *hex, uint32_t count)
{
    uint8_t h[20] = {0};
    for (size_t i = 0; hex[i] && hex[i + 1]; i += 2) {
        unsigned v;
        sscanf(hex + i, "%2x", &v);
        h[i / 2] = (uint8_t)v;
    }
    CHECK_INT(bd_store_range_load(s, mode, h, count), BD_OK);
}

#define PW_SHA1 "1E4C9B93F3F0682250B6CF8331B7EE68FD8" /* "password" after 5BAA6 */
#define PW_NTLM "7EAEE8FB117AD06BDD830B7586C"         /* "password" after 8846F */

TEST(test_range_of_an_empty_store_is_empty)
{
    bd_store *s = fresh();
    CHECK_STR(range(s, BD_RANGE_SHA1, 0x5BAA6), "");
    CHECK_STR(range(s, BD_RANGE_NTLM, 0x8846F), "");
}

TEST(test_records_that_go_in_count_their_password_and_duplicates_do_not)
{
    bd_store *s = fresh();
    breaches(s);
    CHECK_INT(bd_store_begin(s), BD_OK);
    bd_record_in a = with_password(OLD, "a@t.example", 1, "password");
    bd_record_in b = with_password(NEW, "b@t.example", 2, "password");
    put(s, &a);
    put(s, &b);
    put(s, &a); /* a duplicate in the batch */
    CHECK_INT(bd_store_commit(s), BD_OK);
    CHECK_STR(range(s, BD_RANGE_SHA1, 0x5BAA6), PW_SHA1 ":2;");
    CHECK_STR(range(s, BD_RANGE_NTLM, 0x8846F), PW_NTLM ":2;");
    CHECK_INT(bd_store_begin(s), BD_OK); /* the same records again: stored already */
    put(s, &a);
    put(s, &b);
    CHECK_INT(bd_store_commit(s), BD_OK);
    bd_store_take_late_duplicates(s);
    CHECK_STR(range(s, BD_RANGE_SHA1, 0x5BAA6), PW_SHA1 ":2;");
    bd_record_in c = with_password(MID, "c@t.example", 3, "password");
    CHECK(put(s, &c)); /* outside a transaction: one of its own */
    CHECK_STR(range(s, BD_RANGE_SHA1, 0x5BAA6), PW_SHA1 ":3;");
    CHECK_STR(range(s, BD_RANGE_NTLM, 0x8846F), PW_NTLM ":3;");
}

TEST(test_a_rolled_back_batch_counts_nothing)
{
    bd_store *s = fresh();
    breaches(s);
    CHECK_INT(bd_store_begin(s), BD_OK);
    bd_record_in a = with_password(OLD, "a@t.example", 1, "password");
    put(s, &a);
    load(s, BD_RANGE_SHA1, "5BAA60000000000000000000000000000000000A", 7);
    bd_store_rollback(s);
    CHECK_STR(range(s, BD_RANGE_SHA1, 0x5BAA6), "");
    CHECK_STR(range(s, BD_RANGE_NTLM, 0x8846F), "");
}

TEST(test_a_record_without_ranges_counts_nothing)
{
    bd_store *s = fresh();
    breaches(s);
    bd_record_in a = with_password(OLD, "a@t.example", 1, "password");
    a.has_ranges = false;
    CHECK(put(s, &a));
    CHECK_STR(range(s, BD_RANGE_SHA1, 0x5BAA6), "");
}

TEST(test_a_download_total_keeps_the_larger_count_and_passwords_add_to_it)
{
    bd_store *s = fresh();
    breaches(s);
    CHECK_INT(bd_store_begin(s), BD_OK);
    load(s, BD_RANGE_SHA1, "5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD8", 10);
    CHECK_INT(bd_store_commit(s), BD_OK);
    CHECK_INT(bd_store_begin(s), BD_OK);
    load(s, BD_RANGE_SHA1, "5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD8", 10); /* loaded again */
    load(s, BD_RANGE_SHA1, "5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD8", 4);  /* an older total */
    CHECK_INT(bd_store_commit(s), BD_OK);
    CHECK_STR(range(s, BD_RANGE_SHA1, 0x5BAA6), PW_SHA1 ":10;");
    bd_record_in a = with_password(OLD, "a@t.example", 1, "password");
    CHECK(put(s, &a));
    CHECK_STR(range(s, BD_RANGE_SHA1, 0x5BAA6), PW_SHA1 ":11;");
    CHECK_INT(bd_store_begin(s), BD_OK);
    load(s, BD_RANGE_SHA1, "5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD8", 3000000000u);
    CHECK_INT(bd_store_commit(s), BD_OK);
    CHECK_STR(range(s, BD_RANGE_SHA1, 0x5BAA6), PW_SHA1 ":3000000000;");
}

TEST(test_range_load_outside_a_transaction_or_of_count_zero_is_invalid)
{
    bd_store *s = fresh();
    uint8_t h[20] = {0};
    CHECK_INT(bd_store_range_load(s, BD_RANGE_SHA1, h, 1), BD_ERR_INVALID);
    CHECK_INT(bd_store_begin(s), BD_OK);
    CHECK_INT(bd_store_range_load(s, BD_RANGE_SHA1, h, 0), BD_ERR_INVALID);
    CHECK_INT(bd_store_commit(s), BD_OK);
    CHECK_INT(bd_store_range_get(s, BD_RANGE_SHA1, 0x100000, list_cb, NULL), BD_ERR_INVALID);
}

TEST(test_a_range_holds_its_prefix_alone_in_hash_order_per_mode)
{
    bd_store *s = fresh();
    CHECK_INT(bd_store_begin(s), BD_OK);
    load(s, BD_RANGE_SHA1, "ABCDEF0000000000000000000000000000000002", 2);
    load(s, BD_RANGE_SHA1, "ABCDE00000000000000000000000000000000001", 1);
    load(s, BD_RANGE_SHA1, "ABCDD00000000000000000000000000000000001", 5); /* the prefix before */
    load(s, BD_RANGE_SHA1, "ABCDF00000000000000000000000000000000001", 6); /* ... after */
    load(s, BD_RANGE_NTLM, "ABCDE000000000000000000000000001", 7);
    load(s, BD_RANGE_SHA1, "ABCDEFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF", 200);
    CHECK_INT(bd_store_commit(s), BD_OK);
    CHECK_STR(range(s, BD_RANGE_SHA1, 0xABCDE), "00000000000000000000000000000000001:1;"
                                                "F0000000000000000000000000000000002:2;"
                                                "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF:200;");
    CHECK_STR(range(s, BD_RANGE_NTLM, 0xABCDE), "000000000000000000000000001:7;");
    CHECK_STR(range(s, BD_RANGE_SHA1, 0xABCDD), "00000000000000000000000000000000001:5;");
}

/* Many buckets in one transaction, loaded out of order, and read back from another handle:
 * every hash lands once in its own bucket. */
TEST(test_a_large_batch_lands_every_hash_in_its_bucket)
{
    bd_store *s = fresh();
    CHECK_INT(bd_store_begin(s), BD_OK);
    for (uint32_t i = 0; i < 5000; i++) {
        uint32_t prefix = (i * 2654435761u) % 64; /* 64 buckets, scattered order */
        uint8_t h[20] = {(uint8_t)(prefix >> 12), (uint8_t)(prefix >> 4), (uint8_t)(prefix << 4),
                         (uint8_t)(i >> 8), (uint8_t)i};
        CHECK_INT(bd_store_range_load(s, BD_RANGE_SHA1, h, i + 1), BD_OK);
    }
    CHECK_INT(bd_store_commit(s), BD_OK);
    bd_store *other = open_uri(fresh_uri(), BD_STORE_READ);
    uint64_t lines = 0;
    for (uint32_t p = 0; p < 64; p++) {
        const char *t = range(other, BD_RANGE_SHA1, p);
        for (; *t; t++)
            lines += *t == ';';
    }
    CHECK_INT(lines, 5000);
}

TEST(test_a_bulk_load_counts_the_passwords_of_the_records_it_kept)
{
    bd_store *s = fresh();
    breaches(s);
    bd_record_in stored = with_password(OLD, "a@t.example", 1, "password");
    CHECK(put(s, &stored));
    CHECK_INT(bd_store_begin(s), BD_OK);
    CHECK_INT(bd_store_bulk_begin(s, BD_BULK_RECORDS), BD_OK);
    bd_record_in b = with_password(NEW, "b@t.example", 2, "password");
    bd_record_in other = with_password(NEW, "c@t.example", 3, "letmein");
    put(s, &stored); /* stored before the load */
    put(s, &b);
    put(s, &b); /* twice in the load */
    put(s, &other);
    CHECK_INT(bd_store_bulk_end(s, BD_BULK_RECORDS), BD_OK);
    CHECK_INT(bd_store_commit(s), BD_OK);
    bd_store_take_late_duplicates(s);
    CHECK_STR(range(s, BD_RANGE_SHA1, 0x5BAA6), PW_SHA1 ":2;");
    CHECK_STR(range(s, BD_RANGE_NTLM, 0x8846F), PW_NTLM ":2;");
    CHECK_STR(range(s, BD_RANGE_SHA1, 0xB7A87), "5FC1EA228B9061041B7CEC4BD3C52AB3CE3:1;");
}

static void suite(void)
{
    RUN_CONTRACT(test_range_of_an_empty_store_is_empty);
    RUN_CONTRACT(test_records_that_go_in_count_their_password_and_duplicates_do_not);
    RUN_CONTRACT(test_a_rolled_back_batch_counts_nothing);
    RUN_CONTRACT(test_a_record_without_ranges_counts_nothing);
    RUN_CONTRACT(test_a_download_total_keeps_the_larger_count_and_passwords_add_to_it);
    RUN_CONTRACT(test_range_load_outside_a_transaction_or_of_count_zero_is_invalid);
    RUN_CONTRACT(test_a_range_holds_its_prefix_alone_in_hash_order_per_mode);
    RUN_CONTRACT(test_a_large_batch_lands_every_hash_in_its_bucket);
    RUN_CONTRACT(test_a_bulk_load_counts_the_passwords_of_the_records_it_kept);
}

int main(void)
{
    return fx_main(suite);
}
