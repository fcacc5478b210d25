/* Splitting migrations into statements for a Citus coordinator: a semicolon ends a
 * statement only outside quotes, dollar quotes and comments. */
#include <stdio.h>
#include <string.h>

#include "store/pg/sql_split.h"
#include "test.h"

/* The statements of sql, each between [ and ]. */
static const char *split(const char *sql)
{
    static char out[1024];
    out[0] = '\0';
    for (const char *p = sql; *p;) {
        const char *next;
        size_t n = pg_sql_first_statement(p, &next);
        size_t used = strlen(out);
        snprintf(out + used, sizeof out - used, "[%.*s]", (int)n, p);
        p = next;
    }
    return out;
}

TEST(test_pg_sql_split_at_semicolons_outside_quotes)
{
    CHECK_STR(split("CREATE TABLE a(x int);CREATE INDEX b ON a(x)"),
              "[CREATE TABLE a(x int)][CREATE INDEX b ON a(x)]");
    CHECK_STR(split("SELECT 1;"), "[SELECT 1]");
    CHECK_STR(split(""), "");
    CHECK_STR(split("UPDATE t SET v = 'a;b' WHERE k = 'it''s;';SELECT 2"),
              "[UPDATE t SET v = 'a;b' WHERE k = 'it''s;'][SELECT 2]");
    CHECK_STR(split("SELECT \"odd;name\" FROM \"q\"\"x;\";SELECT 3"),
              "[SELECT \"odd;name\" FROM \"q\"\"x;\"][SELECT 3]");
}

TEST(test_pg_sql_split_skips_comments_and_dollar_quotes)
{
    CHECK_STR(split("SELECT 1 -- not; here\n;SELECT 2 /* nor; here */;x"),
              "[SELECT 1 -- not; here\n][SELECT 2 /* nor; here */][x]");
    CHECK_STR(split("DO $$BEGIN PERFORM 1; END$$;SELECT $1;DO $f$ a;b $f$"),
              "[DO $$BEGIN PERFORM 1; END$$][SELECT $1][DO $f$ a;b $f$]");
}

TEST(test_pg_sql_split_ends_at_an_unclosed_quote)
{
    CHECK_STR(split("SELECT 'a;b"), "[SELECT 'a;b]");
    CHECK_STR(split("SELECT 1 /* a;b"), "[SELECT 1 /* a;b]");
    CHECK_STR(split("SELECT $q$ a;b"), "[SELECT $q$ a;b]");
}

int main(void)
{
    RUN(test_pg_sql_split_at_semicolons_outside_quotes);
    RUN(test_pg_sql_split_skips_comments_and_dollar_quotes);
    RUN(test_pg_sql_split_ends_at_an_unclosed_quote);
    return TEST_EXIT();
}
