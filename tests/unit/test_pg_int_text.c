/* Integers in PostgreSQL's text results: read without strtoll up to 18 digits, with it past
 * them, the same value either way. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "store/pg/pg_impl.h"
#include "test.h"

TEST(test_pg_int_text_reads_what_postgresql_prints)
{
    CHECK_INT(pg_int_text("0"), 0);
    CHECK_INT(pg_int_text("7"), 7);
    CHECK_INT(pg_int_text("-7"), -7);
    CHECK_INT(pg_int_text("20240131"), 20240131);
    CHECK_INT(pg_int_text("123456789012345678"), 123456789012345678LL); /* 18 digits */
    CHECK_INT(pg_int_text("-123456789012345678"), -123456789012345678LL);
    CHECK_INT(pg_int_text("1234567890123456789"), 1234567890123456789LL); /* 19: strtoll */
    CHECK_INT(pg_int_text("9223372036854775807"), INT64_MAX);
    CHECK_INT(pg_int_text("-9223372036854775808"), INT64_MIN);
}

TEST(test_pg_int_text_stops_where_the_digits_stop)
{
    CHECK_INT(pg_int_text(""), 0);
    CHECK_INT(pg_int_text("-"), 0);
    CHECK_INT(pg_int_text("12.5"), 12); /* a numeric's whole part, as strtoll gave */
    CHECK_INT(pg_int_text("42abc"), 42);
    CHECK_INT(pg_int_text("99999999999999999999"), INT64_MAX); /* out of range: its end */
    CHECK_INT(pg_int_text("-99999999999999999999"), INT64_MIN);
}

TEST(test_pg_int_text_equals_strtoll_on_every_length)
{
    char v[32];
    int64_t x = 1;
    for (int digits = 1; digits <= 18; digits++, x = x * 10 + digits % 10) {
        snprintf(v, sizeof v, "%lld", (long long)x);
        CHECK_INT(pg_int_text(v), strtoll(v, NULL, 10));
        snprintf(v, sizeof v, "%lld", -(long long)x);
        CHECK_INT(pg_int_text(v), strtoll(v, NULL, 10));
    }
}

int main(void)
{
    RUN(test_pg_int_text_reads_what_postgresql_prints);
    RUN(test_pg_int_text_stops_where_the_digits_stop);
    RUN(test_pg_int_text_equals_strtoll_on_every_length);
    return TEST_EXIT();
}
