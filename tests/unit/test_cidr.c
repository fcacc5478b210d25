/* auth/cidr.h: parsing, canonical text and matching of address blocks. */
#include <arpa/inet.h>

#include "auth/cidr.h"
#include "test.h"

static const char *canonical(const char *in)
{
    static char out[64];
    bd_cidr c;
    if (!bd_cidr_parse(bd_slice_from(in), &c))
        return "refused";
    bd_cidr_format(&c, out);
    return out;
}

TEST(test_blocks_and_single_addresses_parse_to_canonical_text)
{
    CHECK_STR(canonical("192.0.2.0/24"), "192.0.2.0/24");
    CHECK_STR(canonical("192.0.2.7"), "192.0.2.7/32");
    CHECK_STR(canonical("0.0.0.0/0"), "0.0.0.0/0");
    CHECK_STR(canonical("10.0.0.0/8"), "10.0.0.0/8");
    CHECK_STR(canonical("2001:DB8:0:0::/32"), "2001:db8::/32");
    CHECK_STR(canonical("2001:db8::1"), "2001:db8::1/128");
    CHECK_STR(canonical("::/0"), "::/0");
    CHECK_STR(canonical("10.1.0.0/15"), "refused"); /* host bits below the prefix */
    CHECK_STR(canonical("192.0.2.1/24"), "refused");
    CHECK_STR(canonical("192.0.2.0/33"), "refused");
    CHECK_STR(canonical("2001:db8::/129"), "refused");
    CHECK_STR(canonical("192.0.2.0/024"), "refused");
    CHECK_STR(canonical("192.0.2.0/"), "refused");
    CHECK_STR(canonical("192.0.2.0/2a"), "refused");
    CHECK_STR(canonical(" 192.0.2.0/24"), "refused");
    CHECK_STR(canonical("fe80::1%eth0"), "refused");
    CHECK_STR(canonical("example.com"), "refused");
    CHECK_STR(canonical(""), "refused");
    bd_cidr c;
    CHECK(!bd_cidr_parse((bd_slice){"10.0.0.0\0/8", 11}, &c));
}

static bool in(const char *block, const char *addr)
{
    bd_cidr c;
    uint8_t a[16];
    CHECK(bd_cidr_parse(bd_slice_from(block), &c));
    if (inet_pton(AF_INET, addr, a) == 1)
        return bd_cidr_contains(&c, 4, a);
    CHECK(inet_pton(AF_INET6, addr, a) == 1);
    return bd_cidr_contains(&c, 6, a);
}

TEST(test_an_address_is_in_a_block_when_its_prefix_matches)
{
    CHECK(in("192.0.2.0/24", "192.0.2.255"));
    CHECK(!in("192.0.2.0/24", "192.0.3.0"));
    CHECK(in("10.0.0.0/9", "10.127.255.255"));
    CHECK(!in("10.0.0.0/9", "10.128.0.0"));
    CHECK(in("0.0.0.0/0", "203.0.113.9"));
    CHECK(in("198.51.100.7", "198.51.100.7"));
    CHECK(!in("198.51.100.7", "198.51.100.8"));
    CHECK(in("2001:db8::/32", "2001:db8:ffff::1"));
    CHECK(!in("2001:db8::/32", "2001:db9::1"));
    CHECK(!in("::/0", "192.0.2.1"));              /* families apart */
    CHECK(!in("0.0.0.0/0", "2001:db8::1"));
    CHECK(in("192.0.2.0/24", "::ffff:192.0.2.9")); /* an IPv4-mapped address is IPv4 */
    CHECK(!in("192.0.2.0/24", "::ffff:192.0.3.9"));
}

int main(void)
{
    RUN(test_blocks_and_single_addresses_parse_to_canonical_text);
    RUN(test_an_address_is_in_a_block_when_its_prefix_matches);
    return TEST_EXIT();
}
