/* The pieces of the HIBP v3 breach model that are pure functions: a breach's Name derived
 * from its source name (store/breach_name.h) and data classes from leaked_data_types tokens
 * (hibp/hibp_classes.h). */
#include "hibp/hibp_classes.h"
#include "store/breach_name.h"
#include "test.h"

static const char *base(const char *source)
{
    static char out[BD_BREACH_NAME_MAX + 1];
    bd_breach_name_base(bd_slice_from(source), out);
    return out;
}

TEST(test_name_capitalises_each_word_and_keeps_only_ascii_letters_and_digits)
{
    CHECK_STR(base("Adobe"), "Adobe");
    CHECK_STR(base("Ashley Madison"), "AshleyMadison");
    CHECK_STR(base("LinkedIn"), "LinkedIn");
    CHECK_STR(base("000webhost"), "000webhost");
    CHECK_STR(base("alpha forum"), "AlphaForum");
    CHECK_STR(base("beta-shop.com (2021)"), "BetaShopCom2021");
    CHECK_STR(base("  x  "), "X");
    CHECK_STR(base("Z\xc3\xbcrich bank"), "ZrichBank"); /* other scripts left out */
}

TEST(test_name_without_letters_or_digits_is_breach)
{
    CHECK_STR(base(""), "Breach");
    CHECK_STR(base("!!! ---"), "Breach");
    CHECK_STR(base("\xe4\xb8\xad\xe6\x96\x87"), "Breach");
}

TEST(test_name_is_cut_at_its_maximum)
{
    char src[200];
    memset(src, 'a', sizeof src - 1);
    src[sizeof src - 1] = '\0';
    const char *n = base(src);
    CHECK_INT(strlen(n), BD_BREACH_NAME_MAX);
    CHECK(n[0] == 'A' && n[1] == 'a');
}

TEST(test_name_candidates_add_a_number_from_two_and_still_fit)
{
    char out[BD_BREACH_NAME_MAX + 1];
    bd_breach_name_candidate("Adobe", 1, out);
    CHECK_STR(out, "Adobe");
    bd_breach_name_candidate("Adobe", 2, out);
    CHECK_STR(out, "Adobe2");
    bd_breach_name_candidate("Adobe", 10, out);
    CHECK_STR(out, "Adobe10");
    char longest[BD_BREACH_NAME_MAX + 1];
    memset(longest, 'B', BD_BREACH_NAME_MAX);
    longest[BD_BREACH_NAME_MAX] = '\0';
    bd_breach_name_candidate(longest, 12, out);
    CHECK_INT(strlen(out), BD_BREACH_NAME_MAX);
    CHECK_STR(out + BD_BREACH_NAME_MAX - 2, "12");
}

TEST(test_name_validity_is_one_to_64_ascii_letters_or_digits)
{
    CHECK(bd_breach_name_valid(BD_SLICE_LIT("Adobe2")));
    CHECK(!bd_breach_name_valid(BD_SLICE_LIT("")));
    CHECK(!bd_breach_name_valid(BD_SLICE_LIT("Ado be")));
    CHECK(!bd_breach_name_valid(BD_SLICE_LIT("Ad\xc3\xb6")));
    char s[BD_BREACH_NAME_MAX + 1];
    memset(s, 'a', sizeof s);
    CHECK(bd_breach_name_valid((bd_slice){s, BD_BREACH_NAME_MAX}));
    CHECK(!bd_breach_name_valid((bd_slice){s, BD_BREACH_NAME_MAX + 1}));
}

TEST(test_name_start_is_the_wanted_name_when_well_formed_else_derived)
{
    char out[BD_BREACH_NAME_MAX + 1];
    bd_breach_name_start(BD_SLICE_LIT("GammaOfficial"), BD_SLICE_LIT("Gamma"), out);
    CHECK_STR(out, "GammaOfficial");
    bd_breach_name_start(BD_SLICE_LIT("not valid!"), BD_SLICE_LIT("delta leak"), out);
    CHECK_STR(out, "DeltaLeak");
    bd_breach_name_start((bd_slice){NULL, 0}, BD_SLICE_LIT("x"), out);
    CHECK_STR(out, "X");
}

static const char *cls(const char *token)
{
    static char out[BD_HIBP_CLASS_MAX + 1];
    bd_hibp_data_class(bd_slice_from(token), out);
    return out;
}

TEST(test_data_class_maps_our_tokens_to_hibp_wording)
{
    CHECK_STR(cls("email"), "Email addresses");
    CHECK_STR(cls("password"), "Passwords");
    CHECK_STR(cls("password_hash"), "Password hashes");
    CHECK_STR(cls("username"), "Usernames");
    CHECK_STR(cls("ip_address"), "IP addresses");
    CHECK_STR(cls("phone_number"), "Phone numbers");
    CHECK_STR(cls("first_name"), "Names");
    CHECK_STR(cls("social_security_number"), "Social security numbers");
    CHECK_STR(cls("bitcoin_address"), "Cryptocurrency wallet addresses");
    CHECK_STR(cls(" EMAIL "), "Email addresses");
}

TEST(test_data_class_of_an_unknown_token_is_its_readable_form)
{
    CHECK_STR(cls("credit_score"), "Credit score");
    CHECK_STR(cls("Favourite-Colour"), "Favourite colour");
    CHECK_STR(cls("a__b"), "A b");
    CHECK_STR(cls("___"), "");
}

TEST(test_data_classes_of_a_list_are_sorted_without_repeats)
{
    bd_hibp_classes set = {0};
    bd_hibp_classes_add(&set, BD_SLICE_LIT("username,email;first_name,last_name, password,"));
    bd_hibp_classes_add(&set, BD_SLICE_LIT("email,zodiac_sign"));
    CHECK_INT(set.n, 5);
    CHECK_STR(set.name[0], "Email addresses");
    CHECK_STR(set.name[1], "Names");
    CHECK_STR(set.name[2], "Passwords");
    CHECK_STR(set.name[3], "Usernames");
    CHECK_STR(set.name[4], "Zodiac sign");
}

int main(void)
{
    RUN(test_name_capitalises_each_word_and_keeps_only_ascii_letters_and_digits);
    RUN(test_name_without_letters_or_digits_is_breach);
    RUN(test_name_is_cut_at_its_maximum);
    RUN(test_name_candidates_add_a_number_from_two_and_still_fit);
    RUN(test_name_validity_is_one_to_64_ascii_letters_or_digits);
    RUN(test_name_start_is_the_wanted_name_when_well_formed_else_derived);
    RUN(test_data_class_maps_our_tokens_to_hibp_wording);
    RUN(test_data_class_of_an_unknown_token_is_its_readable_form);
    RUN(test_data_classes_of_a_list_are_sorted_without_repeats);
    return TEST_EXIT();
}
