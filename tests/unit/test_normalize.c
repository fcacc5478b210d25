/* Tests for identity-value normalisation (PRODUCT.md section 2, the breach-search match rules). */
#include "ingest/normalize.h"

#include <arpa/inet.h>
#include <stdio.h>

#include "test.h"

static char out[BD_NORM_MAX + 1];
static const char *why;

/* Normalised form of v, or "INVALID" when it is rejected. */
static const char *norm_n(bd_id_type t, const char *v, size_t len)
{
    size_t n = 12345;
    bd_result r = bd_normalize(t, (bd_slice){v, len}, out, &n, &why);
    if (r != BD_OK)
        return r == BD_ERR_INVALID && why && n == 0 ? "INVALID" : "WRONG-ERROR";
    if (n != strlen(out))
        return "WRONG-LENGTH";
    return out;
}

static const char *norm(bd_id_type t, const char *v)
{
    return norm_n(t, v, strlen(v));
}

TEST(test_type_parse_accepts_the_nine_names_and_two_aliases)
{
    static const struct {
        const char *name;
        bd_id_type t;
    } cases[] = {
        {"email", BD_ID_EMAIL},
        {"email_domain", BD_ID_EMAIL_DOMAIN},
        {"phone_number", BD_ID_PHONE},
        {"phonenumber", BD_ID_PHONE},
        {"username", BD_ID_USERNAME},
        {"ip_address", BD_ID_IP},
        {"ipaddress", BD_ID_IP},
        {"social_security_number", BD_ID_SSN},
        {"password", BD_ID_PASSWORD},
        {"password_hash", BD_ID_PASSWORD_HASH},
        {"bitcoin_address", BD_ID_BITCOIN},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bd_id_type t = BD_ID_COUNT;
        CHECK(bd_id_type_parse(bd_slice_from(cases[i].name), &t));
        CHECK_INT(t, cases[i].t);
    }
}

TEST(test_type_parse_ignores_case_and_rejects_unknown_names)
{
    bd_id_type t = BD_ID_COUNT;
    CHECK(bd_id_type_parse(BD_SLICE_LIT("EMAIL"), &t));
    CHECK_INT(t, BD_ID_EMAIL);
    CHECK(bd_id_type_parse(BD_SLICE_LIT("Email_Domain"), &t));
    CHECK_INT(t, BD_ID_EMAIL_DOMAIN);
    CHECK(bd_id_type_parse(BD_SLICE_LIT("IPADDRESS"), &t));
    CHECK_INT(t, BD_ID_IP);
    t = BD_ID_COUNT;
    CHECK(!bd_id_type_parse(BD_SLICE_LIT("\xc5\xbfmail"), &t)); /* long s: no Unicode folding */
    CHECK(!bd_id_type_parse(BD_SLICE_LIT("user_name"), &t));
    CHECK(!bd_id_type_parse(BD_SLICE_LIT(""), &t));
    CHECK(!bd_id_type_parse(BD_SLICE_LIT("email "), &t));
    CHECK_INT(t, BD_ID_COUNT);
}

TEST(test_type_name_gives_the_parameter_name)
{
    CHECK_STR(bd_id_type_name(BD_ID_EMAIL), "email");
    CHECK_STR(bd_id_type_name(BD_ID_EMAIL_DOMAIN), "email_domain");
    CHECK_STR(bd_id_type_name(BD_ID_PHONE), "phone_number");
    CHECK_STR(bd_id_type_name(BD_ID_USERNAME), "username");
    CHECK_STR(bd_id_type_name(BD_ID_IP), "ip_address");
    CHECK_STR(bd_id_type_name(BD_ID_SSN), "social_security_number");
    CHECK_STR(bd_id_type_name(BD_ID_PASSWORD), "password");
    CHECK_STR(bd_id_type_name(BD_ID_PASSWORD_HASH), "password_hash");
    CHECK_STR(bd_id_type_name(BD_ID_BITCOIN), "bitcoin_address");
    CHECK_STR(bd_id_type_name(BD_ID_COUNT), "");
}

TEST(test_type_names_round_trip_through_parse)
{
    for (int t = 0; t < BD_ID_COUNT; t++) {
        bd_id_type back = BD_ID_COUNT;
        CHECK(bd_id_type_parse(bd_slice_from(bd_id_type_name((bd_id_type)t)), &back));
        CHECK_INT(back, t);
    }
}

TEST(test_email_is_trimmed_and_lower_cased)
{
    CHECK_STR(norm(BD_ID_EMAIL, "  John.Doe@Example.COM\t\n"), "john.doe@example.com");
}

TEST(test_email_keeps_plus_and_non_ascii_local_part)
{
    CHECK_STR(norm(BD_ID_EMAIL, "Ann+Tag@example.org"), "ann+tag@example.org");
    CHECK_STR(norm(BD_ID_EMAIL, "J\xC3\xBCrgen@example.de"), "j\xC3\xBCrgen@example.de");
}

TEST(test_email_drops_a_trailing_dot_of_the_domain)
{
    CHECK_STR(norm(BD_ID_EMAIL, "a@example.com."), "a@example.com");
}

TEST(test_email_needs_exactly_one_at_sign)
{
    CHECK_STR(norm(BD_ID_EMAIL, "john.example.com"), "INVALID");
    CHECK_STR(norm(BD_ID_EMAIL, "a@b@example.com"), "INVALID");
    CHECK_STR(why, "an email address must look like name@example.com");
}

TEST(test_email_needs_a_local_part_without_spaces_or_controls)
{
    CHECK_STR(norm(BD_ID_EMAIL, "@example.com"), "INVALID");
    CHECK_STR(norm(BD_ID_EMAIL, "john doe@example.com"), "INVALID");
    CHECK_STR(norm(BD_ID_EMAIL, "john\x01@example.com"), "INVALID");
}

TEST(test_email_needs_a_host_name_domain)
{
    CHECK_STR(norm(BD_ID_EMAIL, "a@localhost"), "INVALID");
    CHECK_STR(norm(BD_ID_EMAIL, "a@"), "INVALID");
    CHECK_STR(norm(BD_ID_EMAIL, "a@exa mple.com"), "INVALID");
    CHECK_STR(norm(BD_ID_EMAIL, "a@[192.0.2.1]"), "INVALID");
}

TEST(test_email_empty_or_blank_is_invalid)
{
    CHECK_STR(norm(BD_ID_EMAIL, ""), "INVALID");
    CHECK_STR(norm(BD_ID_EMAIL, "   "), "INVALID");
}

TEST(test_email_domain_is_lower_cased_and_loses_a_leading_at)
{
    CHECK_STR(norm(BD_ID_EMAIL_DOMAIN, " @Example.COM "), "example.com");
    CHECK_STR(norm(BD_ID_EMAIL_DOMAIN, "mail.example.co.uk"), "mail.example.co.uk");
}

TEST(test_email_domain_drops_one_trailing_dot)
{
    CHECK_STR(norm(BD_ID_EMAIL_DOMAIN, "example.com."), "example.com");
    CHECK_STR(norm(BD_ID_EMAIL_DOMAIN, "example.com.."), "INVALID");
}

TEST(test_email_domain_needs_two_labels)
{
    CHECK_STR(norm(BD_ID_EMAIL_DOMAIN, "localhost"), "INVALID");
    CHECK_STR(why, "an email domain must be a host name like example.com");
}

TEST(test_email_domain_labels_are_letters_digits_and_inner_hyphens)
{
    CHECK_STR(norm(BD_ID_EMAIL_DOMAIN, "my-site1.example"), "my-site1.example");
    CHECK_STR(norm(BD_ID_EMAIL_DOMAIN, "-site.example"), "INVALID");
    CHECK_STR(norm(BD_ID_EMAIL_DOMAIN, "site-.example"), "INVALID");
    CHECK_STR(norm(BD_ID_EMAIL_DOMAIN, "my_site.example"), "INVALID");
    CHECK_STR(norm(BD_ID_EMAIL_DOMAIN, "a..example"), "INVALID");
    CHECK_STR(norm(BD_ID_EMAIL_DOMAIN, ".example.com"), "INVALID");
    CHECK_STR(norm(BD_ID_EMAIL_DOMAIN, "@@example.com"), "INVALID");
    CHECK_STR(norm(BD_ID_EMAIL_DOMAIN, "m\xC3\xBCnchen.example"), "INVALID");
}

TEST(test_email_domain_label_may_have_63_bytes_not_64)
{
    char d[80];
    memset(d, 'a', 63);
    memcpy(d + 63, ".com", 5);
    CHECK_STR(norm(BD_ID_EMAIL_DOMAIN, d), d);
    memset(d, 'a', 64);
    memcpy(d + 64, ".com", 5);
    CHECK_STR(norm(BD_ID_EMAIL_DOMAIN, d), "INVALID");
}

TEST(test_email_domain_may_have_253_bytes_not_254)
{
    char d[300];
    /* 3 labels of 63 + 1 label of 61 + 3 dots = 253 */
    memset(d, 'a', 253);
    d[63] = d[127] = d[191] = '.';
    d[253] = '\0';
    CHECK_STR(norm(BD_ID_EMAIL_DOMAIN, d), d);
    d[253] = 'a';
    d[254] = '\0';
    CHECK_STR(norm(BD_ID_EMAIL_DOMAIN, d), "INVALID");
}

TEST(test_phone_drops_spaces_plus_dashes_parentheses_and_dots)
{
    CHECK_STR(norm(BD_ID_PHONE, "+1 (555) 123-4567"), "15551234567");
    CHECK_STR(norm(BD_ID_PHONE, "555.123.4567"), "5551234567");
}

TEST(test_phone_rejects_letters_and_other_punctuation)
{
    CHECK_STR(norm(BD_ID_PHONE, "555-123-CALL"), "INVALID");
    CHECK_STR(norm(BD_ID_PHONE, "555/1234567"), "INVALID");
    CHECK_STR(norm(BD_ID_PHONE, "5551234567 ext 12"), "INVALID");
    CHECK_STR(why, "a phone number must have 7 to 15 digits, separated only by spaces, +, -, "
                   "(, ) or .");
}

TEST(test_phone_needs_7_to_15_digits)
{
    CHECK_STR(norm(BD_ID_PHONE, "123456"), "INVALID");
    CHECK_STR(norm(BD_ID_PHONE, "1234567"), "1234567");
    CHECK_STR(norm(BD_ID_PHONE, "+123 456 789 012 345"), "123456789012345");
    CHECK_STR(norm(BD_ID_PHONE, "1234567890123456"), "INVALID");
}

TEST(test_phone_is_trimmed)
{
    CHECK_STR(norm(BD_ID_PHONE, "\t5551234567\r\n"), "5551234567");
}

TEST(test_username_is_trimmed_and_ascii_lower_cased)
{
    CHECK_STR(norm(BD_ID_USERNAME, "  DarkLord99 "), "darklord99");
}

TEST(test_username_keeps_non_ascii_bytes_exact)
{
    /* U+00C4 stays upper case: only ASCII letters fold */
    CHECK_STR(norm(BD_ID_USERNAME, "\xC3\x84gir"), "\xC3\x84gir");
}

TEST(test_username_rejects_empty_and_control_characters)
{
    CHECK_STR(norm(BD_ID_USERNAME, ""), "INVALID");
    CHECK_STR(norm(BD_ID_USERNAME, " \t "), "INVALID");
    CHECK_STR(norm(BD_ID_USERNAME, "bad\x7fname"), "INVALID");
    CHECK_STR(norm(BD_ID_USERNAME, "two\nlines"), "INVALID");
    CHECK_STR(why, "a username must be valid UTF-8, not empty, without control characters");
}

TEST(test_username_keeps_inner_spaces)
{
    CHECK_STR(norm(BD_ID_USERNAME, "John Smith"), "john smith");
}

TEST(test_ipv4_is_kept_in_dotted_form)
{
    CHECK_STR(norm(BD_ID_IP, " 192.0.2.1 "), "192.0.2.1");
    /* every width of each part, as inet_ntop writes them */
    CHECK_STR(norm(BD_ID_IP, "0.0.0.0"), "0.0.0.0");
    CHECK_STR(norm(BD_ID_IP, "255.255.255.255"), "255.255.255.255");
    CHECK_STR(norm(BD_ID_IP, "10.99.100.109"), "10.99.100.109");
    CHECK_STR(norm(BD_ID_IP, "203.0.113.250"), "203.0.113.250");
    char text[16], want[INET_ADDRSTRLEN];
    for (unsigned b = 0; b < 256; b++) {
        snprintf(text, sizeof text, "%u.%u.1.%u", b, 255 - b, b);
        unsigned char a[4] = {(unsigned char)b, (unsigned char)(255 - b), 1, (unsigned char)b};
        inet_ntop(AF_INET, a, want, sizeof want);
        CHECK_STR(norm(BD_ID_IP, text), want);
    }
}

TEST(test_ipv4_rejects_short_forms_and_leading_zeros)
{
    CHECK_STR(norm(BD_ID_IP, "192.0.2"), "INVALID");
    CHECK_STR(norm(BD_ID_IP, "192.0.2.256"), "INVALID");
    CHECK_STR(norm(BD_ID_IP, "192.000.2.1"), "INVALID");
}

TEST(test_ipv6_forms_of_one_address_normalise_equal)
{
    CHECK_STR(norm(BD_ID_IP, "2001:DB8::1"), "2001:db8::1");
    CHECK_STR(norm(BD_ID_IP, "2001:db8:0:0:0:0:0:1"), "2001:db8::1");
    CHECK_STR(norm(BD_ID_IP, "2001:0DB8:0000:0000:0000:0000:0000:0001"), "2001:db8::1");
}

TEST(test_ipv6_compresses_the_longest_zero_run)
{
    CHECK_STR(norm(BD_ID_IP, "2001:db8:0:0:1:0:0:0"), "2001:db8:0:0:1::");
    CHECK_STR(norm(BD_ID_IP, "0:0:0:0:0:0:0:0"), "::");
}

TEST(test_ipv6_mapped_ipv4_keeps_dotted_tail)
{
    CHECK_STR(norm(BD_ID_IP, "::FFFF:192.0.2.1"), "::ffff:192.0.2.1");
}

TEST(test_ip_rejects_zone_ids_prefixes_and_host_names)
{
    CHECK_STR(norm(BD_ID_IP, "fe80::1%eth0"), "INVALID");
    CHECK_STR(norm(BD_ID_IP, "2001:db8::/32"), "INVALID");
    CHECK_STR(norm(BD_ID_IP, "192.0.2.0/24"), "INVALID");
    CHECK_STR(norm(BD_ID_IP, "example.com"), "INVALID");
    CHECK_STR(norm(BD_ID_IP, ""), "INVALID");
    CHECK_STR(why, "an IP address must be an IPv4 address like 192.0.2.1 or an IPv6 address "
                   "like 2001:db8::1");
}

TEST(test_ssn_drops_dashes_and_spaces)
{
    CHECK_STR(norm(BD_ID_SSN, "123-45-6789"), "123456789");
    CHECK_STR(norm(BD_ID_SSN, "123 45 6789"), "123456789");
    CHECK_STR(norm(BD_ID_SSN, "123456789"), "123456789");
}

TEST(test_ssn_needs_exactly_nine_digits)
{
    CHECK_STR(norm(BD_ID_SSN, "12345678"), "INVALID");
    CHECK_STR(norm(BD_ID_SSN, "1234567890"), "INVALID");
    CHECK_STR(norm(BD_ID_SSN, "123.45.6789"), "INVALID");
    CHECK_STR(why, "a social security number must have exactly 9 digits, optionally separated "
                   "by dashes");
}

TEST(test_password_is_kept_exactly_with_spaces_and_case)
{
    CHECK_STR(norm(BD_ID_PASSWORD, " Pa ss\tWord "), " Pa ss\tWord ");
}

TEST(test_password_rejects_only_empty)
{
    CHECK_STR(norm(BD_ID_PASSWORD, ""), "INVALID");
    CHECK_STR(why, "a password must not be empty");
    CHECK_STR(norm(BD_ID_PASSWORD, " "), " ");
}

TEST(test_password_may_have_512_bytes_not_513)
{
    char pw[514];
    memset(pw, 'x', 513);
    pw[512] = '\0';
    CHECK_STR(norm(BD_ID_PASSWORD, pw), pw);
    pw[512] = 'x';
    pw[513] = '\0';
    CHECK_STR(norm(BD_ID_PASSWORD, pw), "INVALID");
    CHECK_STR(why, "the value is too long: at most 512 bytes are allowed");
}

TEST(test_nul_byte_is_invalid_for_every_type)
{
    for (int t = 0; t < BD_ID_COUNT; t++) {
        CHECK_STR(norm_n((bd_id_type)t, "a\0b@example.com", 15), "INVALID");
        CHECK_STR(why, "the value must not contain a NUL byte");
    }
}

TEST(test_value_over_512_bytes_is_too_long_for_every_type)
{
    char v[600];
    memset(v, '1', 513);
    v[513] = '\0';
    for (int t = 0; t < BD_ID_COUNT; t++) {
        CHECK_STR(norm((bd_id_type)t, v), "INVALID");
        CHECK_STR(why, "the value is too long: at most 512 bytes are allowed");
    }
}

TEST(test_password_hash_all_hex_is_lower_cased)
{
    CHECK_STR(norm(BD_ID_PASSWORD_HASH, " 5F4DCC3B5AA765D61D8327DEB882CF99 "),
              "5f4dcc3b5aa765d61d8327deb882cf99");
}

TEST(test_password_hash_crypt_string_keeps_its_case)
{
    CHECK_STR(norm(BD_ID_PASSWORD_HASH, "$2b$12$KIXQJ8yZ3nY/AbCdEfGhIu"),
              "$2b$12$KIXQJ8yZ3nY/AbCdEfGhIu");
}

TEST(test_password_hash_rejects_inner_whitespace_and_empty)
{
    CHECK_STR(norm(BD_ID_PASSWORD_HASH, "abc def"), "INVALID");
    CHECK_STR(norm(BD_ID_PASSWORD_HASH, "  "), "INVALID");
    CHECK_STR(why, "a password hash must not be empty or contain whitespace");
}

TEST(test_bitcoin_address_is_trimmed_and_kept_exact)
{
    CHECK_STR(norm(BD_ID_BITCOIN, " 1BoatSLRHtKNngkdXEeobR76b53LETtpyT "),
              "1BoatSLRHtKNngkdXEeobR76b53LETtpyT");
    CHECK_STR(norm(BD_ID_BITCOIN, "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"),
              "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq");
}

TEST(test_bitcoin_address_needs_14_to_90_letters_and_digits)
{
    char v[100];
    memset(v, 'a', 91);
    v[13] = '\0';
    CHECK_STR(norm(BD_ID_BITCOIN, v), "INVALID");
    v[13] = 'a';
    v[14] = '\0';
    CHECK_STR(norm(BD_ID_BITCOIN, v), "aaaaaaaaaaaaaa");
    v[14] = 'a';
    v[90] = '\0';
    CHECK_INT(strlen(norm(BD_ID_BITCOIN, v)), 90);
    v[90] = 'a';
    v[91] = '\0';
    CHECK_STR(norm(BD_ID_BITCOIN, v), "INVALID");
    CHECK_STR(norm(BD_ID_BITCOIN, "1BoatSLRHtKNngkd-XEeobR76b53"), "INVALID");
    CHECK_STR(why, "a bitcoin address must be 14 to 90 letters and digits");
}

TEST(test_email_and_username_must_be_valid_utf8)
{
    size_t n;
    CHECK_INT(bd_normalize(BD_ID_EMAIL, bd_slice_from("\xff\xfe@x.example"), out, &n, &why),
              BD_ERR_INVALID);
    CHECK_INT(bd_normalize(BD_ID_USERNAME, bd_slice_from("bob\xc3"), out, &n, &why),
              BD_ERR_INVALID);
    CHECK_INT(bd_normalize(BD_ID_EMAIL, bd_slice_from("j\xc3\xb6rg@x.example"), out, &n, &why),
              BD_OK);
    CHECK_STR(out, "j\xc3\xb6rg@x.example");
    CHECK_INT(bd_normalize(BD_ID_USERNAME,
                           bd_slice_from("Z\xc3\xb6"
                                         "e"),
                           out, &n, &why),
              BD_OK);
    CHECK_STR(out, "z\xc3\xb6"
                   "e");
}

int main(void)
{
    RUN(test_email_and_username_must_be_valid_utf8);
    RUN(test_type_parse_accepts_the_nine_names_and_two_aliases);
    RUN(test_type_parse_ignores_case_and_rejects_unknown_names);
    RUN(test_type_name_gives_the_parameter_name);
    RUN(test_type_names_round_trip_through_parse);
    RUN(test_email_is_trimmed_and_lower_cased);
    RUN(test_email_keeps_plus_and_non_ascii_local_part);
    RUN(test_email_drops_a_trailing_dot_of_the_domain);
    RUN(test_email_needs_exactly_one_at_sign);
    RUN(test_email_needs_a_local_part_without_spaces_or_controls);
    RUN(test_email_needs_a_host_name_domain);
    RUN(test_email_empty_or_blank_is_invalid);
    RUN(test_email_domain_is_lower_cased_and_loses_a_leading_at);
    RUN(test_email_domain_drops_one_trailing_dot);
    RUN(test_email_domain_needs_two_labels);
    RUN(test_email_domain_labels_are_letters_digits_and_inner_hyphens);
    RUN(test_email_domain_label_may_have_63_bytes_not_64);
    RUN(test_email_domain_may_have_253_bytes_not_254);
    RUN(test_phone_drops_spaces_plus_dashes_parentheses_and_dots);
    RUN(test_phone_rejects_letters_and_other_punctuation);
    RUN(test_phone_needs_7_to_15_digits);
    RUN(test_phone_is_trimmed);
    RUN(test_username_is_trimmed_and_ascii_lower_cased);
    RUN(test_username_keeps_non_ascii_bytes_exact);
    RUN(test_username_rejects_empty_and_control_characters);
    RUN(test_username_keeps_inner_spaces);
    RUN(test_ipv4_is_kept_in_dotted_form);
    RUN(test_ipv4_rejects_short_forms_and_leading_zeros);
    RUN(test_ipv6_forms_of_one_address_normalise_equal);
    RUN(test_ipv6_compresses_the_longest_zero_run);
    RUN(test_ipv6_mapped_ipv4_keeps_dotted_tail);
    RUN(test_ip_rejects_zone_ids_prefixes_and_host_names);
    RUN(test_ssn_drops_dashes_and_spaces);
    RUN(test_ssn_needs_exactly_nine_digits);
    RUN(test_password_is_kept_exactly_with_spaces_and_case);
    RUN(test_password_rejects_only_empty);
    RUN(test_password_may_have_512_bytes_not_513);
    RUN(test_nul_byte_is_invalid_for_every_type);
    RUN(test_value_over_512_bytes_is_too_long_for_every_type);
    RUN(test_password_hash_all_hex_is_lower_cased);
    RUN(test_password_hash_crypt_string_keeps_its_case);
    RUN(test_password_hash_rejects_inner_whitespace_and_empty);
    RUN(test_bitcoin_address_is_trimmed_and_kept_exact);
    RUN(test_bitcoin_address_needs_14_to_90_letters_and_digits);
    return TEST_EXIT();
}
