/* Tests for combo-list and stealer-log line splitting: line in, fields (or reason) out. */
#include "ingest/combo.h"

#include "test.h"

static char a[128], b[128], c[128];

static void copy(char *out, bd_slice s)
{
    size_t n = s.len < 127 ? s.len : 127;
    memcpy(out, s.ptr, n);
    out[n] = '\0';
}

/* Splits a combo line: NULL and a/b set, or the reason. */
static const char *combo(const char *line, char sep)
{
    bd_slice login, pw;
    a[0] = b[0] = '\0';
    const char *bad = bd_combo_split(bd_slice_from(line), sep, &login, &pw);
    if (!bad) {
        copy(a, login);
        copy(b, pw);
    }
    return bad;
}

static const char *stealer(const char *line)
{
    bd_slice site, login, pw;
    a[0] = b[0] = c[0] = '\0';
    const char *bad = bd_stealer_split(bd_slice_from(line), &site, &login, &pw);
    if (!bad) {
        copy(a, site);
        copy(b, login);
        copy(c, pw);
    }
    return bad;
}

TEST(test_combo_splits_at_the_first_separator_and_keeps_the_password_whole)
{
    static const struct {
        const char *line;
        char sep;
        const char *login, *password;
    } rows[] = {
        {"ann@example.com:hunter2", ':', "ann@example.com", "hunter2"},
        {"ann@example.com:pa:ss:word", ':', "ann@example.com", "pa:ss:word"},
        {"bob;pa;ss", ';', "bob", "pa;ss"},
        {"bob|x|y", '|', "bob", "x|y"},
        {"bob\tp\tq", '\t', "bob", "p\tq"},
        {"carol:pw\r", ':', "carol", "pw"},
        {"carol: spaced pw ", ':', "carol", " spaced pw "},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        CHECK_STR(combo(rows[i].line, rows[i].sep), NULL);
        CHECK_STR(a, rows[i].login);
        CHECK_STR(b, rows[i].password);
    }
}

TEST(test_combo_rejects_a_line_without_login_password_or_separator)
{
    CHECK_STR(combo("no-separator-here", ':'),
              "no separator on the line (login, separator, password expected)");
    CHECK_STR(combo(":pw", ':'), "the login before the separator is empty");
    CHECK_STR(combo("  :pw", ':'), "the login before the separator is empty");
    CHECK_STR(combo("bob:", ':'), "the password after the separator is empty");
    CHECK_STR(combo("bob:\r", ':'), "the password after the separator is empty");
    CHECK_STR(combo("", ':'), "no separator on the line (login, separator, password expected)");
}

TEST(test_combo_separator_is_the_first_candidate_on_most_lines)
{
    const char *t1 = "a@x.com:p;w\nb@x.com:q|w\nc@x.com;r\n";
    CHECK_INT(bd_combo_detect_separator(t1, strlen(t1)), ':');
    const char *t2 = "a@x.com;p:w\nb@x.com;q\n";
    CHECK_INT(bd_combo_detect_separator(t2, strlen(t2)), ';');
    const char *t3 = "a@x.com|p\nb|q\n";
    CHECK_INT(bd_combo_detect_separator(t3, strlen(t3)), '|');
    const char *t4 = "a@x.com\tp\n";
    CHECK_INT(bd_combo_detect_separator(t4, strlen(t4)), '\t');
    const char *t5 = "nothing\nhere\n";
    CHECK_INT(bd_combo_detect_separator(t5, strlen(t5)), 0);
    CHECK_INT(bd_combo_detect_separator("", 0), 0);
}

TEST(test_login_field_is_email_when_it_holds_an_at_sign)
{
    CHECK_STR(bd_combo_login_field(bd_slice_from("ann@example.com")), "email");
    CHECK_STR(bd_combo_login_field(bd_slice_from("ann")), "user_name");
}

TEST(test_stealer_lines_split_into_site_login_password)
{
    static const struct {
        const char *line, *site, *login, *password;
    } rows[] = {
        {"https://example.com/login:ann@example.com:pw", "example.com", "ann@example.com", "pw"},
        {"https://example.com:8443/login:ann:pw", "example.com", "ann", "pw"},
        {"https://example.com:8443:ann:pw", "example.com", "ann", "pw"},
        {"https://example.com:12345:pw", "example.com", "12345", "pw"},
        {"https://Example.COM/a?b=c#d|user|p|w", "Example.COM", "user", "p|w"},
        {"http://example.com/x user pass word", "example.com", "user", "pass word"},
        {"https://example.com\tuser\tpw", "example.com", "user", "pw"},
        {"android://key==@com.example.app/:bob:pw", "com.example.app", "bob", "pw"},
        {"http://[2001:db8::1]:8080/p:bob:pw", "2001:db8::1", "bob", "pw"},
        {"example.org:bob:pw:2", "example.org", "bob", "pw:2"},
        {"example.org|bob|pw\r", "example.org", "bob", "pw"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        CHECK_STR(stealer(rows[i].line), NULL);
        CHECK_STR(a, rows[i].site);
        CHECK_STR(b, rows[i].login);
        CHECK_STR(c, rows[i].password);
    }
}

TEST(test_stealer_rejects_lines_that_are_not_url_login_password)
{
    const char *not_url = "the line does not start with a URL (a scheme like https:// or a host)";
    CHECK_STR(stealer("bob:pw"), not_url);
    CHECK_STR(stealer("ann@example.com:pw:x"), not_url);
    CHECK_STR(stealer("localhost:bob:pw"), not_url);
    CHECK_STR(stealer("https://example.com/only"),
              "no separator after the URL (URL, login, password expected)");
    CHECK_STR(stealer("https://example.com:bob"),
              "no separator after the login (URL, login, password expected)");
    CHECK_STR(stealer("https://example.com::pw"), "the login is empty");
    CHECK_STR(stealer("https://example.com:bob:"), "the password is empty");
    CHECK_STR(stealer("https:///path:bob:pw"), "the URL has no host");
    CHECK_STR(stealer("http://[::1:bob:pw"), "the URL's IPv6 address is not closed with ']'");
    CHECK_STR(stealer(""), "the URL has no host");
}

int main(void)
{
    RUN(test_combo_splits_at_the_first_separator_and_keeps_the_password_whole);
    RUN(test_combo_rejects_a_line_without_login_password_or_separator);
    RUN(test_combo_separator_is_the_first_candidate_on_most_lines);
    RUN(test_login_field_is_email_when_it_holds_an_at_sign);
    RUN(test_stealer_lines_split_into_site_login_password);
    RUN(test_stealer_rejects_lines_that_are_not_url_login_password);
    return TEST_EXIT();
}
