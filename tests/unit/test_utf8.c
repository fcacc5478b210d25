/* UTF-8: what is well-formed, and the repair every store's text goes through. */
#include <string.h>

#include "core/utf8.h"
#include "test.h"

static const char *repaired(const char *s, size_t n)
{
    static char out[64];
    bd_buf b;
    bd_buf_init(&b, 64);
    CHECK_INT(bd_utf8_append_repaired(&b, (bd_slice){s, n}), BD_OK);
    CHECK_INT(bd_buf_append_char(&b, '\0'), BD_OK);
    memcpy(out, b.data, b.len);
    bd_buf_free(&b);
    return out;
}

TEST(test_utf8_valid_accepts_well_formed_text_only)
{
    CHECK(bd_utf8_valid(bd_slice_from("")));
    CHECK(bd_utf8_valid(bd_slice_from("caf\xc3\xa9 \xf0\x9f\x94\x91")));
    CHECK(!bd_utf8_valid(bd_slice_from("caf\xe9")));          /* Latin-1 */
    CHECK(!bd_utf8_valid(bd_slice_from("\xc0\xaf")));         /* overlong */
    CHECK(!bd_utf8_valid(bd_slice_from("\xed\xa0\x80")));     /* surrogate */
    CHECK(!bd_utf8_valid(bd_slice_from("\xf4\x90\x80\x80"))); /* past U+10FFFF */
    CHECK(!bd_utf8_valid(bd_slice_from("ok\xe2\x82")));       /* cut short */
}

TEST(test_utf8_repair_turns_each_stray_byte_into_one_replacement_character)
{
    CHECK_STR(repaired("caf\xe9!", 5), "caf\xef\xbf\xbd!");
    CHECK_STR(repaired("\xff\xfe", 2), "\xef\xbf\xbd\xef\xbf\xbd");
    CHECK_STR(repaired("a\xe2\x82", 3), "a\xef\xbf\xbd\xef\xbf\xbd");
    CHECK_STR(repaired("caf\xc3\xa9", 5), "caf\xc3\xa9"); /* well-formed stays */
}

int main(void)
{
    RUN(test_utf8_valid_accepts_well_formed_text_only);
    RUN(test_utf8_repair_turns_each_stray_byte_into_one_replacement_character);
    return TEST_EXIT();
}
