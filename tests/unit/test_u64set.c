/* The 64-bit key set the importer counts identities with. */
#include "core/u64set.h"
#include "test.h"

TEST(test_u64set_adds_each_key_once_across_growth)
{
    bd_u64set s;
    bd_u64set_init(&s, 1u << 20);
    for (uint64_t k = 0; k < 5000; k++)
        CHECK_INT(bd_u64set_add(&s, k * 0x9E3779B97F4A7C15ull), 1);
    for (uint64_t k = 0; k < 5000; k++)
        CHECK_INT(bd_u64set_add(&s, k * 0x9E3779B97F4A7C15ull), 0);
    CHECK_INT(s.used, 5000);
    CHECK_INT(s.cap, 8192); /* at most three quarters full */
    bd_u64set_free(&s);
    CHECK_INT(s.used, 0);
}

TEST(test_u64set_keys_0_and_1_are_one_key)
{
    bd_u64set s;
    bd_u64set_init(&s, 10);
    CHECK_INT(bd_u64set_add(&s, 0), 1);
    CHECK_INT(bd_u64set_add(&s, 1), 0);
    bd_u64set_free(&s);
}

TEST(test_u64set_refuses_keys_past_its_limit_but_still_knows_the_old_ones)
{
    bd_u64set s;
    bd_u64set_init(&s, 3);
    CHECK_INT(bd_u64set_add(&s, 10), 1);
    CHECK_INT(bd_u64set_add(&s, 20), 1);
    CHECK_INT(bd_u64set_add(&s, 30), 1);
    CHECK_INT(bd_u64set_add(&s, 40), -1);
    CHECK_INT(bd_u64set_add(&s, 20), 0);
    CHECK_INT(s.used, 3);
    bd_u64set_free(&s);
}

int main(void)
{
    RUN(test_u64set_adds_each_key_once_across_growth);
    RUN(test_u64set_keys_0_and_1_are_one_key);
    RUN(test_u64set_refuses_keys_past_its_limit_but_still_knows_the_old_ones);
    return test_failures != 0;
}
