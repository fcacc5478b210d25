/* JSON writer: structure, escaping and UTF-8 repair. */
#include "core/json.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

static char *render_string(const char *bytes, size_t n, bd_buf *b)
{
    bd_json w;
    bd_buf_reset(b);
    bd_json_init(&w, b);
    bd_json_string(&w, (bd_slice){bytes, n});
    return bd_json_result(&w) == BD_OK ? b->data : NULL;
}

TEST(test_json_object_members_are_comma_separated)
{
    bd_buf b;
    bd_buf_init(&b, 1024);
    bd_json w;
    bd_json_init(&w, &b);
    bd_json_object_begin(&w);
    bd_json_key(&w, "a");
    bd_json_int(&w, -12);
    bd_json_key(&w, "b");
    bd_json_array_begin(&w);
    bd_json_bool(&w, true);
    bd_json_null(&w);
    bd_json_cstring(&w, "x");
    bd_json_object_begin(&w);
    bd_json_object_end(&w);
    bd_json_array_end(&w);
    bd_json_key(&w, "c");
    bd_json_cstring(&w, NULL);
    bd_json_key(&w, "d");
    bd_json_double(&w, 7.5);
    bd_json_object_end(&w);
    CHECK_INT(bd_json_result(&w), BD_OK);
    CHECK_STR(b.data, "{\"a\":-12,\"b\":[true,null,\"x\",{}],\"c\":null,\"d\":7.5}");
    bd_buf_free(&b);
}

TEST(test_json_escapes_quotes_backslashes_and_controls)
{
    bd_buf b;
    bd_buf_init(&b, 1024);
    CHECK_STR(render_string("a\"b\\c\n\t\x01\x1f", 9, &b), "\"a\\\"b\\\\c\\n\\t\\u0001\\u001f\"");
    CHECK_STR(render_string("\0x", 2, &b), "\"\\u0000x\"");
    bd_buf_free(&b);
}

/* The writer looks at eight bytes at a time while they need no escape: each byte that needs
 * a look, at every position of strings from 1 to 24 bytes (inside the first word, across a
 * word's end, in the bytes past the last whole word), comes out as the byte-wise rule says. */
TEST(test_json_escapes_at_every_position_of_a_word)
{
    static const struct {
        const char *in, *out;
    } special[] = {
        {"\"", "\\\""},
        {"\\", "\\\\"},
        {"\x1f", "\\u001f"},
        {"\x01", "\\u0001"},
        {"\n", "\\n"},
        {"\x7f", "\x7f"},
        {" ", " "},
        {"!", "!"},
        {"\xc3\xa9", "\xc3\xa9"},
        {"\xff", "\xef\xbf\xbd"},
        {"\x80", "\xef\xbf\xbd"},
    };
    bd_buf b;
    bd_buf_init(&b, 1024);
    char in[32], want[64];
    for (size_t k = 0; k < sizeof special / sizeof special[0]; k++) {
        size_t sl = strlen(special[k].in);
        for (size_t len = sl; len <= 24; len++) {
            for (size_t at = 0; at + sl <= len; at++) {
                memset(in, 'a', len);
                memcpy(in + at, special[k].in, sl);
                size_t n = 0;
                want[n++] = '"';
                memset(want + n, 'a', at);
                n += at;
                memcpy(want + n, special[k].out, strlen(special[k].out));
                n += strlen(special[k].out);
                memset(want + n, 'a', len - at - sl);
                n += len - at - sl;
                want[n++] = '"';
                want[n] = '\0';
                CHECK_STR(render_string(in, len, &b), want);
            }
        }
    }
    bd_buf_free(&b);
}

TEST(test_json_passes_valid_utf8_through)
{
    bd_buf b;
    bd_buf_init(&b, 1024);
    CHECK_STR(render_string("p\xc3\xa4ss \xe2\x82\xac \xf0\x9f\x94\x92", 14, &b),
              "\"p\xc3\xa4ss \xe2\x82\xac \xf0\x9f\x94\x92\"");
    bd_buf_free(&b);
}

TEST(test_json_replaces_invalid_utf8_bytes)
{
    bd_buf b;
    bd_buf_init(&b, 1024);
    /* lone continuation byte, truncated 2-byte sequence at end */
    CHECK_STR(render_string("a\x80z\xc3", 4, &b), "\"a\xef\xbf\xbdz\xef\xbf\xbd\"");
    /* overlong encoding of '/', UTF-16 surrogate, beyond U+10FFFF */
    CHECK_STR(render_string("\xc0\xaf", 2, &b), "\"\xef\xbf\xbd\xef\xbf\xbd\"");
    CHECK_STR(render_string("\xed\xa0\x80", 3, &b), "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
    CHECK_STR(render_string("\xf4\x90\x80\x80", 4, &b),
              "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
    bd_buf_free(&b);
}

TEST(test_json_limit_is_sticky)
{
    bd_buf b;
    bd_buf_init(&b, 8);
    bd_json w;
    bd_json_init(&w, &b);
    bd_json_array_begin(&w);
    bd_json_cstring(&w, "0123456789");
    bd_json_int(&w, 1);
    bd_json_array_end(&w);
    CHECK_INT(bd_json_result(&w), BD_ERR_LIMIT);
    CHECK(b.len <= 8);
    bd_buf_free(&b);
}

TEST(test_json_double_round_trips_and_rejects_nan)
{
    bd_buf b;
    bd_buf_init(&b, 1024);
    bd_json w;
    bd_json_init(&w, &b);
    bd_json_array_begin(&w);
    bd_json_double(&w, 0.1);
    bd_json_double(&w, 9.8);
    bd_json_double(&w, NAN);
    bd_json_double(&w, 10);
    bd_json_array_end(&w);
    CHECK_STR(b.data, "[0.1,9.8,null,10]");
    bd_buf_free(&b);
}

/* Member names written from literals in one copy come out as the escaping path writes
 * them, commas and all. */
TEST(test_json_literal_keys_match_escaped_keys)
{
    bd_buf a, b;
    bd_buf_init(&a, 256);
    bd_buf_init(&b, 256);
    bd_json wa, wb;
    bd_json_init(&wa, &a);
    bd_json_init(&wb, &b);
    bd_json_object_begin(&wa);
    bd_json_object_begin(&wb);
    BD_JSON_KEY(&wa, "leakSize");
    bd_json_key(&wb, "leakSize");
    bd_json_int(&wa, 3);
    bd_json_int(&wb, 3);
    BD_JSON_MEMBER_STRING(&wa, "owner", BD_SLICE_LIT("A \"B\""), false);
    bd_json_member_string(&wb, "owner", BD_SLICE_LIT("A \"B\""), false);
    BD_JSON_MEMBER_STRING(&wa, "cvv", ((bd_slice){"", 0}), true);
    bd_json_member_string(&wb, "cvv", (bd_slice){"", 0}, true);
    BD_JSON_MEMBER_STRING(&wa, "bank", ((bd_slice){NULL, 0}), false);
    bd_json_member_string(&wb, "bank", (bd_slice){NULL, 0}, false);
    bd_json_object_end(&wa);
    bd_json_object_end(&wb);
    CHECK_STR(a.data, b.data);
    CHECK_STR(a.data, "{\"leakSize\":3,\"owner\":\"A \\\"B\\\"\",\"cvv\":null,\"bank\":null}");
    bd_buf_free(&a);
    bd_buf_free(&b);
}

/* The reference: the shortest of %.15g..%.17g that reads back as the same double. */
static void slow_double(double v, char out[32])
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(out, 32, "%.*g", prec, v);
        if (strtod(out, NULL) == v)
            return;
    }
}

/* Values of two decimals take a shortcut past snprintf: it must print what the general
 * rule prints, for every such value and for its neighbours that are not one. */
TEST(test_json_double_shortcut_matches_the_general_rule)
{
    bd_buf b;
    bd_buf_init(&b, 64);
    char want[32];
    double samples[] = {1e-4,
                        0.0001,
                        0.005,
                        0.01,
                        0.07,
                        0.1,
                        0.29,
                        1,
                        7.5,
                        9.99,
                        10,
                        100.01,
                        12345.67,
                        1e12,
                        9999999999999.99,
                        1e13,
                        123456789012.34,
                        0.3,
                        2.675,
                        1.005,
                        1e-5,
                        0,
                        -0.0,
                        -7.5,
                        1e300};
    int checked = 0;
    for (int64_t k = 0; k <= 200000; k++) {
        double vs[3] = {(double)k / 100.0, nextafter((double)k / 100.0, 0),
                        nextafter((double)k / 100.0, 1e300)};
        for (int j = 0; j < 3; j++) {
            bd_json w;
            bd_buf_reset(&b);
            bd_json_init(&w, &b);
            bd_json_double(&w, vs[j]);
            slow_double(vs[j], want);
            if (strcmp(b.data, want) != 0) {
                CHECK_STR(b.data, want);
                break;
            }
            checked++;
        }
    }
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++) {
        bd_json w;
        bd_buf_reset(&b);
        bd_json_init(&w, &b);
        bd_json_double(&w, samples[i]);
        slow_double(samples[i], want);
        CHECK_STR(b.data, want);
    }
    CHECK_INT(checked, 3 * 200001);
    bd_buf_free(&b);
}

/* Strings written in one copy and strings escaped byte by byte must agree wherever the
 * buffer's growth falls, and the size limit holds for both to the byte. */
TEST(test_json_strings_across_buffer_growth_and_at_the_limit)
{
    static const char *const parts[] = {"plain", "q\"uote", "Jos\xc3\xa9", "", "tab\there"};
    static const char *const want[] = {"\"plain\"", "\"q\\\"uote\"", "\"Jos\xc3\xa9\"", "\"\"",
                                       "\"tab\\there\""};
    bd_buf b, expect;
    bd_buf_init(&b, 1 << 20);
    bd_buf_init(&expect, 1 << 20);
    bd_json w;
    bd_json_init(&w, &b);
    bd_json_array_begin(&w);
    CHECK_INT(bd_buf_append_str(&expect, "["), BD_OK);
    for (int i = 0; i < 3000; i++) {
        bd_json_cstring(&w, parts[i % 5]);
        if (i)
            CHECK_INT(bd_buf_append_str(&expect, ","), BD_OK);
        CHECK_INT(bd_buf_append_str(&expect, want[i % 5]), BD_OK);
    }
    bd_json_array_end(&w);
    CHECK_INT(bd_buf_append_str(&expect, "]"), BD_OK);
    CHECK_INT(bd_json_result(&w), BD_OK);
    CHECK_INT((long long)b.len, (long long)expect.len);
    CHECK_STR(b.data, expect.data);
    bd_buf_free(&b);
    bd_buf_free(&expect);

    for (size_t max = 5; max <= 8; max++) { /* ["abc"] is 7 bytes */
        bd_buf_init(&b, max);
        bd_json_init(&w, &b);
        bd_json_array_begin(&w);
        bd_json_cstring(&w, "abc");
        bd_json_array_end(&w);
        CHECK_INT(bd_json_result(&w), max >= 7 ? BD_OK : BD_ERR_LIMIT);
        CHECK(b.len <= max);
        bd_buf_free(&b);
    }
}

int main(void)
{
    RUN(test_json_object_members_are_comma_separated);
    RUN(test_json_escapes_quotes_backslashes_and_controls);
    RUN(test_json_escapes_at_every_position_of_a_word);
    RUN(test_json_passes_valid_utf8_through);
    RUN(test_json_replaces_invalid_utf8_bytes);
    RUN(test_json_limit_is_sticky);
    RUN(test_json_double_round_trips_and_rejects_nan);
    RUN(test_json_double_shortcut_matches_the_general_rule);
    RUN(test_json_literal_keys_match_escaped_keys);
    RUN(test_json_strings_across_buffer_growth_and_at_the_limit);
    return TEST_EXIT();
}
