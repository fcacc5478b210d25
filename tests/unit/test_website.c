/* Tests for a website's host as a searchable key (ingest/website.h) and its place among the
 * identity types (website_domain, ingest/normalize.h). */
#include "ingest/normalize.h"
#include "ingest/website.h"

#include "test.h"

static char out[BD_NORM_MAX + 1];

/* The host of v, or "INVALID: why" when it has none. */
static const char *host(const char *v)
{
    static char shown[BD_NORM_MAX + 64];
    size_t n = 12345;
    const char *why = bd_website_host((bd_slice){v, strlen(v)}, out, &n);
    if (why) {
        if (n != 0 || out[0] != '\0')
            return "WRONG-ERROR";
        snprintf(shown, sizeof shown, "INVALID: %s", why);
        return strncmp(why, "a website domain", 16) == 0 ? "INVALID" : shown;
    }
    return n == strlen(out) ? out : "WRONG-LENGTH";
}

TEST(test_url_gives_its_lower_cased_host)
{
    CHECK_STR(host("https://WWW.Example.COM/login?next=/x#top"), "www.example.com");
    CHECK_STR(host("http://example.com"), "example.com");
    CHECK_STR(host("  https://shop.example.org/  "), "shop.example.org");
    CHECK_STR(host("ftp+ssh://files.example.net/a"), "files.example.net");
    CHECK_STR(host("//cdn.example.com/lib.js"), "cdn.example.com");
}

TEST(test_user_info_port_and_trailing_dot_are_dropped)
{
    CHECK_STR(host("https://user:p%40ss@Accounts.Example.com:8443/signin"),
              "accounts.example.com");
    CHECK_STR(host("android://KeyHash==@com.example.app/"), "com.example.app");
    CHECK_STR(host("example.com:443"), "example.com");
    CHECK_STR(host("https://example.com.:80/"), "example.com");
    CHECK_STR(host("mail.example.com"), "mail.example.com");
    CHECK_STR(host("192.0.2.10:8080"), "192.0.2.10");
}

TEST(test_non_ascii_host_is_given_its_idna_ascii_form)
{
    CHECK_STR(host("https://bücher.example/"), "xn--bcher-kva.example");
    CHECK_STR(host("BÜCHER.example"), "xn--bcher-kva.example"); /* UTS #46 maps the case */
    CHECK_STR(host("https://xn--bcher-kva.example/"), "xn--bcher-kva.example");
    CHECK_STR(host("http://пример.рф/вход"), "xn--e1afmkfd.xn--p1ai");
    CHECK_STR(host("faß.de"), "xn--fa-hia.de"); /* non-transitional: ß stays */
}

TEST(test_what_is_not_a_host_name_has_no_website_domain)
{
    CHECK_STR(host(""), "INVALID");
    CHECK_STR(host("https://"), "INVALID");
    CHECK_STR(host("localhost"), "INVALID");          /* one label */
    CHECK_STR(host("http://under_score.example/"), "INVALID");
    CHECK_STR(host("-bad.example"), "INVALID");
    CHECK_STR(host("bad-.example"), "INVALID");
    CHECK_STR(host("a..example"), "INVALID");
    CHECK_STR(host("https://[2001:db8::1]:443/"), "INVALID");
    CHECK_STR(host("https://exa mple.com/"), "INVALID");
    CHECK_STR(host("https://\xff\xfe.example/"), "INVALID");
    char label[80];
    memset(label, 'a', 64);
    memcpy(label + 64, ".example", 9);
    CHECK_STR(host(label), "INVALID"); /* a label of 64 */
    CHECK_STR(host(label + 1), label + 1); /* ...and one of 63 is fine */
}

TEST(test_host_longer_than_253_bytes_is_refused)
{
    char h[300];
    size_t n = 0;
    while (n < 250) {
        memcpy(h + n, "abcdefghi.", 10);
        n += 10;
    }
    memcpy(h + n, "com", 4); /* 253 bytes */
    CHECK_INT((int)strlen(h), 253);
    CHECK_STR(host(h), h);
    h[n] = 'x';
    memcpy(h + n + 1, "com", 4); /* 254 */
    CHECK_STR(host(h), "INVALID");
}

TEST(test_website_domain_is_the_tenth_identity_type)
{
    bd_id_type t = BD_ID_COUNT;
    CHECK(bd_id_type_parse(bd_slice_from("Website_Domain"), &t));
    CHECK_INT(t, BD_ID_WEBSITE_DOMAIN);
    CHECK_INT(BD_ID_WEBSITE_DOMAIN, 9);
    CHECK_STR(bd_id_type_name(BD_ID_WEBSITE_DOMAIN), "website_domain");
    size_t n;
    const char *why = NULL;
    CHECK_INT(bd_normalize(BD_ID_WEBSITE_DOMAIN, bd_slice_from("https://Bücher.Example:81/x"),
                           out, &n, &why),
              BD_OK);
    CHECK_STR(out, "xn--bcher-kva.example");
    CHECK_INT(bd_normalize(BD_ID_WEBSITE_DOMAIN, bd_slice_from("nope"), out, &n, &why),
              BD_ERR_INVALID);
    CHECK_STR(why, "a website domain must be a host name like example.com, or a URL whose "
                   "host is one");
    CHECK_INT(bd_normalize(BD_ID_WEBSITE_DOMAIN, (bd_slice){"a.com\0x", 7}, out, &n, &why),
              BD_ERR_INVALID);
}

int main(void)
{
    RUN(test_url_gives_its_lower_cased_host);
    RUN(test_user_info_port_and_trailing_dot_are_dropped);
    RUN(test_non_ascii_host_is_given_its_idna_ascii_form);
    RUN(test_what_is_not_a_host_name_has_no_website_domain);
    RUN(test_host_longer_than_253_bytes_is_refused);
    RUN(test_website_domain_is_the_tenth_identity_type);
    return TEST_EXIT();
}
