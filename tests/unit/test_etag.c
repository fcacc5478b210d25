/* Entity tags: the tag of a body, and If-None-Match's weak comparison. */
#include <stdio.h>
#include <string.h>

#include "http/etag.h"
#include "test.h"

TEST(test_etag_is_weak_hex_and_follows_the_bytes)
{
    char a[BD_ETAG_LEN + 1], b[BD_ETAG_LEN + 1], c[BD_ETAG_LEN + 1];
    bd_etag_of(bd_slice_from("[{\"x\":1}]"), a);
    bd_etag_of(bd_slice_from("[{\"x\":1}]"), b);
    bd_etag_of(bd_slice_from("[{\"x\":2}]"), c);
    CHECK_INT((long)strlen(a), BD_ETAG_LEN);
    CHECK(strncmp(a, "W/\"", 3) == 0 && a[35] == '"');
    CHECK(strspn(a + 3, "0123456789abcdef") == 32);
    CHECK_STR(a, b);
    CHECK(strcmp(a, c) != 0);
}

TEST(test_if_none_match_compares_weakly_over_a_list)
{
    char t[BD_ETAG_LEN + 1];
    bd_etag_of(bd_slice_from("body"), t);
    char strong[40], list[120], cut[40];
    snprintf(strong, sizeof strong, "%s", t + 2);
    snprintf(list, sizeof list, "\"a\", W/\"b\" ,%s", t);
    snprintf(cut, sizeof cut, "%.*s\"", BD_ETAG_LEN - 2, t);
    CHECK(bd_etag_matches(t, t));
    CHECK(bd_etag_matches(strong, t));
    CHECK(bd_etag_matches(list, t));
    CHECK(bd_etag_matches("*", t));
    CHECK(!bd_etag_matches(NULL, t));
    CHECK(!bd_etag_matches("", t));
    CHECK(!bd_etag_matches("\"a\"", t));
    CHECK(!bd_etag_matches(cut, t));
    CHECK(!bd_etag_matches("garbage", t));
    CHECK(!bd_etag_matches("\"unterminated", t));
}

int main(void)
{
    RUN(test_etag_is_weak_hex_and_follows_the_bytes);
    RUN(test_if_none_match_compares_weakly_over_a_list);
    return TEST_EXIT();
}
