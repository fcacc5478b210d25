/* Zeroed memory written before use (core/zeroed.h), for the import's hash sets. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/zeroed.h"
#include "test.h"

TEST(test_zeroed_alloc_gives_zeros_on_a_cache_line)
{
    static const size_t sizes[] = {0, 1, 63, 64, 65, 4096, 1u << 20, (1u << 20) + 3};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        unsigned char *p = bd_zeroed_alloc(sizes[i]);
        CHECK(p != NULL);
        if (!p)
            continue;
        CHECK_INT((uintptr_t)p % 64, 0);
        size_t nonzero = 0;
        for (size_t j = 0; j < sizes[i]; j++)
            nonzero += p[j] != 0;
        CHECK_INT(nonzero, 0);
        memset(p, 0xAB, sizes[i]); /* all of it is the caller's to write */
        free(p);
    }
}

TEST(test_zeroed_alloc_refuses_a_size_that_would_wrap)
{
    CHECK(bd_zeroed_alloc(SIZE_MAX) == NULL);
    CHECK(bd_zeroed_alloc(SIZE_MAX - 10) == NULL);
}

int main(void)
{
    RUN(test_zeroed_alloc_gives_zeros_on_a_cache_line);
    RUN(test_zeroed_alloc_refuses_a_size_that_would_wrap);
    return TEST_EXIT();
}
