/* The 128-bit key set a bulk record load finds its own duplicates with. */
#include <string.h>

#include "core/key128set.h"
#include "test.h"

static void key_of(uint64_t n, uint8_t key[16])
{
    uint64_t k[2] = {n * 0x9E3779B97F4A7C15ull, ~n};
    memcpy(key, k, 16);
}

TEST(test_key128set_adds_each_key_once_across_growth)
{
    bd_key128set s;
    bd_key128set_init(&s, 1u << 20);
    uint8_t key[16];
    for (uint64_t n = 0; n < 5000; n++) {
        key_of(n, key);
        CHECK_INT(bd_key128set_add(&s, key), 1);
    }
    for (uint64_t n = 0; n < 5000; n++) {
        key_of(n, key);
        CHECK_INT(bd_key128set_add(&s, key), 0);
    }
    CHECK_INT(s.used, 5000);
    CHECK_INT(s.cap, 8192); /* at most three quarters full */
    bd_key128set_free(&s);
    CHECK_INT(s.used, 0);
}

/* Keys that share their first eight bytes (the slot's home) are still two keys. */
TEST(test_key128set_tells_keys_apart_by_their_second_half)
{
    bd_key128set s;
    bd_key128set_init(&s, 10);
    uint8_t a[16] = {1, 2, 3}, b[16] = {1, 2, 3};
    b[15] = 9;
    CHECK_INT(bd_key128set_add(&s, a), 1);
    CHECK_INT(bd_key128set_add(&s, b), 1);
    CHECK_INT(bd_key128set_add(&s, b), 0);
    CHECK_INT(s.used, 2);
    bd_key128set_free(&s);
}

TEST(test_key128set_refuses_keys_past_its_limit_but_still_knows_the_old_ones)
{
    bd_key128set s;
    bd_key128set_init(&s, 2);
    /* all zero is stored as the key whose second half is the number 1 (as a u64set's 0 is
     * its 1): one key, as the header says */
    uint8_t zero[16] = {0}, one[16] = {0}, two[16] = {2};
    uint64_t second = 1;
    memcpy(one + 8, &second, 8);
    CHECK_INT(bd_key128set_add(&s, zero), 1);
    CHECK_INT(bd_key128set_add(&s, one), 0);
    CHECK_INT(bd_key128set_add(&s, two), 1);
    uint8_t three[16] = {3};
    CHECK_INT(bd_key128set_add(&s, three), -1);
    CHECK_INT(bd_key128set_add(&s, two), 0);
    CHECK_INT(s.used, 2);
    bd_key128set_free(&s);
}

/* A prefetch changes nothing, on an empty set (no table yet) as on a full one. */
TEST(test_key128set_prefetch_changes_nothing)
{
    bd_key128set s;
    bd_key128set_init(&s, 100);
    uint8_t k[16] = {7, 1};
    bd_key128set_prefetch(&s, k);
    CHECK_INT(s.cap, 0);
    CHECK_INT(bd_key128set_add(&s, k), 1);
    bd_key128set_prefetch(&s, k);
    k[0] = 8;
    bd_key128set_prefetch(&s, k);
    CHECK_INT(s.used, 1);
    CHECK_INT(bd_key128set_add(&s, k), 1);
    k[0] = 7;
    CHECK_INT(bd_key128set_add(&s, k), 0);
    bd_key128set_free(&s);
}

int main(void)
{
    RUN(test_key128set_adds_each_key_once_across_growth);
    RUN(test_key128set_tells_keys_apart_by_their_second_half);
    RUN(test_key128set_refuses_keys_past_its_limit_but_still_knows_the_old_ones);
    RUN(test_key128set_prefetch_changes_nothing);
    return test_failures != 0;
}
