/* Tests for import-time masking of passwords, SSNs and card numbers (PRODUCT.md "Masking"). */
#include "ingest/mask.h"

#include "test.h"

static char out[64];

static const char *mask_pw_n(const char *pw, size_t len)
{
    size_t n = 999;
    if (bd_mask_password((bd_slice){pw, len}, out, sizeof out, &n) != BD_OK)
        return "ERROR";
    return n == strlen(out) ? out : "WRONG-LENGTH";
}

static const char *mask_pw(const char *pw)
{
    return mask_pw_n(pw, strlen(pw));
}

static const char *mask_card(const char *digits)
{
    bd_mask_card(digits, strlen(digits), out);
    return out;
}

TEST(test_password_mask_keeps_last_two_characters)
{
    CHECK_STR(mask_pw("hunter2"), "*****r2");
}

TEST(test_password_mask_keeps_last_two_code_points)
{
    /* "pässwörd": 8 code points, 10 bytes */
    CHECK_STR(mask_pw("p\xC3\xA4ssw\xC3\xB6rd"), "******rd");
}

TEST(test_password_mask_keeps_multibyte_last_two_whole)
{
    /* "héé": the two kept code points are two bytes each */
    CHECK_STR(mask_pw("h\xC3\xA9\xC3\xA9"), "*\xC3\xA9\xC3\xA9");
    /* a four-byte code point (U+1F600) is one star */
    CHECK_STR(mask_pw("\xF0\x9F\x98\x80"
                      "ab"),
              "*ab");
}

TEST(test_password_of_three_characters_shows_two)
{
    CHECK_STR(mask_pw("abc"), "*bc");
}

TEST(test_password_of_two_characters_is_all_stars)
{
    CHECK_STR(mask_pw("ab"), "**");
    CHECK_STR(mask_pw("\xC3\xA4\xC3\xB6"), "**");
}

TEST(test_password_of_one_character_is_one_star)
{
    CHECK_STR(mask_pw("a"), "*");
    CHECK_STR(mask_pw("\xE2\x82\xAC"), "*");
}

TEST(test_empty_password_masks_to_empty)
{
    CHECK_STR(mask_pw(""), "");
}

TEST(test_password_invalid_utf8_byte_counts_as_one_code_point)
{
    /* 0xFF is never UTF-8: masked like any character */
    CHECK_STR(mask_pw("\xFF"
                      "abc"),
              "**bc");
    /* kept when it is one of the last two */
    CHECK_STR(mask_pw("abc\xFF"), "**c\xFF");
    /* a truncated sequence is one code point per byte */
    CHECK_STR(mask_pw("ab\xC3"), "*b\xC3");
}

TEST(test_password_overlong_and_surrogate_bytes_count_singly)
{
    /* C0 80 is an overlong NUL: two stray bytes */
    CHECK_STR(mask_pw("x\xC0\x80"), "*\xC0\x80");
    /* ED A0 80 encodes a surrogate: three stray bytes */
    CHECK_STR(mask_pw("\xED\xA0\x80"), "*\xA0\x80");
}

TEST(test_password_mask_keeps_a_nul_byte_among_the_last_two)
{
    size_t n = 0;
    CHECK_INT(bd_mask_password((bd_slice){"abc\0d", 5}, out, sizeof out, &n), BD_OK);
    CHECK_INT(n, 5);
    CHECK(memcmp(out, "***\0d", 6) == 0);
}

TEST(test_password_mask_reports_limit_when_output_does_not_fit)
{
    char small[4];
    size_t n = 7;
    CHECK_INT(bd_mask_password(BD_SLICE_LIT("abcd"), small, sizeof small, &n), BD_ERR_LIMIT);
    CHECK_STR(small, "");
    CHECK_INT(n, 0);
    CHECK_INT(bd_mask_password(BD_SLICE_LIT("abc"), small, sizeof small, &n), BD_OK);
    CHECK_STR(small, "*bc");
}

TEST(test_ssn_mask_shows_last_two_digits)
{
    char s[10];
    bd_mask_ssn("123456789", s);
    CHECK_STR(s, "*******89");
}

TEST(test_cvv_mask_is_one_star_per_digit)
{
    char m[5];
    bd_mask_cvv(3, m);
    CHECK_STR(m, "***");
    bd_mask_cvv(4, m);
    CHECK_STR(m, "****");
}

static const char *shown_cvv(const char *stored)
{
    static char shown[8];
    bd_slice v = bd_mask_cvv_shown(bd_slice_from(stored));
    if (!v.ptr)
        return "(null)";
    snprintf(shown, sizeof shown, "%.*s", (int)v.len, v.ptr);
    return shown;
}

TEST(test_cvv_shown_in_a_reply_is_always_its_mask)
{
    CHECK_STR(shown_cvv("***"), "***");   /* as stored */
    CHECK_STR(shown_cvv("****"), "****"); /* as stored */
    CHECK_STR(shown_cvv("123"), "***");   /* a store not yet upgraded */
    CHECK_STR(shown_cvv("0123"), "****");
    CHECK_STR(shown_cvv("12345"), "****");
    CHECK_STR(shown_cvv(NULL), "(null)");
}

TEST(test_card_mask_16_digits_shows_first_six_and_last_four)
{
    CHECK_STR(mask_card("4111111111111111"), "411111XXXXXX1111");
}

TEST(test_card_mask_15_digits_hides_five)
{
    CHECK_STR(mask_card("378282246310005"), "378282XXXXX0005");
}

TEST(test_card_mask_19_digits_hides_nine)
{
    CHECK_STR(mask_card("6011000990139424123"), "601100XXXXXXXXX4123");
}

TEST(test_card_mask_12_digits_hides_two)
{
    CHECK_STR(mask_card("123456789012"), "123456XX9012");
}

TEST(test_card_digits_drops_spaces_and_dashes)
{
    char d[20];
    size_t n = 0;
    CHECK(bd_card_digits(BD_SLICE_LIT("4111 1111-1111 1111"), d, &n));
    CHECK_STR(d, "4111111111111111");
    CHECK_INT(n, 16);
}

TEST(test_card_digits_needs_12_to_19_digits)
{
    char d[20];
    size_t n = 0;
    CHECK(!bd_card_digits(BD_SLICE_LIT("12345678901"), d, &n));
    CHECK(bd_card_digits(BD_SLICE_LIT("123456789012"), d, &n));
    CHECK_INT(n, 12);
    CHECK(bd_card_digits(BD_SLICE_LIT("1234567890123456789"), d, &n));
    CHECK_INT(n, 19);
    CHECK(!bd_card_digits(BD_SLICE_LIT("12345678901234567890"), d, &n));
}

TEST(test_card_digits_rejects_other_characters)
{
    char d[20];
    size_t n = 0;
    CHECK(!bd_card_digits(BD_SLICE_LIT("4111.1111.1111.1111"), d, &n));
    CHECK(!bd_card_digits(BD_SLICE_LIT("4111111111111111x"), d, &n));
    CHECK(!bd_card_digits(BD_SLICE_LIT(""), d, &n));
}

int main(void)
{
    RUN(test_password_mask_keeps_last_two_characters);
    RUN(test_password_mask_keeps_last_two_code_points);
    RUN(test_password_mask_keeps_multibyte_last_two_whole);
    RUN(test_password_of_three_characters_shows_two);
    RUN(test_password_of_two_characters_is_all_stars);
    RUN(test_password_of_one_character_is_one_star);
    RUN(test_empty_password_masks_to_empty);
    RUN(test_password_invalid_utf8_byte_counts_as_one_code_point);
    RUN(test_password_overlong_and_surrogate_bytes_count_singly);
    RUN(test_password_mask_keeps_a_nul_byte_among_the_last_two);
    RUN(test_password_mask_reports_limit_when_output_does_not_fit);
    RUN(test_ssn_mask_shows_last_two_digits);
    RUN(test_cvv_mask_is_one_star_per_digit);
    RUN(test_cvv_shown_in_a_reply_is_always_its_mask);
    RUN(test_card_mask_16_digits_shows_first_six_and_last_four);
    RUN(test_card_mask_15_digits_hides_five);
    RUN(test_card_mask_19_digits_hides_nine);
    RUN(test_card_mask_12_digits_hides_two);
    RUN(test_card_digits_drops_spaces_and_dashes);
    RUN(test_card_digits_needs_12_to_19_digits);
    RUN(test_card_digits_rejects_other_characters);
    return TEST_EXIT();
}
