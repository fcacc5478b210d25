/* Request bodies kept per connection: the cap, and what a finished request leaves. */
#include <stdlib.h>
#include <string.h>

#include "http/upload.h"
#include "test.h"

TEST(test_upload_without_a_body_has_none)
{
    bd_upload *u = bd_upload_new();
    bool big = true;
    bd_slice b = bd_upload_body(u, &big);
    CHECK(b.ptr == NULL);
    CHECK(!big);
    bd_upload_free(u);
}

TEST(test_upload_joins_chunks_and_forgets_them_when_done)
{
    bd_upload *u = bd_upload_new();
    bd_upload_take(u, "{\"a\":", 5);
    bd_upload_take(u, "1}", 2);
    bool big = true;
    bd_slice b = bd_upload_body(u, &big);
    CHECK_INT((long)b.len, 7);
    CHECK(memcmp(b.ptr, "{\"a\":1}", 7) == 0);
    CHECK(!big);
    bd_upload_done(u);
    b = bd_upload_body(u, &big);
    CHECK(b.ptr == NULL);
    bd_upload_take(u, "", 0); /* an empty chunk is still a body, of no bytes */
    b = bd_upload_body(u, &big);
    CHECK(b.ptr != NULL);
    CHECK_INT((long)b.len, 0);
    bd_upload_free(u);
}

TEST(test_upload_past_the_cap_is_cut_and_marked_until_done)
{
    bd_upload *u = bd_upload_new();
    size_t n = 1u << 20;
    char *chunk = malloc(n);
    CHECK(chunk != NULL);
    memset(chunk, 'x', n);
    for (unsigned i = 0; i < (BD_UPLOAD_MAX >> 20); i++)
        bd_upload_take(u, chunk, n);
    bool big = true;
    bd_slice b = bd_upload_body(u, &big);
    CHECK(!big);
    CHECK_INT((long)b.len, (long)BD_UPLOAD_MAX);
    bd_upload_take(u, "y", 1);
    b = bd_upload_body(u, &big);
    CHECK(big);
    CHECK_INT((long)b.len, (long)BD_UPLOAD_MAX);
    bd_upload_done(u);
    bd_upload_take(u, "z", 1);
    b = bd_upload_body(u, &big);
    CHECK(!big);
    CHECK_INT((long)b.len, 1);
    free(chunk);
    bd_upload_free(u);
}

int main(void)
{
    RUN(test_upload_without_a_body_has_none);
    RUN(test_upload_joins_chunks_and_forgets_them_when_done);
    RUN(test_upload_past_the_cap_is_cut_and_marked_until_done);
    return TEST_EXIT();
}
