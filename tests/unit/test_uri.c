/* Store URIs shown without their passwords; keyword/value strings told from file paths. */
#include <string.h>

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

TEST(test_uri_keyword_strings_and_urls_name_postgres)
{
    CHECK(bd_uri_is_postgres("postgresql://h/db"));
    CHECK(bd_uri_is_postgres("POSTGRES://h/db"));
    CHECK(bd_uri_is_postgres("host=/run/postgresql dbname=breachd"));
    CHECK(bd_uri_is_postgres("dbname=breachd"));
    CHECK(bd_uri_is_postgres("  host = h"));
    CHECK(bd_uri_is_postgres("_x1=y"));
    CHECK(bd_uri_is_postgres("password='unterminated"));
    CHECK(!bd_uri_is_postgres("/var/lib/breachd/store.db"));
    CHECK(!bd_uri_is_postgres("store.db"));
    CHECK(!bd_uri_is_postgres("./a=b.db"));
    CHECK(!bd_uri_is_postgres("/data/host=x.db"));
    CHECK(!bd_uri_is_postgres("1x=y"));
    CHECK(!bd_uri_is_postgres("a-b=c"));
    CHECK(!bd_uri_is_postgres("=x"));
    CHECK(!bd_uri_is_postgres("host"));
    CHECK(!bd_uri_is_postgres("sqlite://x"));
    CHECK(!bd_uri_is_postgres(""));
}

TEST(test_conninfo_pairs_are_read_as_libpq_reads_them)
{
    const char *p = " host = h  password='a b\\'c' x=\\ y\\ z q=";
    bd_conninfo_pair pair;
    CHECK_INT(bd_conninfo_next(&p, &pair), 1);
    CHECK_INT((int)pair.keyword_len, 4);
    CHECK(strncmp(pair.value, "h", pair.value_len) == 0 && pair.value_len == 1);
    CHECK_INT(bd_conninfo_next(&p, &pair), 1);
    CHECK(strncmp(pair.keyword, "password", pair.keyword_len) == 0);
    CHECK_INT((int)pair.value_len, 6); /* a b\'c as written */
    CHECK(strncmp(pair.value, "a b\\'c", pair.value_len) == 0);
    CHECK_INT(bd_conninfo_next(&p, &pair), 1);
    CHECK_INT((int)pair.value_len, 6); /* \ y\ z: escaped spaces stay in the value */
    CHECK(strncmp(pair.value, "\\ y\\ z", pair.value_len) == 0);
    CHECK_INT(bd_conninfo_next(&p, &pair), 1);
    CHECK_INT((int)pair.value_len, 0); /* q= : an empty value */
    CHECK_INT(bd_conninfo_next(&p, &pair), 0);
    p = "host=h word";
    CHECK_INT(bd_conninfo_next(&p, &pair), 1);
    CHECK_INT(bd_conninfo_next(&p, &pair), -1);
    CHECK_STR(p, "word");
    p = "password='open";
    CHECK_INT(bd_conninfo_next(&p, &pair), -1);
    CHECK_STR(p, "password='open");
}

TEST(test_uri_redact_drops_keyword_string_passwords)
{
    CHECK_STR(redact("host=h password=secret dbname=d"), "host=h dbname=d");
    CHECK_STR(redact("password=secret host=h"), "host=h");
    CHECK_STR(redact("host=h  password = 'se cr\\'et'   dbname='my db'"),
              "host=h dbname='my db'");
    CHECK_STR(redact("host=h sslpassword=k PassWord=x sslmode=require"),
              "host=h sslmode=require");
    CHECK_STR(redact("host=h password=a\\ b port=1"), "host=h port=1");
    CHECK_STR(redact("host=/run/postgresql dbname=breachd"), "host=/run/postgresql dbname=breachd");
}

TEST(test_uri_redact_hides_what_follows_a_malformed_keyword_part)
{
    CHECK_STR(redact("host=h port=1 password='se cret"), "host=h port=1 ...");
    CHECK_STR(redact("host=h secret dbname=d"), "host=h ...");
    CHECK_STR(redact("dbname=d password 'x'"), "dbname=d ...");
    CHECK_STR(redact("password='x"), "...");
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
    RUN(test_uri_keyword_strings_and_urls_name_postgres);
    RUN(test_conninfo_pairs_are_read_as_libpq_reads_them);
    RUN(test_uri_redact_drops_keyword_string_passwords);
    RUN(test_uri_redact_hides_what_follows_a_malformed_keyword_part);
    return TEST_EXIT();
}
