/* libpq reasons in our messages: a password libpq quotes back is replaced. */
#include <string.h>

#include "store/pg/uri.h"
#include "test.h"

static const char *scrub(const char *uri, const char *text)
{
    static char out[256];
    CHECK_INT(pg_uri_scrub(uri, text, out, sizeof out), BD_OK);
    return out;
}

TEST(test_pg_uri_scrub_replaces_password_as_written_and_decoded)
{
    const char *uri = "postgresql://u:pa%zzss%41@h/db";
    CHECK_STR(scrub(uri, "invalid percent-encoded token: \"pa%zzss%41\""),
              "invalid percent-encoded token: \"***\"");
    CHECK_STR(scrub("postgresql://u:abc%41@h", "x abcA y"), "x *** y");
    CHECK_STR(scrub("postgresql:///d?password=hunter2", "hunter2 hunter"), "*** hunter");
}

TEST(test_pg_uri_scrub_leaves_text_alone_without_password)
{
    CHECK_STR(scrub("postgresql://u@h/db", "connection refused"), "connection refused");
    CHECK_STR(scrub("postgresql://u:@h/db", "connection refused"), "connection refused");
}

TEST(test_pg_uri_scrub_replaces_keyword_string_passwords)
{
    CHECK_STR(scrub("host=h password=hunter2 dbname=d", "x hunter2 y"), "x *** y");
    CHECK_STR(scrub("host=h password='a\\'b c'", "a\\'b c and a'b c"), "*** and ***");
    CHECK_STR(scrub("host=h sslpassword=k1 dbname=d", "key k1"), "key ***");
    CHECK_STR(scrub("host=h dbname=d", "host h"), "host h");
}

TEST(test_pg_uri_scrub_replaces_every_word_after_a_malformed_keyword_part)
{
    CHECK_STR(scrub("host=h s3cret dbname=d",
                    "missing \"=\" after \"s3cret\" in connection info string"),
              "missing \"=\" after \"***\" in connection info string");
    CHECK_STR(scrub("host=h password='open wide", "open wide"), "*** ***");
}

int main(void)
{
    RUN(test_pg_uri_scrub_replaces_password_as_written_and_decoded);
    RUN(test_pg_uri_scrub_leaves_text_alone_without_password);
    RUN(test_pg_uri_scrub_replaces_keyword_string_passwords);
    RUN(test_pg_uri_scrub_replaces_every_word_after_a_malformed_keyword_part);
    return TEST_EXIT();
}
