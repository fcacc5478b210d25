/* Hex digits to bytes and back (core/hex.h): both sides of every digit range, both case
 * rules, exact lengths. */
#include "core/hex.h"
#include "test.h"

TEST(test_hex_digit_takes_both_cases_only_when_asked)
{
    CHECK_INT(bd_hex_digit('0', BD_HEX_ANY_CASE), 0);
    CHECK_INT(bd_hex_digit('9', BD_HEX_ANY_CASE), 9);
    CHECK_INT(bd_hex_digit('a', BD_HEX_ANY_CASE), 10);
    CHECK_INT(bd_hex_digit('f', BD_HEX_ANY_CASE), 15);
    CHECK_INT(bd_hex_digit('A', BD_HEX_ANY_CASE), 10);
    CHECK_INT(bd_hex_digit('F', BD_HEX_ANY_CASE), 15);
    CHECK_INT(bd_hex_digit('a', BD_HEX_LOWER), 10);
    CHECK_INT(bd_hex_digit('f', BD_HEX_LOWER), 15);
    CHECK_INT(bd_hex_digit('A', BD_HEX_LOWER), -1);
    CHECK_INT(bd_hex_digit('F', BD_HEX_LOWER), -1);
}

TEST(test_hex_digit_refuses_the_bytes_beside_each_range)
{
    const char beside[] = {'/', ':', '@', 'G', '`', 'g', ' ', '\0', (char)0xB0};
    for (size_t i = 0; i < sizeof beside; i++) {
        CHECK_INT(bd_hex_digit(beside[i], BD_HEX_ANY_CASE), -1);
        CHECK_INT(bd_hex_digit(beside[i], BD_HEX_LOWER), -1);
    }
}

TEST(test_hex_value_reads_n_digits_in_any_case)
{
    CHECK_INT(bd_hex_value("00e9", 4), 0xe9);
    CHECK_INT(bd_hex_value("D83D", 4), 0xd83d);
    CHECK_INT(bd_hex_value("fFfF", 4), 0xffff);
    CHECK_INT(bd_hex_value("21BD7", 5), 0x21bd7);
    CHECK_INT(bd_hex_value("2f", 2), 0x2f);
    CHECK_INT(bd_hex_value("fffffff", 7), 0xfffffff);
    CHECK_INT(bd_hex_value("12345678", 4), 0x1234); /* only the n asked for */
}

TEST(test_hex_value_refuses_a_non_digit_and_stops_at_a_short_string)
{
    CHECK_INT(bd_hex_value("00g9", 4), -1);
    CHECK_INT(bd_hex_value("0x12", 4), -1);
    CHECK_INT(bd_hex_value("-123", 4), -1);
    CHECK_INT(bd_hex_value("ABC", 5), -1); /* the terminator ends it: nothing past it read */
    CHECK_INT(bd_hex_value("", 2), -1);
    CHECK_INT(bd_hex_value("1", 0), -1);
    CHECK_INT(bd_hex_value("12345678", 8), -1); /* past an int32_t's room */
}

TEST(test_hex_decode_needs_exactly_twice_the_bytes)
{
    uint8_t out[4] = {0};
    CHECK(bd_hex_decode(bd_slice_from("00ff7Fa0"), out, 4, BD_HEX_ANY_CASE));
    CHECK_INT(out[0], 0x00);
    CHECK_INT(out[1], 0xff);
    CHECK_INT(out[2], 0x7f);
    CHECK_INT(out[3], 0xa0);
    CHECK(!bd_hex_decode(bd_slice_from("00ff7fa"), out, 4, BD_HEX_ANY_CASE));   /* odd */
    CHECK(!bd_hex_decode(bd_slice_from("00ff7f"), out, 4, BD_HEX_ANY_CASE));    /* short */
    CHECK(!bd_hex_decode(bd_slice_from("00ff7fa0b"), out, 4, BD_HEX_ANY_CASE)); /* long */
    CHECK(!bd_hex_decode(bd_slice_from("00ff7fa0bb"), out, 4, BD_HEX_ANY_CASE));
    CHECK(!bd_hex_decode(bd_slice_from("00ff7fz0"), out, 4, BD_HEX_ANY_CASE));
    CHECK(bd_hex_decode(bd_slice_from(""), out, 0, BD_HEX_ANY_CASE));
}

TEST(test_hex_decode_lower_refuses_upper_case)
{
    uint8_t out[2];
    CHECK(bd_hex_decode(bd_slice_from("abcd"), out, 2, BD_HEX_LOWER));
    CHECK_INT(out[0], 0xab);
    CHECK_INT(out[1], 0xcd);
    CHECK(!bd_hex_decode(bd_slice_from("abcD"), out, 2, BD_HEX_LOWER));
    CHECK(bd_hex_decode(bd_slice_from("abcD"), out, 2, BD_HEX_ANY_CASE));
}

TEST(test_hex_encode_writes_lower_case_and_round_trips)
{
    uint8_t in[256], back[256];
    char text[513];
    for (int i = 0; i < 256; i++)
        in[i] = (uint8_t)i;
    bd_hex_encode(in, sizeof in, text);
    text[512] = '\0';
    CHECK(strncmp(text, "000102", 6) == 0);
    CHECK(strcmp(text + 500, "fafbfcfdfeff") == 0);
    CHECK(bd_hex_decode((bd_slice){text, 512}, back, sizeof back, BD_HEX_LOWER));
    CHECK(memcmp(in, back, sizeof in) == 0);
    char guard[3] = "xy";
    bd_hex_encode(in + 0xc3, 1, guard);
    CHECK_STR(guard, "c3"); /* two digits, no terminator written */
}

int main(void)
{
    RUN(test_hex_digit_takes_both_cases_only_when_asked);
    RUN(test_hex_digit_refuses_the_bytes_beside_each_range);
    RUN(test_hex_value_reads_n_digits_in_any_case);
    RUN(test_hex_value_refuses_a_non_digit_and_stops_at_a_short_string);
    RUN(test_hex_decode_needs_exactly_twice_the_bytes);
    RUN(test_hex_decode_lower_refuses_upper_case);
    RUN(test_hex_encode_writes_lower_case_and_round_trips);
    return TEST_EXIT();
}
