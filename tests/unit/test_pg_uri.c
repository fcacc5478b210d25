/* Connection URIs in messages: the password leaves, everything else stays. */
#include <string.h>

#include "store/pg/uri.h"
#include "test.h"

static const char *redact(const char *uri)
{
    static char out[256];
    CHECK_INT(bd_uri_redact(uri, out, sizeof out), BD_OK);
    return out;
}

static const char *scrub(const char *uri, const char *text)
{
    static char out[256];
    CHECK_INT(bd_uri_scrub(uri, text, out, sizeof out), BD_OK);
    return out;
}

TEST(test_pg_uri_redact_drops_userinfo_password)
{
    CHECK_STR(redact("postgresql://alice:s3cret@db.example:5432/breachd"),
              "postgresql://alice@db.example:5432/breachd");
    CHECK_STR(redact("postgres://alice:@db/x"), "postgres://alice@db/x");
    CHECK_STR(redact("POSTGRESQL://a:b@h"), "POSTGRESQL://a@h");
}

TEST(test_pg_uri_redact_keeps_uri_without_password)
{
    CHECK_STR(redact("postgresql:///breachd?host=/run/postgresql&user=breachd"),
              "postgresql:///breachd?host=/run/postgresql&user=breachd");
    CHECK_STR(redact("postgresql://alice@db/x"), "postgresql://alice@db/x");
    CHECK_STR(redact("postgresql://db:5432"), "postgresql://db:5432");
}

TEST(test_pg_uri_redact_drops_password_parameter_anywhere_in_query)
{
    CHECK_STR(redact("postgresql:///d?password=x&host=/tmp"), "postgresql:///d?host=/tmp");
    CHECK_STR(redact("postgresql:///d?host=/tmp&password=x"), "postgresql:///d?host=/tmp");
    CHECK_STR(redact("postgresql:///d?host=/tmp&password=x&user=u"),
              "postgresql:///d?host=/tmp&user=u");
    CHECK_STR(redact("postgresql:///d?password=x"), "postgresql:///d");
    CHECK_STR(redact("postgresql:///d?PASSWORD=x"), "postgresql:///d");
}

TEST(test_pg_uri_redact_decodes_query_keys_like_libpq)
{
    /* %70 is 'p': libpq reads this key as "password" */
    CHECK_STR(redact("postgresql:///d?%70assword=x&user=u"), "postgresql:///d?user=u");
}

TEST(test_pg_uri_redact_ends_userinfo_where_libpq_does)
{
    /* '@' after a '/' belongs to the path, so there is no user information to cut */
    CHECK_STR(redact("postgresql://h/db@x"), "postgresql://h/db@x");
    /* a '?' inside the password does not end the user information for libpq */
    CHECK_STR(redact("postgresql://u:p?w@h/db"), "postgresql://u@h/db");
}

TEST(test_pg_uri_redact_hides_whole_non_uri_strings)
{
    CHECK_STR(redact("host=h password=x"), "(connection string)");
}

TEST(test_pg_uri_redact_cut_output_is_terminated_and_reported)
{
    char out[12];
    CHECK_INT(bd_uri_redact("postgresql://u:pw@host/db", out, sizeof out), BD_ERR_LIMIT);
    CHECK_STR(out, "postgresql:");
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

int main(void)
{
    RUN(test_pg_uri_redact_drops_userinfo_password);
    RUN(test_pg_uri_redact_keeps_uri_without_password);
    RUN(test_pg_uri_redact_drops_password_parameter_anywhere_in_query);
    RUN(test_pg_uri_redact_decodes_query_keys_like_libpq);
    RUN(test_pg_uri_redact_ends_userinfo_where_libpq_does);
    RUN(test_pg_uri_redact_hides_whole_non_uri_strings);
    RUN(test_pg_uri_redact_cut_output_is_terminated_and_reported);
    RUN(test_pg_uri_scrub_replaces_password_as_written_and_decoded);
    RUN(test_pg_uri_scrub_leaves_text_alone_without_password);
    return TEST_EXIT();
}
