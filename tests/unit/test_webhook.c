/* src/webhook/ and the watch spec: destination policy (CIDR, blocked ranges, --webhook-allow),
 * URL form, the signature against an independently computed value, the retry schedule, and
 * a watch's type and value normalised as breach-search normalises them; the Slack, Teams
 * and Splunk HEC bodies byte for byte, the account masked, the URL shown without its token. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sodium.h>
#include <string.h>

#include "ingest/watch_spec.h"
#include "test.h"
#include "core/buf.h"
#include "webhook/deliver.h"
#include "webhook/formats.h"
#include "webhook/payload.h"
#include "webhook/policy.h"
#include "webhook/send.h"

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


/* An alert of an email watch in a breach whose name needs Slack's escaping. */
static bd_alert_row sample_alert(void)
{
    return (bd_alert_row){
        .event_id = bd_slice_from("5b0c8e52-2c4e-4c1a-9a4f-0d2d7c1e9b11"),
        .watch_id = 42,
        .watch_type = BD_FIELD_EMAIL,
        .watch_shown = bd_slice_from("alice@example.com"),
        .breach_uuid = bd_slice_from("22222222-2222-4222-8222-222222222222"),
        .breach_name = bd_slice_from("Beta<&>Shop"),
        .matched = 2,
        .identities = bd_slice_from("[\"alice@example.com\"]"),
        .created_at = 1767225600, /* 2026-01-01T00:00:00Z */
    };
}

typedef void (*writer)(bd_json *w, const bd_alert_row *a, const char *console_url);

static void check_body(writer fn, const bd_alert_row *a, const char *console_url,
                       const char *want)
{
    bd_buf out;
    bd_buf_init(&out, 1u << 20);
    bd_json w;
    bd_json_init(&w, &out);
    fn(&w, a, console_url);
    CHECK_INT(bd_json_result(&w), BD_OK);
    CHECK_INT(bd_buf_append(&out, "", 1), BD_OK);
    CHECK_STR(out.data, want);
    bd_buf_free(&out);
}

static void hec(bd_json *w, const bd_alert_row *a, const char *console_url)
{
    (void)console_url;
    bd_alert_write_hec(w, a);
}

TEST(test_slack_body_is_text_and_block_kit_with_the_account_masked)
{
    bd_alert_row a = sample_alert();
    check_body(bd_alert_write_slack, &a, "https://breachd.example.com/console/",
               "{\"text\":\"breachd: email a***@example.com found in Beta<&>Shop (2 records)\","
               "\"blocks\":[{\"type\":\"header\",\"text\":{\"type\":\"plain_text\","
               "\"text\":\"Breach exposure found\"}},{\"type\":\"section\",\"fields\":["
               "{\"type\":\"mrkdwn\",\"text\":\"*Identity type*\\nemail\"},"
               "{\"type\":\"mrkdwn\",\"text\":\"*Account*\\na***@example.com\"},"
               "{\"type\":\"mrkdwn\",\"text\":\"*Breach*\\nBeta&lt;&amp;&gt;Shop\"},"
               "{\"type\":\"mrkdwn\",\"text\":\"*Date*\\n2026-01-01 00:00 UTC\"},"
               "{\"type\":\"mrkdwn\",\"text\":\"*Records*\\n2\"}]},"
               "{\"type\":\"actions\",\"elements\":[{\"type\":\"button\",\"text\":{\"type\":"
               "\"plain_text\",\"text\":\"Open the breachd console\"},"
               "\"url\":\"https://breachd.example.com/console/\"}]},"
               "{\"type\":\"context\",\"elements\":[{\"type\":\"mrkdwn\",\"text\":"
               "\"*breachd*\\nevent 5b0c8e52-2c4e-4c1a-9a4f-0d2d7c1e9b11\"}]}]}");
    /* a card watch, no console address: no button */
    a.watch_type = BD_WATCH_BIN;
    a.watch_shown = bd_slice_from("411111");
    a.matched = 1;
    check_body(bd_alert_write_slack, &a, NULL,
               "{\"text\":\"breachd: 1 new card of BIN 411111\","
               "\"blocks\":[{\"type\":\"header\",\"text\":{\"type\":\"plain_text\","
               "\"text\":\"Breach exposure found\"}},{\"type\":\"section\",\"fields\":["
               "{\"type\":\"mrkdwn\",\"text\":\"*Identity type*\\nbin\"},"
               "{\"type\":\"mrkdwn\",\"text\":\"*Account*\\n411111\"},"
               "{\"type\":\"mrkdwn\",\"text\":\"*Breach*\\ncards\"},"
               "{\"type\":\"mrkdwn\",\"text\":\"*Date*\\n2026-01-01 00:00 UTC\"},"
               "{\"type\":\"mrkdwn\",\"text\":\"*Cards*\\n1\"}]},"
               "{\"type\":\"context\",\"elements\":[{\"type\":\"mrkdwn\",\"text\":"
               "\"*breachd*\\nevent 5b0c8e52-2c4e-4c1a-9a4f-0d2d7c1e9b11\"}]}]}");
}

TEST(test_teams_body_is_an_adaptive_card_in_a_message)
{
    bd_alert_row a = sample_alert();
    check_body(bd_alert_write_teams, &a, "https://breachd.example.com/console/",
               "{\"type\":\"message\",\"attachments\":[{\"contentType\":"
               "\"application/vnd.microsoft.card.adaptive\",\"contentUrl\":null,\"content\":{"
               "\"$schema\":\"http://adaptivecards.io/schemas/adaptive-card.json\","
               "\"type\":\"AdaptiveCard\",\"version\":\"1.4\",\"body\":["
               "{\"type\":\"TextBlock\",\"text\":\"Breach exposure found\",\"weight\":\"Bolder\","
               "\"size\":\"Medium\",\"wrap\":true},"
               "{\"type\":\"TextBlock\",\"text\":\"breachd: email a***@example.com found in "
               "Beta<&>Shop (2 records)\",\"wrap\":true},"
               "{\"type\":\"FactSet\",\"facts\":["
               "{\"title\":\"Identity type\",\"value\":\"email\"},"
               "{\"title\":\"Account\",\"value\":\"a***@example.com\"},"
               "{\"title\":\"Breach\",\"value\":\"Beta<&>Shop\"},"
               "{\"title\":\"Date\",\"value\":\"2026-01-01 00:00 UTC\"},"
               "{\"title\":\"Records\",\"value\":\"2\"}]}],"
               "\"actions\":[{\"type\":\"Action.OpenUrl\",\"title\":\"Open the breachd console\","
               "\"url\":\"https://breachd.example.com/console/\"}]}}]}");
}

TEST(test_hec_body_is_an_event_holding_the_alert)
{
    bd_alert_row a = sample_alert();
    check_body(hec, &a, NULL,
               "{\"time\":1767225600,\"source\":\"breachd\",\"sourcetype\":\"breachd:alert\","
               "\"event\":{\"event_id\":\"5b0c8e52-2c4e-4c1a-9a4f-0d2d7c1e9b11\","
               "\"event\":\"watch.match\",\"created_at\":\"2026-01-01T00:00:00Z\","
               "\"watch\":{\"id\":42,\"type\":\"email\",\"value\":\"alice@example.com\"},"
               "\"breach\":{\"id\":\"22222222-2222-4222-8222-222222222222\","
               "\"name\":\"Beta<&>Shop\"},\"counts\":{\"records\":2},"
               "\"identities\":[\"alice@example.com\"]}}");
}

TEST(test_formats_masks_and_shown_urls)
{
    int f = -1;
    CHECK(bd_watch_format_parse(bd_slice_from("splunk-hec"), &f));
    CHECK_INT(f, BD_WATCH_FORMAT_SPLUNK_HEC);
    CHECK(bd_watch_format_parse(bd_slice_from("json"), &f));
    CHECK_INT(f, BD_WATCH_FORMAT_JSON);
    CHECK(!bd_watch_format_parse(bd_slice_from("Slack"), &f));
    CHECK(bd_watch_format_parse(bd_slice_from("email"), &f));
    CHECK_INT(f, BD_WATCH_FORMAT_EMAIL);
    CHECK(!bd_watch_format_needs_secret(BD_WATCH_FORMAT_EMAIL));
    CHECK(!bd_watch_format_parse(bd_slice_from("mail"), &f));
    CHECK_STR(bd_watch_format_name(BD_WATCH_FORMAT_TEAMS), "teams");
    CHECK(bd_watch_format_needs_secret(BD_WATCH_FORMAT_JSON));
    CHECK(bd_watch_format_needs_secret(BD_WATCH_FORMAT_SPLUNK_HEC));
    CHECK(!bd_watch_format_needs_secret(BD_WATCH_FORMAT_SLACK));
    char m[64];
    bd_alert_account_masked(BD_FIELD_EMAIL, bd_slice_from("bob@example.org"), m, sizeof m);
    CHECK_STR(m, "b***@example.org");
    bd_alert_account_masked(BD_FIELD_PHONE, bd_slice_from("15550109999"), m, sizeof m);
    CHECK_STR(m, "1***99");
    bd_alert_account_masked(BD_FIELD_USERNAME, bd_slice_from("bob"), m, sizeof m);
    CHECK_STR(m, "***");
    bd_alert_account_masked(BD_FIELD_EMAIL_DOMAIN, bd_slice_from("example.org"), m, sizeof m);
    CHECK_STR(m, "example.org");
    bd_alert_account_masked(BD_FIELD_PASSWORD, bd_slice_from("******22"), m, sizeof m);
    CHECK_STR(m, "******22");
    char buf[128];
    bd_slice hook = bd_slice_from("https://hooks.slack.com/services/T000/B000/XXXXSECRET");
    bd_slice s = bd_watch_url_shown(BD_WATCH_FORMAT_SLACK, hook, buf, sizeof buf);
    CHECK(s.len == strlen("https://hooks.slack.com/...") &&
          memcmp(s.ptr, "https://hooks.slack.com/...", s.len) == 0);
    s = bd_watch_url_shown(BD_WATCH_FORMAT_TEAMS,
                           bd_slice_from("https://prod.westeurope.logic.azure.com:443/workflows/"
                                         "abc/triggers/manual/paths/invoke?sig=SECRET"),
                           buf, sizeof buf);
    CHECK(s.len == strlen("https://prod.westeurope.logic.azure.com:443/...") &&
          memcmp(s.ptr, "https://prod.westeurope.logic.azure.com:443/...", s.len) == 0);
    s = bd_watch_url_shown(BD_WATCH_FORMAT_JSON, hook, buf, sizeof buf);
    CHECK(s.ptr == hook.ptr && s.len == hook.len);
}

TEST(test_mail_is_multipart_alternative_text_and_html)
{
    bd_alert_row a = sample_alert();
    bd_buf out;
    bd_buf_init(&out, 1u << 20);
    CHECK_INT(bd_alert_write_mail(&out, &a, "alerts@example.org", bd_slice_from("soc@example.net"),
                                  "https://breachd.example.com/console/"),
              BD_OK);
    CHECK_INT(bd_buf_append(&out, "", 1), BD_OK);
    CHECK_STR(out.data,
               "From: breachd <alerts@example.org>\r\n"
               "To: <soc@example.net>\r\n"
               "Subject: breachd: email a***@example.com found in Beta<&>Shop (2 records)\r\n"
               "Date: Thu, 01 Jan 2026 00:00:00 +0000\r\n"
               "Message-ID: <5b0c8e52-2c4e-4c1a-9a4f-0d2d7c1e9b11@breachd>\r\n"
               "X-Breachd-Event-Id: 5b0c8e52-2c4e-4c1a-9a4f-0d2d7c1e9b11\r\n"
               "MIME-Version: 1.0\r\n"
               "Content-Type: multipart/alternative; boundary=\"breachd-5b0c8e52-2c4e-4c1a-9a4f-0d2d7c1e9b11\"\r\n"
               "\r\n"
               "--breachd-5b0c8e52-2c4e-4c1a-9a4f-0d2d7c1e9b11\r\n"
               "Content-Type: text/plain; charset=utf-8\r\n"
               "Content-Transfer-Encoding: 8bit\r\n"
               "\r\n"
               "Breach exposure found\r\n"
               "\r\n"
               "Identity type: email\r\n"
               "Account: a***@example.com\r\n"
               "Breach: Beta<&>Shop\r\n"
               "Date: 2026-01-01 00:00 UTC\r\n"
               "Records: 2\r\n"
               "\r\n"
               "Open the breachd console: https://breachd.example.com/console/\r\n"
               "Event: 5b0c8e52-2c4e-4c1a-9a4f-0d2d7c1e9b11\r\n"
               "\r\n"
               "--breachd-5b0c8e52-2c4e-4c1a-9a4f-0d2d7c1e9b11\r\n"
               "Content-Type: text/html; charset=utf-8\r\n"
               "Content-Transfer-Encoding: 8bit\r\n"
               "\r\n"
               "<!DOCTYPE html>\r\n"
               "<html><body>\r\n"
               "<h2>Breach exposure found</h2>\r\n"
               "<table>\r\n"
               "<tr><th align=\"left\">Identity type</th><td>email</td></tr>\r\n"
               "<tr><th align=\"left\">Account</th><td>a***@example.com</td></tr>\r\n"
               "<tr><th align=\"left\">Breach</th><td>Beta&lt;&amp;&gt;Shop</td></tr>\r\n"
               "<tr><th align=\"left\">Date</th><td>2026-01-01 00:00 UTC</td></tr>\r\n"
               "<tr><th align=\"left\">Records</th><td>2</td></tr>\r\n"
               "</table>\r\n"
               "<p><a href=\"https://breachd.example.com/console/\">Open the breachd console</a></p>\r\n"
               "<p>Event 5b0c8e52-2c4e-4c1a-9a4f-0d2d7c1e9b11</p>\r\n"
               "</body></html>\r\n"
               "\r\n"
               "--breachd-5b0c8e52-2c4e-4c1a-9a4f-0d2d7c1e9b11--\r\n");
    /* a breach name with a line break and non-ASCII: one header, encoded words of at most 75
     * characters (45 bytes each, not cut inside the é), the second on a folded line */
    bd_buf_reset(&out);
    a.breach_name = bd_slice_from("B\xc3\xa9ta\r\nBcc: x@evil");
    CHECK_INT(bd_alert_write_mail(&out, &a, "alerts@example.org", bd_slice_from("soc@example.net"),
                                  NULL),
              BD_OK);
    CHECK_INT(bd_buf_append(&out, "", 1), BD_OK);
    CHECK(strstr(out.data,
                 "\r\nSubject: =?utf-8?B?YnJlYWNoZDogZW1haWwgYSoqKkBleGFtcGxlLmNvbSBmb3VuZCBpbiBCw6l0?="
                 "\r\n =?utf-8?B?YSAgQmNjOiB4QGV2aWwgKDIgcmVjb3Jkcyk=?=\r\nDate: ") != NULL);
    CHECK(strstr(out.data, "\nBcc:") == NULL);
    CHECK(strstr(out.data, "Breach: B\xc3\xa9ta  Bcc: x@evil\r\n") != NULL);
    CHECK(strstr(out.data, "console") == NULL);
    bd_buf_free(&out);
}

TEST(test_mailto_and_smtp_urls)
{
    bd_slice addr;
    const char *why;
    CHECK_INT(bd_watch_mailto_parse(bd_slice_from("mailto:soc@example.net"), &addr, &why), BD_OK);
    CHECK(addr.len == 15 && memcmp(addr.ptr, "soc@example.net", 15) == 0);
    const char *bad[] = {"soc@example.net", "mailto:", "mailto:soc", "mailto:@example.net",
                         "mailto:soc@", "mailto:a@b@c", "mailto:a b@c", "mailto:a@b?cc=x@y",
                         "mailto:a@b,c@d", "mailto:a@b\r\nBcc: c@d", "https://a@b/"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (bd_watch_mailto_parse(bd_slice_from(bad[i]), &addr, &why) != BD_ERR_INVALID || !why)
            TEST_FAIL("%s taken", bad[i]);
    bd_smtp_config c;
    CHECK_INT(bd_smtp_parse("smtp://mail.example.org", false, &c, &why), BD_OK);
    CHECK(!c.tls && c.port == 25 && strcmp(c.host, "mail.example.org") == 0);
    CHECK_INT(bd_smtp_parse("smtps://mail.example.org:2465/", false, &c, &why), BD_OK);
    CHECK(c.tls && c.port == 2465);
    CHECK_INT(bd_smtp_parse("smtps://[2001:db8::1]", false, &c, &why), BD_OK);
    CHECK(c.port == 465 && strcmp(c.host, "2001:db8::1") == 0);
    CHECK_INT(bd_smtp_parse("smtp://127.0.0.1:2525", true, &c, &why), BD_OK);
    CHECK(c.insecure && c.port == 2525);
    CHECK_INT(bd_smtp_parse("smtp://[::1]:2525", true, &c, &why), BD_OK);
    CHECK_INT(bd_smtp_parse("smtp://localhost:2525", true, &c, &why), BD_OK);
    /* without STARTTLS only on this host; no credentials or paths in the url */
    CHECK_INT(bd_smtp_parse("smtp://mail.example.org", true, &c, &why), BD_ERR_INVALID);
    CHECK_INT(bd_smtp_parse("smtps://127.0.0.1", true, &c, &why), BD_ERR_INVALID);
    CHECK_INT(bd_smtp_parse("smtp://u:p@mail.example.org", false, &c, &why), BD_ERR_INVALID);
    CHECK_INT(bd_smtp_parse("smtp://mail.example.org/x", false, &c, &why), BD_ERR_INVALID);
    CHECK_INT(bd_smtp_parse("http://mail.example.org", false, &c, &why), BD_ERR_INVALID);
    CHECK_INT(bd_smtp_parse("smtp://mail.example.org:0", false, &c, &why), BD_ERR_INVALID);
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
    RUN(test_slack_body_is_text_and_block_kit_with_the_account_masked);
    RUN(test_teams_body_is_an_adaptive_card_in_a_message);
    RUN(test_hec_body_is_an_event_holding_the_alert);
    RUN(test_formats_masks_and_shown_urls);
    RUN(test_mail_is_multipart_alternative_text_and_html);
    RUN(test_mailto_and_smtp_urls);
    return TEST_EXIT();
}
