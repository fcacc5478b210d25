/* A key's scope as pure rules (src/auth/scope.h). */
#include <string.h>

#include "auth/keys.h"
#include "auth/scope.h"
#include "ingest/normalize.h"
#include "test.h"

static bd_slice sl(const char *s)
{
    return (bd_slice){s, strlen(s)};
}

TEST(test_domain_under_its_tenant_domain)
{
    CHECK(bd_scope_domain_under(sl("acme.example"), sl("acme.example")));
    CHECK(bd_scope_domain_under(sl("mail.acme.example"), sl("acme.example")));
    CHECK(bd_scope_domain_under(sl("a.b.acme.example"), sl("acme.example")));
    CHECK(!bd_scope_domain_under(sl("notacme.example"), sl("acme.example")));
    CHECK(!bd_scope_domain_under(sl("acme.example.evil"), sl("acme.example")));
    CHECK(!bd_scope_domain_under(sl("example"), sl("acme.example")));
    CHECK(!bd_scope_domain_under(sl("cme.example"), sl("acme.example")));
    CHECK(!bd_scope_domain_under(sl(".acme.example"), sl("mail.acme.example")));
    CHECK(!bd_scope_domain_under(sl("acme.example"), sl("")));
    CHECK(!bd_scope_domain_under(sl(""), sl("acme.example")));
}

TEST(test_identity_domain_of_each_type)
{
    bd_slice d = {NULL, 0};
    CHECK(bd_scope_identity_domain(BD_ID_EMAIL, sl("jane@acme.example"), &d));
    CHECK_INT(d.len, 12);
    CHECK(memcmp(d.ptr, "acme.example", 12) == 0);
    /* the last '@' (a quoted local part may hold one) */
    CHECK(bd_scope_identity_domain(BD_ID_EMAIL, sl("\"a@b\"@globex.example"), &d));
    CHECK(d.len == 14 && memcmp(d.ptr, "globex.example", 14) == 0);
    CHECK(bd_scope_identity_domain(BD_ID_EMAIL_DOMAIN, sl("acme.example"), &d));
    CHECK(d.len == 12 && memcmp(d.ptr, "acme.example", 12) == 0);
    CHECK(!bd_scope_identity_domain(BD_ID_EMAIL, sl("no-at-sign"), &d));
    for (int t = BD_ID_PHONE; t < BD_ID_COUNT; t++)
        CHECK(!bd_scope_identity_domain(t, sl("x@acme.example"), &d));
}

TEST(test_types_and_the_record_filter)
{
    uint32_t tenant = BD_KEY_TYPES_TENANT_DEFAULT;
    CHECK(bd_scope_type_allowed(tenant, BD_ID_EMAIL));
    CHECK(bd_scope_type_allowed(tenant, BD_ID_EMAIL_DOMAIN));
    CHECK(!bd_scope_type_allowed(tenant, BD_ID_USERNAME));
    CHECK(!bd_scope_type_allowed(BD_KEY_TYPES_ALL, -1));
    CHECK(!bd_scope_type_allowed(BD_KEY_TYPES_ALL, BD_ID_COUNT)); /* the cards bit is no id */
    for (int t = 0; t < BD_ID_COUNT; t++)
        CHECK(bd_scope_type_allowed(BD_KEY_TYPES_ALL, t));
    CHECK_INT(bd_scope_record_filter(0, BD_ID_USERNAME), 0);
    CHECK_INT(bd_scope_record_filter(7, BD_ID_USERNAME), 7);
    CHECK_INT(bd_scope_record_filter(7, BD_ID_PASSWORD), 7);
    CHECK_INT(bd_scope_record_filter(7, BD_ID_EMAIL), 0);
    CHECK_INT(bd_scope_record_filter(7, BD_ID_EMAIL_DOMAIN), 0);
}

TEST(test_website_domain_has_bit_10_and_the_cards_bit_stays_9)
{
    /* a key stored with the ten bits of before (nine types and cards) keeps exactly them */
    uint32_t before = 0x3ffu;
    CHECK(!bd_scope_type_allowed(before, BD_ID_WEBSITE_DOMAIN));
    CHECK(bd_scope_type_allowed(before, BD_ID_BITCOIN));
    CHECK(bd_scope_type_allowed(BD_KEY_TYPE_WEBSITE_DOMAIN, BD_ID_WEBSITE_DOMAIN));
    CHECK(!bd_scope_type_allowed(BD_KEY_TYPE_CARDS, BD_ID_WEBSITE_DOMAIN));
    CHECK_INT((int)BD_KEY_TYPE_CARDS, 1 << 9);
    CHECK_INT((int)bd_key_type_bit(BD_ID_WEBSITE_DOMAIN), 1 << 10);
    CHECK_INT((int)BD_KEY_TYPES_ALL, 0x7ff);
    /* searched like the other non-email types: among the tenant's records */
    CHECK_INT(bd_scope_record_filter(7, BD_ID_WEBSITE_DOMAIN), 7);
}

int main(void)
{
    RUN(test_domain_under_its_tenant_domain);
    RUN(test_identity_domain_of_each_type);
    RUN(test_types_and_the_record_filter);
    RUN(test_website_domain_has_bit_10_and_the_cards_bit_stays_9);
    return TEST_EXIT();
}
