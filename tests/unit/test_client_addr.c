/* The client address behind trusted proxies (src/http/client_addr.h). */
#include <arpa/inet.h>
#include <string.h>

#include "http/client_addr.h"
#include "test.h"

static bd_ip ip_of(const char *text)
{
    bd_ip ip;
    memset(&ip, 0, sizeof ip);
    if (!bd_ip_parse((bd_slice){text, strlen(text)}, &ip))
        TEST_FAIL("'%s' did not parse", text);
    return ip;
}

static const char *text_of(const bd_ip *ip)
{
    static char out[BD_CLIENT_ADDR_TEXT];
    bd_ip_format(ip, out);
    return out;
}

/* The client of a request from peer with one header line per element of lines. */
static const char *resolve(const bd_trusted_proxies *p, const char *peer, const char *const *lines,
                           size_t n)
{
    bd_slice xff[8];
    for (size_t i = 0; i < n; i++)
        xff[i] = (bd_slice){lines[i], strlen(lines[i])};
    bd_ip from = ip_of(peer), out;
    bd_client_addr_resolve(p, &from, xff, n, &out);
    return text_of(&out);
}

static bd_trusted_proxies proxies(void)
{
    bd_trusted_proxies p = {0};
    CHECK(bd_trusted_proxies_add(&p, "10.0.0.0/8"));
    CHECK(bd_trusted_proxies_add(&p, "fd00::/8"));
    return p;
}

TEST(test_entries_parse_in_their_forms)
{
    CHECK_STR(text_of(&(bd_ip){0}), "");
    const char *good[][2] = {
        {"192.0.2.7", "192.0.2.7"},         {"  192.0.2.7\t", "192.0.2.7"},
        {"192.0.2.7:8443", "192.0.2.7"},    {"2001:db8::1", "2001:db8::1"},
        {"[2001:db8::1]", "2001:db8::1"},   {"[2001:db8::1]:443", "2001:db8::1"},
        {"::ffff:192.0.2.9", "192.0.2.9"},  {"::1", "::1"},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        bd_ip ip = ip_of(good[i][0]);
        CHECK_STR(text_of(&ip), good[i][1]);
    }
    CHECK_INT(ip_of("::ffff:192.0.2.9").family, 4);
    CHECK_INT(ip_of("2001:db8::1").family, 6);
    const char *bad[] = {"", "   ", "unknown", "_hidden", "example.com", "192.0.2", "192.0.2.7/24",
                         "[2001:db8::1", "[2001:db8::1]x", "192.0.2.7:80:1x", "1.2.3.4.5",
                         "fe80::1%eth0"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        bd_ip ip;
        if (bd_ip_parse((bd_slice){bad[i], strlen(bad[i])}, &ip))
            TEST_FAIL("'%s' parsed", bad[i]);
    }
    bd_ip ip;
    CHECK(!bd_ip_parse((bd_slice){"1.2.3.4\0", 8}, &ip)); /* a NUL inside */
}

TEST(test_socket_bytes_keep_v4_mapped_as_v4)
{
    uint8_t mapped[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 51, 100, 4};
    bd_ip ip;
    bd_ip_from_bytes(AF_INET6, mapped, &ip);
    CHECK_INT(ip.family, 4);
    CHECK_STR(text_of(&ip), "198.51.100.4");
    uint8_t v4[4] = {203, 0, 113, 5};
    bd_ip_from_bytes(AF_INET, v4, &ip);
    CHECK_STR(text_of(&ip), "203.0.113.5");
    bd_ip_from_bytes(0, v4, &ip); /* a Unix socket: unknown */
    CHECK_INT(ip.family, 0);
}

TEST(test_proxy_list_refuses_bad_blocks_and_overflow)
{
    bd_trusted_proxies p = {0};
    CHECK(!bd_trusted_proxies_add(&p, "10.0.0.1/8")); /* host bits */
    CHECK(!bd_trusted_proxies_add(&p, "proxy.example"));
    CHECK(!bd_trusted_proxies_add(&p, NULL));
    CHECK_INT(p.n, 0);
    for (int i = 0; i < BD_TRUSTED_PROXY_MAX; i++)
        CHECK(bd_trusted_proxies_add(&p, "192.0.2.0/24"));
    CHECK(!bd_trusted_proxies_add(&p, "192.0.2.0/24"));
}

TEST(test_without_trusted_proxies_the_peer_is_the_client)
{
    const char *xff[] = {"198.51.100.1"};
    bd_trusted_proxies none = {0};
    CHECK_STR(resolve(NULL, "10.1.2.3", xff, 1), "10.1.2.3");
    CHECK_STR(resolve(&none, "10.1.2.3", xff, 1), "10.1.2.3");
    bd_trusted_proxies p = proxies();
    /* a peer that is no trusted proxy: its header is the client's own words */
    CHECK_STR(resolve(&p, "203.0.113.9", xff, 1), "203.0.113.9");
    /* a trusted proxy that sent no header */
    CHECK_STR(resolve(&p, "10.1.2.3", NULL, 0), "10.1.2.3");
}

TEST(test_rightmost_untrusted_entry_is_the_client)
{
    bd_trusted_proxies p = proxies();
    const char *one[] = {"198.51.100.1"};
    CHECK_STR(resolve(&p, "10.1.2.3", one, 1), "198.51.100.1");
    /* what the client wrote itself stays left of what its proxy appended */
    const char *forged[] = {"1.1.1.1, 198.51.100.1"};
    CHECK_STR(resolve(&p, "10.1.2.3", forged, 1), "198.51.100.1");
    /* a chain of trusted proxies is walked through */
    const char *chain[] = {"1.1.1.1, 198.51.100.1, 10.9.9.9,fd00::7"};
    CHECK_STR(resolve(&p, "10.1.2.3", chain, 1), "198.51.100.1");
    /* several header lines read as one list, left to right */
    const char *lines[] = {"1.1.1.1", "198.51.100.1", "10.9.9.9"};
    CHECK_STR(resolve(&p, "fd00::1", lines, 3), "198.51.100.1");
    const char *v6[] = {"2001:db8::5"};
    CHECK_STR(resolve(&p, "10.1.2.3", v6, 1), "2001:db8::5");
    const char *ported[] = {"[2001:db8::5]:5555, 10.0.0.2:80"};
    CHECK_STR(resolve(&p, "10.1.2.3", ported, 1), "2001:db8::5");
    /* a proxy reached over IPv6 as an IPv4-mapped address is still the trusted IPv4 one */
    CHECK_STR(resolve(&p, "::ffff:10.1.2.3", one, 1), "198.51.100.1");
}

TEST(test_every_entry_trusted_gives_the_leftmost)
{
    bd_trusted_proxies p = proxies();
    const char *xff[] = {"10.0.0.5, 10.0.0.6"};
    CHECK_STR(resolve(&p, "10.1.2.3", xff, 1), "10.0.0.5");
}

TEST(test_garbage_stops_at_the_trusted_hop_that_wrote_it)
{
    bd_trusted_proxies p = proxies();
    const char *unknown[] = {"198.51.100.1, unknown"};
    CHECK_STR(resolve(&p, "10.1.2.3", unknown, 1), "10.1.2.3");
    const char *inner[] = {"198.51.100.1, garbage, 10.0.0.9"};
    CHECK_STR(resolve(&p, "10.1.2.3", inner, 1), "10.0.0.9");
    const char *empty[] = {""};
    CHECK_STR(resolve(&p, "10.1.2.3", empty, 1), "10.1.2.3");
    const char *trailing[] = {"198.51.100.1,"};
    CHECK_STR(resolve(&p, "10.1.2.3", trailing, 1), "10.1.2.3");
    /* a garbage entry left of the client is never reached */
    const char *left[] = {"x, 198.51.100.1"};
    CHECK_STR(resolve(&p, "10.1.2.3", left, 1), "198.51.100.1");
}

TEST(test_allow_list_membership)
{
    bd_cidr allow[2];
    CHECK(bd_cidr_parse((bd_slice){"192.0.2.0/24", 12}, &allow[0]));
    CHECK(bd_cidr_parse((bd_slice){"2001:db8::/32", 13}, &allow[1]));
    bd_ip in4 = ip_of("192.0.2.200"), out4 = ip_of("192.0.3.1"), in6 = ip_of("2001:db8:1::1"),
          out6 = ip_of("2001:db9::1"), unknown = {0};
    CHECK(bd_ip_allowed(allow, 2, &in4));
    CHECK(!bd_ip_allowed(allow, 2, &out4));
    CHECK(bd_ip_allowed(allow, 2, &in6));
    CHECK(!bd_ip_allowed(allow, 2, &out6));
    CHECK(!bd_ip_allowed(allow, 2, &unknown));
    CHECK(bd_ip_allowed(allow, 0, &out4)); /* no list: anywhere */
    CHECK(bd_ip_allowed(allow, 0, &unknown));
}

int main(void)
{
    RUN(test_entries_parse_in_their_forms);
    RUN(test_socket_bytes_keep_v4_mapped_as_v4);
    RUN(test_proxy_list_refuses_bad_blocks_and_overflow);
    RUN(test_without_trusted_proxies_the_peer_is_the_client);
    RUN(test_rightmost_untrusted_entry_is_the_client);
    RUN(test_every_entry_trusted_gives_the_leftmost);
    RUN(test_garbage_stops_at_the_trusted_hop_that_wrote_it);
    RUN(test_allow_list_membership);
    return TEST_EXIT();
}
