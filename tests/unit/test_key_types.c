/* auth/key_types.h: a key's identity types as text, and the defaults a stored 0 stands for. */
#include "auth/key_types.h"
#include "auth/keys.h"
#include "test.h"

static const char *round_trip(const char *in)
{
    static char out[256];
    uint32_t m = 0xdead;
    if (!bd_key_types_parse(in, &m)) {
        CHECK_INT(m, 0xdead); /* untouched */
        return "refused";
    }
    bd_buf b;
    bd_buf_init(&b, 4096);
    bd_key_types_format(m, &b);
    snprintf(out, sizeof out, "%u %.*s", (unsigned)m, (int)b.len, b.data ? b.data : "");
    bd_buf_free(&b);
    return out;
}

TEST(test_type_lists_parse_and_format_in_bit_order)
{
    CHECK_STR(round_trip("email,email_domain"), "3 email,email_domain");
    CHECK_STR(round_trip("email_domain,email"), "3 email,email_domain");
    CHECK_STR(round_trip("cards"), "512 cards");
    CHECK_STR(round_trip("EMAIL, Username ,cards"), "521 email,username,cards");
    CHECK_STR(round_trip("phone,ssn,hashed_password"),
              "164 phone_number,social_security_number,password_hash");
    CHECK_STR(round_trip("phone_number,social_security_number,password_hash,ipaddress"),
              "180 phone_number,ip_address,social_security_number,password_hash");
    CHECK_STR(round_trip("email,email_domain,phone_number,username,ip_address,"
                         "social_security_number,password,password_hash,bitcoin_address,cards"),
              "1023 email,email_domain,phone_number,username,ip_address,"
              "social_security_number,password,password_hash,bitcoin_address,cards");
    CHECK_STR(round_trip("email,email"), "1 email");
    /* website_domain took bit 10: the cards bit (9) and the masks stored before keep theirs */
    CHECK_STR(round_trip("Website_Domain"), "1024 website_domain");
    CHECK_STR(round_trip("cards,website_domain,email"), "1537 email,website_domain,cards");
    CHECK_STR(round_trip(""), "refused");
    CHECK_STR(round_trip("email,"), "refused");
    CHECK_STR(round_trip(",email"), "refused");
    CHECK_STR(round_trip("email,,username"), "refused");
    CHECK_STR(round_trip("mail"), "refused");
    CHECK_STR(round_trip("card"), "refused");
    CHECK(!bd_key_types_parse(NULL, &(uint32_t){0}));
    bd_buf b;
    bd_buf_init(&b, 64);
    bd_key_types_format(0, &b);
    CHECK_INT(b.len, 0);
    bd_buf_free(&b);
}

TEST(test_a_stored_zero_is_every_type_or_the_tenant_default)
{
    CHECK_INT(bd_key_types_resolve(0, 0), BD_KEY_TYPES_ALL);
    CHECK_INT(bd_key_types_resolve(0, 7), BD_KEY_TYPES_TENANT_DEFAULT);
    CHECK_INT(BD_KEY_TYPES_TENANT_DEFAULT, 3);
    CHECK_INT(bd_key_types_resolve(BD_KEY_TYPE_CARDS, 0), BD_KEY_TYPE_CARDS);
    CHECK_INT(bd_key_types_resolve(BD_KEY_TYPE_CARDS | 8, 7), BD_KEY_TYPE_CARDS | 8);
    CHECK_INT(bd_key_types_resolve(0x800u | 1u, 0), 1); /* unknown bits dropped */
    CHECK_INT(bd_key_types_resolve(0x800u, 0), BD_KEY_TYPES_ALL);
    CHECK_INT(bd_key_types_resolve(0x400u | 1u, 0), 0x401); /* website_domain's bit is known */
}

int main(void)
{
    RUN(test_type_lists_parse_and_format_in_bit_order);
    RUN(test_a_stored_zero_is_every_type_or_the_tenant_default);
    return TEST_EXIT();
}
