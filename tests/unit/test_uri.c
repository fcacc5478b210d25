/* Store URIs shown without their passwords. */
#include "store/uri.h"
#include "test.h"

/* The redacted form of uri, in a buffer large enough for any case here. */
static const char *redact(const char *uri)
{
    static char out[256];
    CHECK(bd_uri_redact(uri, out, sizeof out));
    return out;
}

TEST(test_uri_redact_drops_the_userinfo_password)
{
    CHECK_STR(redact("postgresql://u:secret@h/db"), "postgresql://u@h/db");
    CHECK_STR(redact("postgres://u:secret@h:5432/db?sslmode=require"),
              "postgres://u@h:5432/db?sslmode=require");
    CHECK_STR(redact("postgresql://u:@h/db"), "postgresql://u@h/db");
    CHECK_STR(redact("postgresql://:secret@h/db"), "postgresql://@h/db");
}

TEST(test_uri_redact_drops_a_password_holding_at_or_slash_whole)
{
    CHECK_STR(redact("postgresql://u:se@cr/et@h/db"), "postgresql://u@h/db");
}

TEST(test_uri_redact_ends_the_userinfo_where_libpq_does)
{
    /* libpq does not end the user information at a '?': the password is "p?w" */
    CHECK_STR(redact("postgresql://u:p?w@h/db"), "postgresql://u@h/db");
    /* an '@' after the path's '/' belongs to the path: nothing to cut */
    CHECK_STR(redact("postgresql://h/db@x"), "postgresql://h/db@x");
}

TEST(test_uri_redact_drops_password_query_parameters)
{
    CHECK_STR(redact("postgresql://h/db?password=secret"), "postgresql://h/db");
    CHECK_STR(redact("postgresql://h/db?password=secret&sslmode=require"),
              "postgresql://h/db?sslmode=require");
    CHECK_STR(redact("postgresql://h/db?sslmode=require&password=secret&connect_timeout=5"),
              "postgresql://h/db?sslmode=require&connect_timeout=5");
    CHECK_STR(redact("postgresql://u:a@h/db?user=v&password=b"), "postgresql://u@h/db?user=v");
}

TEST(test_uri_redact_matches_password_names_as_libpq_reads_them)
{
    CHECK_STR(redact("postgresql://h/db?PassWord=secret"), "postgresql://h/db");
    CHECK_STR(redact("postgresql://h/db?%70assword=secret"), "postgresql://h/db");
    CHECK_STR(redact("postgresql://h/db?sslpassword=secret&passfile=/p"),
              "postgresql://h/db?passfile=/p");
    CHECK_STR(redact("postgresql://h/db?password"), "postgresql://h/db");
}

TEST(test_uri_redact_leaves_a_uri_without_password_unchanged)
{
    CHECK_STR(redact("postgresql://u@h:5432/db?sslmode=require"),
              "postgresql://u@h:5432/db?sslmode=require");
    CHECK_STR(redact("postgresql://h/db"), "postgresql://h/db");
    CHECK_STR(redact("postgresql://"), "postgresql://");
    CHECK_STR(redact("/var/lib/breachd/store.db"), "/var/lib/breachd/store.db");
    CHECK_STR(redact("store:db@x?password=y"), "store:db@x?password=y"); /* a file name */
    CHECK_STR(redact(""), "");
}

TEST(test_uri_redact_cuts_short_without_the_password_when_out_is_small)
{
    char out[16];
    CHECK(!bd_uri_redact("postgresql://u:secret@host/db", out, sizeof out));
    CHECK_STR(out, "postgresql://u@");
    CHECK(!bd_uri_redact("postgresql://u:secret@h/db", out, 0));
    char exact[20];
    CHECK(bd_uri_redact("postgresql://u:secret@h/db", exact, sizeof exact));
    CHECK_STR(exact, "postgresql://u@h/db");
}

int main(void)
{
    RUN(test_uri_redact_drops_the_userinfo_password);
    RUN(test_uri_redact_drops_a_password_holding_at_or_slash_whole);
    RUN(test_uri_redact_ends_the_userinfo_where_libpq_does);
    RUN(test_uri_redact_drops_password_query_parameters);
    RUN(test_uri_redact_matches_password_names_as_libpq_reads_them);
    RUN(test_uri_redact_leaves_a_uri_without_password_unchanged);
    RUN(test_uri_redact_cuts_short_without_the_password_when_out_is_small);
    return TEST_EXIT();
}
