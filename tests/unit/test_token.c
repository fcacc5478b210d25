/* Paging tokens: round trip, tampering, expiry, binding to key and search. */
#define _GNU_SOURCE /* memmem */
#include <pthread.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "auth/token.h"
#include "test.h"

static uint8_t SECRET[BD_SECRET_LEN];
static const uint8_t SEARCH[BD_SEARCH_DIGEST_LEN] = "0123456789abcdef";
#define T0 1800000000

static bd_token sample(void)
{
    bd_token t = {.issued_at = T0,
                  .key_id = 7,
                  .records_found = 1234567,
                  .after_date = 20210214,
                  .after_id = 9876543210LL};
    memcpy(t.search, SEARCH, sizeof t.search);
    return t;
}

static bd_token_status decode_at(const char *text, int64_t now, int64_t key, bd_token *out)
{
    return bd_token_decode(SECRET, bd_slice_from(text), now, key, SEARCH, out);
}

TEST(test_token_round_trips_every_field)
{
    char text[BD_TOKEN_TEXT_MAX + 1];
    bd_token t = sample(), back;
    bd_token_encode(SECRET, &t, text);
    CHECK_INT(strspn(text, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"),
              strlen(text));
    CHECK_INT(decode_at(text, T0 + 10, 7, &back), BD_TOKEN_OK);
    CHECK_INT(back.records_found, 1234567);
    CHECK_INT(back.after_date, 20210214);
    CHECK_INT(back.after_id, 9876543210LL);
    CHECK_INT(back.issued_at, T0);
}

TEST(test_token_every_flipped_character_is_detected)
{
    char text[BD_TOKEN_TEXT_MAX + 1];
    bd_token t = sample(), back;
    bd_token_encode(SECRET, &t, text);
    for (size_t i = 0; i < strlen(text); i++) {
        char saved = text[i];
        text[i] = saved == 'A' ? 'B' : 'A';
        bd_token_status st = decode_at(text, T0, 7, &back);
        CHECK(st == BD_TOKEN_TAMPERED || st == BD_TOKEN_MALFORMED);
        text[i] = saved;
    }
}

TEST(test_token_signed_with_another_secret_is_tampered)
{
    char text[BD_TOKEN_TEXT_MAX + 1];
    uint8_t other[BD_SECRET_LEN];
    memset(other, 0x42, sizeof other);
    bd_token t = sample(), back;
    bd_token_encode(other, &t, text);
    CHECK_INT(decode_at(text, T0, 7, &back), BD_TOKEN_TAMPERED);
}

TEST(test_token_expires_after_24_hours)
{
    char text[BD_TOKEN_TEXT_MAX + 1];
    bd_token t = sample(), back;
    bd_token_encode(SECRET, &t, text);
    CHECK_INT(decode_at(text, T0 + 24 * 3600, 7, &back), BD_TOKEN_OK);
    CHECK_INT(decode_at(text, T0 + 24 * 3600 + 1, 7, &back), BD_TOKEN_EXPIRED);
    CHECK_INT(decode_at(text, T0 - 301, 7, &back), BD_TOKEN_EXPIRED);
}

TEST(test_token_is_bound_to_key_and_search)
{
    char text[BD_TOKEN_TEXT_MAX + 1];
    bd_token t = sample(), back;
    bd_token_encode(SECRET, &t, text);
    CHECK_INT(decode_at(text, T0, 8, &back), BD_TOKEN_OTHER_KEY);
    uint8_t other[BD_SEARCH_DIGEST_LEN] = "0123456789abcdeX";
    CHECK_INT(bd_token_decode(SECRET, bd_slice_from(text), T0, 7, other, &back),
              BD_TOKEN_OTHER_SEARCH);
}

TEST(test_token_garbage_is_malformed)
{
    bd_token back;
    CHECK_INT(decode_at("", T0, 7, &back), BD_TOKEN_MALFORMED);
    CHECK_INT(decode_at("abc", T0, 7, &back), BD_TOKEN_MALFORMED);
    CHECK_INT(decode_at("!!!!", T0, 7, &back), BD_TOKEN_MALFORMED);
    char text[BD_TOKEN_TEXT_MAX + 1];
    bd_token t = sample();
    bd_token_encode(SECRET, &t, text);
    /* Truncated: not base64 of a whole token (malformed), or a cut seal (altered). */
    for (int cut = 1; cut <= 8; cut++) {
        text[strlen(text) - 1] = '\0';
        bd_token_status st = decode_at(text, T0, 7, &back);
        CHECK(st == BD_TOKEN_MALFORMED || st == BD_TOKEN_TAMPERED);
    }
    CHECK_INT(bd_token_decode(SECRET, (bd_slice){"AAAA\0AAA", 8}, T0, 7, SEARCH, &back),
              BD_TOKEN_MALFORMED);
}

TEST(test_token_reveals_nothing_it_carries)
{
    /* The old tokens were signed but readable: the key id, the count and the row id could be
     * read out of the base64. Sealed, two tokens of the same fields share no bytes but the
     * version, and no field's bytes appear in the decoded text. */
    char a[BD_TOKEN_TEXT_MAX + 1], b[BD_TOKEN_TEXT_MAX + 1];
    bd_token t = sample();
    bd_token_encode(SECRET, &t, a);
    bd_token_encode(SECRET, &t, b);
    CHECK(strcmp(a, b) != 0);
    uint8_t raw[BD_TOKEN_TEXT_MAX];
    size_t n = 0;
    CHECK_INT(sodium_base642bin(raw, sizeof raw, a, strlen(a), NULL, &n, NULL,
                                sodium_base64_VARIANT_URLSAFE_NO_PADDING),
              0);
    const uint8_t id[8] = {0xea, 0x16, 0xb0, 0x4c, 0x02, 0, 0, 0}; /* 9876543210 LE */
    const uint8_t count[4] = {0x87, 0xd6, 0x12, 0x00};             /* 1234567 LE */
    CHECK(memmem(raw, n, id, 5) == NULL);
    CHECK(memmem(raw, n, count, 3) == NULL);
    CHECK(memmem(raw, n, SEARCH, 8) == NULL);
}

/* The nonce of each token (raw bytes 1-24) of n tokens of the same fields, in out. */
static void nonces(int n, uint8_t (*out)[24])
{
    bd_token t = sample();
    for (int i = 0; i < n; i++) {
        char text[BD_TOKEN_TEXT_MAX + 1];
        uint8_t raw[BD_TOKEN_TEXT_MAX];
        size_t len = 0;
        bd_token_encode(SECRET, &t, text);
        sodium_base642bin(raw, sizeof raw, text, strlen(text), NULL, &len, NULL,
                          sodium_base64_VARIANT_URLSAFE_NO_PADDING);
        memcpy(out[i], raw + 1, 24);
    }
}

#define NONCES 2000
static uint8_t thread_nonces[NONCES][24];

static void *other_thread(void *arg)
{
    (void)arg;
    nonces(NONCES, thread_nonces);
    return NULL;
}

static int cmp24(const void *a, const void *b)
{
    return memcmp(a, b, 24);
}

TEST(test_token_nonces_never_repeat_within_or_across_threads)
{
    /* Each thread derives its nonces from a counter of its own: none may repeat, in one
     * thread or between two, and consecutive ones must not look like a counter. */
    static uint8_t all[2 * NONCES][24];
    nonces(NONCES, all);
    pthread_t th;
    pthread_create(&th, NULL, other_thread, NULL);
    pthread_join(th, NULL);
    memcpy(all[NONCES], thread_nonces, sizeof thread_nonces);
    int differing_bytes = 0;
    for (int i = 0; i < 24; i++)
        differing_bytes += all[0][i] != all[1][i];
    CHECK(differing_bytes > 12);
    qsort(all, 2 * NONCES, 24, cmp24);
    int repeats = 0;
    for (int i = 1; i < 2 * NONCES; i++)
        repeats += memcmp(all[i - 1], all[i], 24) == 0;
    CHECK_INT(repeats, 0);
}

TEST(test_token_sealed_bytes_of_the_wrong_shape_are_malformed)
{
    char text[BD_TOKEN_TEXT_MAX + 1];
    bd_token back;
    CHECK(bd_token_seal_bytes(SECRET, (const uint8_t *)"short", 5, text));
    CHECK_INT(decode_at(text, T0, 7, &back), BD_TOKEN_MALFORMED);
    uint8_t body[54];       /* the fixed fields, then a query length of 0 */
    memset(body, 0xff, 52); /* negative count and row id */
    body[52] = body[53] = 0;
    CHECK(bd_token_seal_bytes(SECRET, body, sizeof body, text));
    CHECK_INT(decode_at(text, T0, 7, &back), BD_TOKEN_MALFORMED);
    /* An issue time of INT64_MIN once overflowed the age computation (fuzz_token). */
    memset(body, 0, sizeof body);
    body[7] = 0x80;
    CHECK(bd_token_seal_bytes(SECRET, body, sizeof body, text));
    CHECK_INT(decode_at(text, T0, 7, &back), BD_TOKEN_EXPIRED);
    /* A query length that disagrees with the bytes that follow. */
    body[7] = 0;
    body[52] = 3;
    CHECK(bd_token_seal_bytes(SECRET, body, sizeof body, text));
    CHECK_INT(decode_at(text, T0, 7, &back), BD_TOKEN_MALFORMED);
    CHECK(bd_token_seal_bytes(SECRET, body, 52, text)); /* no length at all */
    CHECK_INT(decode_at(text, T0, 7, &back), BD_TOKEN_MALFORMED);
    static uint8_t big[2000];
    CHECK(!bd_token_seal_bytes(SECRET, big, sizeof big, text));
}

TEST(test_token_carries_its_search_and_continues_it_without_one)
{
    char text[BD_TOKEN_TEXT_MAX + 1];
    bd_token t = sample(), back;
    memcpy(t.query, "\x03\x05\x00alice", 8);
    t.query_len = 8;
    bd_token_encode(SECRET, &t, text);
    CHECK_INT(decode_at(text, T0, 7, &back), BD_TOKEN_OK);
    CHECK_INT(back.query_len, 8);
    CHECK(memcmp(back.query, t.query, 8) == 0);
    /* Without a search of the caller's own: the key and the clock still bind it. */
    CHECK_INT(bd_token_decode(SECRET, bd_slice_from(text), T0, 7, NULL, &back), BD_TOKEN_OK);
    CHECK_INT(back.after_id, 9876543210LL);
    CHECK_INT(bd_token_decode(SECRET, bd_slice_from(text), T0, 8, NULL, &back), BD_TOKEN_OTHER_KEY);
    CHECK_INT(bd_token_decode(SECRET, bd_slice_from(text), T0 + 25 * 3600, 7, NULL, &back),
              BD_TOKEN_EXPIRED);
    /* The largest search fits the text. */
    memset(t.query, 0xa5, sizeof t.query);
    t.query_len = BD_TOKEN_QUERY_MAX;
    bd_token_encode(SECRET, &t, text);
    CHECK(strlen(text) <= BD_TOKEN_TEXT_MAX);
    CHECK_INT(decode_at(text, T0, 7, &back), BD_TOKEN_OK);
    CHECK_INT(back.query_len, BD_TOKEN_QUERY_MAX);
    CHECK(memcmp(back.query, t.query, BD_TOKEN_QUERY_MAX) == 0);
    /* One byte more is not carried at all. */
    t.query_len = BD_TOKEN_QUERY_MAX + 1;
    bd_token_encode(SECRET, &t, text);
    CHECK_INT(decode_at(text, T0, 7, &back), BD_TOKEN_OK);
    CHECK_INT(back.query_len, 0);
}

int main(void)
{
    if (sodium_init() < 0)
        return 1;
    memset(SECRET, 0x11, sizeof SECRET);
    RUN(test_token_round_trips_every_field);
    RUN(test_token_every_flipped_character_is_detected);
    RUN(test_token_signed_with_another_secret_is_tampered);
    RUN(test_token_expires_after_24_hours);
    RUN(test_token_is_bound_to_key_and_search);
    RUN(test_token_garbage_is_malformed);
    RUN(test_token_reveals_nothing_it_carries);
    RUN(test_token_nonces_never_repeat_within_or_across_threads);
    RUN(test_token_sealed_bytes_of_the_wrong_shape_are_malformed);
    RUN(test_token_carries_its_search_and_continues_it_without_one);
    return TEST_EXIT();
}
