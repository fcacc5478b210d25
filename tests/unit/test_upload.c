/* Request bodies kept per connection: kept only when expected, the cap, the server's budget
 * taken and given back, and what a finished request leaves. */
#include <stdlib.h>
#include <string.h>

#include "http/upload.h"
#include "test.h"

TEST(test_upload_without_a_body_has_none)
{
    bd_upload_budget budget;
    bd_upload_budget_init(&budget, BD_UPLOAD_MAX);
    bd_upload *u = bd_upload_new(&budget);
    bd_upload_state st = BD_UPLOAD_NO_ROOM;
    bd_slice b = bd_upload_body(u, &st);
    CHECK(b.ptr == NULL);
    CHECK_INT(st, BD_UPLOAD_WHOLE);
    bd_upload_free(u);
}

TEST(test_upload_not_expected_is_discarded)
{
    bd_upload_budget budget;
    bd_upload_budget_init(&budget, BD_UPLOAD_MAX);
    bd_upload *u = bd_upload_new(&budget);
    bd_upload_take(u, "{\"a\":1}", 7);
    bd_upload_state st;
    bd_slice b = bd_upload_body(u, &st);
    CHECK(b.ptr == NULL);
    CHECK_INT(st, BD_UPLOAD_WHOLE);
    CHECK_INT((long)bd_upload_budget_held(&budget), 0);
    bd_upload_free(u);
}

TEST(test_upload_joins_chunks_and_forgets_them_when_done)
{
    bd_upload_budget budget;
    bd_upload_budget_init(&budget, BD_UPLOAD_MAX);
    bd_upload *u = bd_upload_new(&budget);
    CHECK(bd_upload_expect(u, 1024, 7));
    CHECK_INT((long)bd_upload_budget_held(&budget), 7);
    bd_upload_take(u, "{\"a\":", 5);
    bd_upload_take(u, "1}", 2);
    bd_upload_state st;
    bd_slice b = bd_upload_body(u, &st);
    CHECK_INT((long)b.len, 7);
    CHECK(memcmp(b.ptr, "{\"a\":1}", 7) == 0);
    CHECK_INT(st, BD_UPLOAD_WHOLE);
    bd_upload_done(u);
    CHECK_INT((long)bd_upload_budget_held(&budget), 0);
    b = bd_upload_body(u, &st);
    CHECK(b.ptr == NULL);
    CHECK(bd_upload_expect(u, 1024, 0)); /* chunked */
    bd_upload_take(u, "", 0); /* an empty chunk is still a body, of no bytes */
    b = bd_upload_body(u, &st);
    CHECK(b.ptr != NULL);
    CHECK_INT((long)b.len, 0);
    bd_upload_free(u);
}

TEST(test_upload_past_the_cap_is_cut_and_marked_until_done)
{
    bd_upload_budget budget;
    bd_upload_budget_init(&budget, 64u << 20);
    bd_upload *u = bd_upload_new(&budget);
    size_t n = 1u << 20;
    char *chunk = malloc(n);
    CHECK(chunk != NULL);
    memset(chunk, 'x', n);
    CHECK(bd_upload_expect(u, BD_UPLOAD_MAX, 0)); /* chunked: its share grows as it comes */
    for (unsigned i = 0; i < (BD_UPLOAD_MAX >> 20); i++)
        bd_upload_take(u, chunk, n);
    bd_upload_state st;
    bd_slice b = bd_upload_body(u, &st);
    CHECK_INT(st, BD_UPLOAD_WHOLE);
    CHECK_INT((long)b.len, (long)BD_UPLOAD_MAX);
    CHECK_INT((long)bd_upload_budget_held(&budget), (long)BD_UPLOAD_MAX);
    bd_upload_take(u, "y", 1);
    b = bd_upload_body(u, &st);
    CHECK_INT(st, BD_UPLOAD_TOO_LARGE);
    CHECK_INT((long)b.len, (long)BD_UPLOAD_MAX);
    CHECK_INT((long)bd_upload_budget_held(&budget), (long)BD_UPLOAD_MAX);
    bd_upload_done(u);
    CHECK_INT((long)bd_upload_budget_held(&budget), 0);
    CHECK(bd_upload_expect(u, 64u << 10, 0));
    bd_upload_take(u, "z", 1);
    b = bd_upload_body(u, &st);
    CHECK_INT(st, BD_UPLOAD_WHOLE);
    CHECK_INT((long)b.len, 1);
    CHECK_INT((long)bd_upload_budget_held(&budget), 64 << 10); /* a chunked body's first step */
    free(chunk);
    bd_upload_free(u);
    CHECK_INT((long)bd_upload_budget_held(&budget), 0); /* a closed connection gives it back */
}

TEST(test_upload_announced_past_the_budget_is_refused_and_takes_nothing)
{
    bd_upload_budget budget;
    bd_upload_budget_init(&budget, 100);
    bd_upload *a = bd_upload_new(&budget), *b = bd_upload_new(&budget);
    CHECK(bd_upload_expect(a, 1000, 60));
    CHECK(!bd_upload_expect(b, 1000, 41));
    CHECK_INT((long)bd_upload_budget_held(&budget), 60);
    CHECK(bd_upload_expect(b, 1000, 40));
    CHECK_INT((long)bd_upload_budget_held(&budget), 100);
    bd_upload_free(a); /* abandoned mid-way */
    CHECK_INT((long)bd_upload_budget_held(&budget), 40);
    bd_upload_free(b);
    CHECK_INT((long)bd_upload_budget_held(&budget), 0);
}

TEST(test_upload_chunked_past_the_budget_is_discarded_as_no_room)
{
    bd_upload_budget budget;
    bd_upload_budget_init(&budget, 100u << 10);
    bd_upload *a = bd_upload_new(&budget), *b = bd_upload_new(&budget);
    CHECK(bd_upload_expect(a, 1u << 20, 50u << 10));
    CHECK(bd_upload_expect(b, 1u << 20, 0));
    static char chunk[40u << 10];
    bd_upload_take(b, chunk, sizeof chunk); /* a first step of 64 KiB has no room: 40 has */
    bd_upload_state st;
    bd_slice body = bd_upload_body(b, &st);
    CHECK_INT(st, BD_UPLOAD_WHOLE);
    CHECK_INT((long)body.len, 40 << 10);
    CHECK_INT((long)bd_upload_budget_held(&budget), 90 << 10);
    bd_upload_take(b, chunk, 11u << 10); /* 51 KiB: 1 more than is free */
    body = bd_upload_body(b, &st);
    CHECK_INT(st, BD_UPLOAD_NO_ROOM);
    bd_upload_take(b, chunk, 1); /* the rest is discarded */
    body = bd_upload_body(b, &st);
    CHECK_INT(st, BD_UPLOAD_NO_ROOM);
    CHECK_INT((long)body.len, 40 << 10);
    CHECK_INT((long)bd_upload_budget_held(&budget), 90 << 10);
    bd_upload_done(b);
    CHECK_INT((long)bd_upload_budget_held(&budget), 50 << 10);
    CHECK(bd_upload_expect(b, 1u << 20, 0));
    bd_upload_take(b, chunk, 1);
    body = bd_upload_body(b, &st);
    CHECK_INT(st, BD_UPLOAD_WHOLE); /* a new request starts clean */
    CHECK_INT((long)bd_upload_budget_held(&budget), (50 << 10) + 1); /* what it needs alone */
    bd_upload_free(a);
    bd_upload_free(b);
    CHECK_INT((long)bd_upload_budget_held(&budget), 0);
}

int main(void)
{
    RUN(test_upload_without_a_body_has_none);
    RUN(test_upload_not_expected_is_discarded);
    RUN(test_upload_joins_chunks_and_forgets_them_when_done);
    RUN(test_upload_past_the_cap_is_cut_and_marked_until_done);
    RUN(test_upload_announced_past_the_budget_is_refused_and_takes_nothing);
    RUN(test_upload_chunked_past_the_budget_is_discarded_as_no_room);
    return TEST_EXIT();
}
