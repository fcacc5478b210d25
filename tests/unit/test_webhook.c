/* src/webhook/ and the watch spec: destination policy (CIDR, blocked ranges, --webhook-allow),
 * URL form, the signature against an independently computed value, the retry schedule, and
 * a watch's type and value normalised as breach-search normalises them. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sodium.h>
#include <string.h>

#include "ingest/watch_spec.h"
#include "test.h"
#include "webhook/deliver.h"
#include "webhook/payload.h"
#include "webhook/policy.h"

static bool ok_addr(const bd_webhook_policy *p, const char *text)
{
    struct sockaddr_in6 a6 = {.sin6_family = AF_INET6};
    struct sockaddr_in a4 = {.sin_family = AF_INET};
    if (inet_pton(AF_INET, text, &a4.sin_addr) == 1)
        return bd_webhook_address_ok(p, (const struct sockaddr *)&a4);
    if (inet_pton(AF_INET6, text, &a6.sin6_addr) != 1)
        TEST_FAIL("bad test address %s", text);
    return bd_webhook_address_ok(p, (const struct sockaddr *)&a6);
}

TEST(test_internal_ranges_are_refused_and_public_ones_pass)
{
    bd_webhook_policy p = {0};
    const char *refused[] = {"127.0.0.1",
                             "127.255.255.254",
                             "10.0.0.1",
                             "172.16.0.1",
                             "172.31.255.255",
                             "192.168.1.1",
                             "169.254.169.254",
                             "100.64.0.1",
                             "0.0.0.0",
                             "224.0.0.1",
                             "255.255.255.255",
                             "::1",
                             "::",
                             "fe80::1",
                             "fd00::1",
                             "fc00::1",
                             "::ffff:127.0.0.1",
                             "::ffff:10.1.2.3",
                             "ff02::1",
                             "2001:db8::1"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        if (ok_addr(&p, refused[i]))
            TEST_FAIL("%s passed", refused[i]);
    const char *public_[] = {"93.184.216.34", "8.8.8.8",         "172.32.0.1",    "172.15.255.255",
                             "100.128.0.1",   "2606:4700::1111", "::ffff:8.8.8.8"};
    for (size_t i = 0; i < sizeof public_ / sizeof public_[0]; i++)
        if (!ok_addr(&p, public_[i]))
            TEST_FAIL("%s refused", public_[i]);
}

TEST(test_ipv4_inside_ipv6_is_judged_as_that_ipv4)
{
    bd_webhook_policy p = {0};
    /* IPv4-compatible (::/96) and IPv4-translated (::ffff:0:0:0/96) forms */
    const char *refused[] = {"::127.0.0.1",        "::10.0.0.1",         "::169.254.169.254",
                             "::192.168.1.1",      "::ffff:0:127.0.0.1", "::ffff:0:10.1.2.3",
                             "::ffff:0:169.254.169.254", "::ffff:0:0.0.0.0", "::ffff:0:0:0",
                             "::a9fe:a9fe",        "::ffff:0:7f00:1"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        if (ok_addr(&p, refused[i]))
            TEST_FAIL("%s passed", refused[i]);
    CHECK(ok_addr(&p, "::8.8.8.8"));
    CHECK(ok_addr(&p, "::ffff:0:93.184.216.34"));
    CHECK(ok_addr(&p, "::1:0:0:0:1")); /* not an embedding: an ordinary address */
    CHECK(!ok_addr(&p, "::"));
    CHECK(!ok_addr(&p, "::1"));
    CHECK(bd_webhook_allow(&p, "10.0.0.0/8"));
    CHECK(ok_addr(&p, "::10.0.0.1"));
    CHECK(ok_addr(&p, "::ffff:0:10.9.9.9"));
    CHECK(!ok_addr(&p, "::ffff:0:127.0.0.1"));
    CHECK(bd_webhook_allow(&p, "::1/128")); /* allowed as written, not as 0.0.0.1 */
    CHECK(ok_addr(&p, "::1"));
    CHECK(!ok_addr(&p, "::0.0.0.2"));
}

TEST(test_allow_opens_exactly_its_range)
{
    bd_webhook_policy p = {0};
    CHECK(bd_webhook_allow(&p, "127.0.0.0/8"));
    CHECK(bd_webhook_allow(&p, "10.1.2.3"));
    CHECK(bd_webhook_allow(&p, "fd00:1::/32"));
    CHECK(ok_addr(&p, "127.0.0.1"));
    CHECK(ok_addr(&p, "::ffff:127.0.0.9"));
    CHECK(ok_addr(&p, "10.1.2.3"));
    CHECK(!ok_addr(&p, "10.1.2.4"));
    CHECK(ok_addr(&p, "fd00:1:ffff::1"));
    CHECK(!ok_addr(&p, "fd00:2::1"));
    CHECK(!ok_addr(&p, "::1"));
    const char *bad[] = {"",
                         "/8",
                         "127.0.0.0/33",
                         "::/129",
                         "10.0.0.0/",
                         "10.0.0.0/-1",
                         "10.0.0.0/8x",
                         "example.com",
                         "10.0.0.0/8/8"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (bd_webhook_allow(&p, bad[i]))
            TEST_FAIL("'%s' taken", bad[i]);
}

TEST(test_url_forms)
{
    bd_webhook_url u;
    const char *why;
    CHECK_INT(bd_webhook_url_parse(bd_slice_from("https://h.example/x?y=1"), &u, &why), BD_OK);
    CHECK_STR(u.host, "h.example");
    CHECK_INT(u.port, 443);
    CHECK(u.https);
    CHECK_INT(bd_webhook_url_parse(bd_slice_from("HTTP://[::1]:8080/p"), &u, &why), BD_OK);
    CHECK_STR(u.host, "::1");
    CHECK_INT(u.port, 8080);
    CHECK_INT(bd_webhook_url_parse(bd_slice_from("http://127.0.0.1:9"), &u, &why), BD_OK);
    CHECK_INT(u.port, 9);
    const char *bad[] = {"ftp://h/",       "http://",           "http:///x",      "http://u:p@h/",
                         "http://h:0/",    "http://h:65536/",   "http://h:/",     "http://h/a b",
                         "http://h/#frag", "http://[::1/",      "http://[::1]x/", "gopher://h",
                         "http://h:80a/",  "file:///etc/passwd"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        why = NULL;
        if (bd_webhook_url_parse(bd_slice_from(bad[i]), &u, &why) != BD_ERR_INVALID || !why)
            TEST_FAIL("'%s' taken", bad[i]);
    }
    char longer[BD_WEBHOOK_URL_MAX + 2];
    memcpy(longer, "http://h/", 9);
    memset(longer + 9, 'a', sizeof longer - 10);
    longer[sizeof longer - 1] = '\0';
    CHECK_INT(bd_webhook_url_parse(bd_slice_from(longer), &u, &why), BD_ERR_INVALID);
}

static bd_result host_check(const bd_webhook_policy *p, const char *url)
{
    bd_webhook_url u;
    const char *why;
    if (bd_webhook_url_parse(bd_slice_from(url), &u, &why) != BD_OK)
        TEST_FAIL("bad test url %s", url);
    return bd_webhook_check_host(p, &u, &why);
}

TEST(test_adding_checks_addresses_and_localhost_without_a_lookup)
{
    bd_webhook_policy p = {0};
    const char *refused[] = {
        "http://127.0.0.1/",   "http://2130706433/",    "http://0x7f.1/",
        "http://[::1]/",       "http://localhost/",     "http://LocalHost./",
        "http://a.localhost/", "http://10.0.0.1:8080/", "http://[::ffff:169.254.169.254]/",
        "http://[::169.254.169.254]/", "http://[::ffff:0:169.254.169.254]/"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        if (host_check(&p, refused[i]) != BD_ERR_INVALID)
            TEST_FAIL("%s taken", refused[i]);
    /* names are checked at delivery: no lookup here, even of a name that cannot resolve */
    CHECK_INT(host_check(&p, "http://hooks.invalid/"), BD_OK);
    CHECK_INT(host_check(&p, "http://93.184.216.34/"), BD_OK);
    CHECK_INT(host_check(&p, "http://notlocalhost/"), BD_OK);
    CHECK(bd_webhook_allow(&p, "127.0.0.0/8"));
    CHECK_INT(host_check(&p, "http://127.0.0.1/"), BD_OK);
    CHECK_INT(host_check(&p, "http://localhost/"), BD_ERR_INVALID); /* ::1 too */
    CHECK(bd_webhook_allow(&p, "::1"));
    CHECK_INT(host_check(&p, "http://localhost/"), BD_OK);
}

TEST(test_signature_is_hmac_of_timestamp_dot_body)
{
    char sig[68];
    bd_webhook_sign(bd_slice_from("key"), 1700000000, bd_slice_from("{\"a\":1}"), sig);
    /* python3 -c 'import hmac,hashlib; print(hmac.new(b"key", b"1700000000.{\"a\":1}",
     *   hashlib.sha256).hexdigest())' */
    CHECK_STR(sig, "v1=a438e398bfafc57e4396bb7fc2304422f0f768e965d073ca313cb52e22e6ad03");
}

TEST(test_retry_delays_double_to_an_hour)
{
    CHECK_INT(bd_webhook_retry_delay_ms(1), 1000);
    CHECK_INT(bd_webhook_retry_delay_ms(2), 2000);
    CHECK_INT(bd_webhook_retry_delay_ms(3), 4000);
    CHECK_INT(bd_webhook_retry_delay_ms(12), 2048000);
    CHECK_INT(bd_webhook_retry_delay_ms(13), 3600000);
    CHECK_INT(bd_webhook_retry_delay_ms(1000), 3600000);
}

TEST(test_watch_spec_normalises_like_search)
{
    uint8_t secret[BD_SECRET_LEN] = {1};
    bd_watch_spec w;
    const char *why;
    CHECK_INT(bd_watch_spec_parse(secret, bd_slice_from("Email"), bd_slice_from(" A@Example.COM "),
                                  &w, &why),
              BD_OK);
    CHECK_INT(w.type, BD_FIELD_EMAIL);
    CHECK_STR(w.key, "a@example.com");
    CHECK_INT(bd_watch_spec_parse(secret, bd_slice_from("phonenumber"),
                                  bd_slice_from("+1 (555) 010-9999"), &w, &why),
              BD_OK);
    CHECK_INT(w.type, BD_FIELD_PHONE);
    CHECK_STR(w.key, "15550109999");
    CHECK_INT(bd_watch_spec_parse(secret, bd_slice_from("bin"), bd_slice_from(" 411111"), &w, &why),
              BD_OK);
    CHECK_INT(w.type, BD_WATCH_BIN);
    CHECK_STR(w.key, "411111");
    CHECK_STR(bd_watch_type_name(w.type), "bin");
    CHECK_INT(
        bd_watch_spec_parse(secret, bd_slice_from("password"), bd_slice_from("hunter22"), &w, &why),
        BD_OK);
    uint8_t mac[BD_MAC_LEN];
    char hex[2 * BD_MAC_LEN + 1];
    bd_keyed_hash(secret, "password", "hunter22", 8, mac);
    sodium_bin2hex(hex, sizeof hex, mac, sizeof mac);
    CHECK_STR(w.key, hex);
    CHECK_STR(w.shown, "******22");
    CHECK_INT(bd_watch_spec_parse(secret, bd_slice_from("social_security_number"),
                                  bd_slice_from("123-45-6789"), &w, &why),
              BD_OK);
    CHECK_STR(w.shown, "*******89");
    CHECK_INT(bd_watch_spec_parse(secret, bd_slice_from("bin"), bd_slice_from("41111"), &w, &why),
              BD_ERR_INVALID);
    CHECK_INT(bd_watch_spec_parse(secret, bd_slice_from("bin"), bd_slice_from("41111a"), &w, &why),
              BD_ERR_INVALID);
    CHECK_INT(bd_watch_spec_parse(secret, bd_slice_from("shoe"), bd_slice_from("9"), &w, &why),
              BD_ERR_INVALID);
    CHECK_INT(bd_watch_spec_parse(secret, bd_slice_from("email"), bd_slice_from("nope"), &w, &why),
              BD_ERR_INVALID);
    CHECK(why != NULL);
}

int main(void)
{
    if (sodium_init() < 0)
        return 1;
    RUN(test_internal_ranges_are_refused_and_public_ones_pass);
    RUN(test_ipv4_inside_ipv6_is_judged_as_that_ipv4);
    RUN(test_allow_opens_exactly_its_range);
    RUN(test_url_forms);
    RUN(test_adding_checks_addresses_and_localhost_without_a_lookup);
    RUN(test_signature_is_hmac_of_timestamp_dot_body);
    RUN(test_retry_delays_double_to_an_hour);
    RUN(test_watch_spec_normalises_like_search);
    return TEST_EXIT();
}
